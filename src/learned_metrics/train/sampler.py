"""Length-grouped batching: dynamic padding pads little (padding ~60-token summaries to 512 wasted ~8x compute).
Indices sorted by length inside shuffled "mega-batches"; the longest batch (one per rank) first, so an out-of-memory
error shows at step 1. The order depends only on (seed, epoch), so a resumed run sees the same batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from torch.utils.data import Sampler

from learned_metrics import compat


def _distributed_rank_and_world() -> tuple[int, int]:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


class LengthGroupedBatchSampler(Sampler[list[int]]):
    """Yield lists of indices with similar lengths; seeded, epoch-aware, DDP-aware."""

    def __init__(self, lengths: Sequence[int], batch_size: int, shuffle: bool = True, seed: int = 0,
                 mega_batch_factor: int = 50, drop_last: bool = False):
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.mega_batch_factor = mega_batch_factor
        self.drop_last = drop_last
        self.epoch = 0
        self._resume_at: tuple[int, int] | None = None
        self.sampler = compat.sampler_epoch_forwarder(self)  # Lightning calls set_epoch on batch_sampler.sampler

    def resume(self, epoch: int, batches_done: int) -> None:
        """Skip the ``batches_done`` batches of ``epoch`` already trained before a crash."""
        self.epoch = epoch
        self._resume_at = (epoch, batches_done)

    def set_epoch(self, epoch: int) -> None:
        """Called by Lightning at each epoch start: a new, reproducible order per epoch."""
        self.epoch = epoch
        if self._resume_at is not None and self._resume_at[0] != epoch:
            self._resume_at = None

    def _all_batches(self, world: int = 1) -> list[np.ndarray]:
        n = len(self.lengths)
        if not self.shuffle:  # evaluation: globally sorted, longest first (OOM shows up at once)
            order = np.argsort(-self.lengths, kind="stable")
            return [order[i : i + self.batch_size] for i in range(0, n, self.batch_size)]
        rng = np.random.default_rng([self.seed, self.epoch])
        perm = rng.permutation(n)
        mega = self.batch_size * self.mega_batch_factor
        batches = []
        for start in range(0, n, mega):
            chunk = perm[start : start + mega]
            chunk = chunk[np.argsort(-self.lengths[chunk], kind="stable")]
            batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()
        batches = [batches[i] for i in rng.permutation(len(batches))]
        longest = sorted(range(len(batches)), key=lambda i: -int(self.lengths[batches[i]].max()))[:world]
        return [batches[i] for i in longest] + [b for i, b in enumerate(batches) if i not in set(longest)]

    def __iter__(self) -> Iterator[list[int]]:
        rank, world = _distributed_rank_and_world()
        batches = self._all_batches(world)
        # every rank must run the same number of steps: pad by repeating from the start (one rank: nothing to pad)
        per_rank = -(-len(batches) // world)
        batches = (batches + batches[: per_rank * world - len(batches)])[rank::world]
        # Lightning may create the iterator more than once on restart: skip on every one of this epoch
        if self._resume_at is not None and self._resume_at[0] == self.epoch:
            batches = batches[self._resume_at[1] :]
        for batch in batches:
            yield batch.tolist()

    def __len__(self) -> int:  # full epoch length: Lightning counts resumed batches itself
        _, world = _distributed_rank_and_world()
        n_batches = len(self.lengths) // self.batch_size if self.drop_last else -(-len(self.lengths) // self.batch_size)
        return -(-n_batches // world)
