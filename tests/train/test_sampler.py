"""Length-grouped batching: every row once per epoch, similar lengths, new order per epoch, resumable."""

from __future__ import annotations

import numpy as np
from lightning.fabric.utilities.data import _set_sampler_epoch
from torch.utils.data import DataLoader

from learned_metrics.train.sampler import LengthGroupedBatchSampler


def _sampler(**kwargs) -> LengthGroupedBatchSampler:
    lengths = np.random.default_rng(0).integers(5, 200, size=1000)
    return LengthGroupedBatchSampler(lengths, batch_size=16, seed=1, mega_batch_factor=8, **kwargs)


def test_each_row_once_and_batches_grouped_by_length():
    sampler = _sampler()
    batches = list(sampler)
    flat = sorted(i for batch in batches for i in batch)
    assert flat == list(range(1000)) and len(batches) == len(sampler) == 63
    spread = np.mean([np.ptp(sampler.lengths[b]) for b in batches])
    random_spread = np.mean([np.ptp(sampler.lengths[b]) for b in np.array_split(np.random.permutation(1000), 63)])
    assert spread < random_spread / 3


def test_lightning_epoch_hook_reaches_the_batch_sampler():
    sampler = _sampler()
    loader = DataLoader(list(range(1000)), batch_sampler=sampler)
    first = list(sampler)
    _set_sampler_epoch(loader, 1)  # what Lightning calls at every epoch start
    assert sampler.epoch == 1 and list(sampler) != first
    _set_sampler_epoch(loader, 0)
    assert list(sampler) == first  # the order depends only on (seed, epoch)


def test_resume_skips_done_batches_for_that_epoch_only():
    sampler = _sampler()
    full = list(sampler)
    sampler.resume(epoch=0, batches_done=10)
    assert list(sampler) == full[10:] and list(sampler) == full[10:]  # every iterator of the epoch
    sampler.set_epoch(1)
    assert len(list(sampler)) == len(full)


def test_evaluation_order_is_sorted_and_complete():
    sampler = _sampler(shuffle=False)
    flat = [i for batch in sampler for i in batch]
    assert sorted(flat) == list(range(1000))
    assert list(sampler.lengths[flat]) == sorted(sampler.lengths, reverse=True)


def test_training_epochs_start_with_their_longest_batch():
    """Peak memory at step 1: resident memory stays flat for the rest of the epoch, and OOM shows at once."""
    sampler = _sampler()
    for epoch in range(3):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert max(sampler.lengths[batches[0]]) == sampler.lengths.max()
        assert sorted(i for b in batches for i in b) == list(range(1000))
