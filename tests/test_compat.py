"""learned_metrics.compat: every private library name the package uses works with the installed versions, and
its disappearance is one line naming the library, its version and the missing name."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import torch
from torch import nn

from learned_metrics import compat
from learned_metrics.errors import UserError
from learned_metrics.train.logs import position
from learned_metrics.train.sampler import LengthGroupedBatchSampler

SRC = Path(__file__).resolve().parents[1] / "src" / "learned_metrics"


def _fit_boring_model(callbacks: list, max_steps: int, progress_bar: bool = False):
    from lightning.pytorch import Trainer
    from lightning.pytorch.demos.boring_classes import BoringModel

    trainer = Trainer(max_steps=max_steps, limit_val_batches=0, logger=False, enable_checkpointing=False,
                      enable_model_summary=False, enable_progress_bar=progress_bar, callbacks=callbacks,
                      accelerator="cpu", devices=1)
    trainer.fit(BoringModel())
    return trainer


def _bare_trainer():
    from lightning.pytorch import Trainer

    return Trainer(logger=False, enable_checkpointing=False, enable_model_summary=False, enable_progress_bar=False,
                   accelerator="cpu", devices=1)


# --- (a) every accessor works with the installed versions ----------------------------------------


def test_attention_functions_is_the_registry_transformers_reads():
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    mapping = compat.attention_functions()
    assert callable(mapping["sdpa"]) and ALL_ATTENTION_FUNCTIONS["sdpa"] is mapping["sdpa"]
    original = mapping["sdpa"]
    try:  # what MC dropout does: a swap in the mapping is what the models call
        mapping["sdpa"] = marker = lambda *a, **k: None  # noqa: E731
        assert ALL_ATTENTION_FUNCTIONS["sdpa"] is marker
    finally:
        mapping["sdpa"] = original


def test_stateful_norm_types_cover_batch_and_instance_norm_only():
    norms = compat.stateful_norm_types()
    assert isinstance(nn.BatchNorm1d(4), norms) and isinstance(nn.InstanceNorm1d(4), norms)
    assert not isinstance(nn.LayerNorm(4), norms) and not isinstance(nn.Dropout(), norms)


def test_batches_done_this_epoch_counts_training_batches():
    from lightning.pytorch import Callback

    class Record(Callback):
        def __init__(self):
            self.seen: list[int] = []

        def on_train_batch_end(self, trainer, *args) -> None:
            self.seen.append(compat.batches_done_this_epoch(trainer))

    record = Record()
    _fit_boring_model([record], max_steps=3)
    assert record.seen == [1, 2, 3]


def test_rich_progress_bar_describes_the_run_truthfully():
    from lightning.pytorch.callbacks import RichProgressBar

    bar = compat.rich_progress_bar(describe=position)
    assert isinstance(bar, RichProgressBar)
    trainer = _fit_boring_model([bar], max_steps=2, progress_bar=True)
    assert bar._get_train_description(trainer.current_epoch) == position(trainer) == "step 2/2"


def test_sampler_epoch_forwarder_reaches_the_batch_sampler_through_lightning():
    from lightning.fabric.utilities.data import _set_sampler_epoch

    sampler = LengthGroupedBatchSampler([5, 9, 3, 7] * 8, batch_size=4, seed=0)
    loader = torch.utils.data.DataLoader(list(range(32)), batch_sampler=sampler)
    _set_sampler_epoch(loader, 3)
    assert sampler.epoch == 3
    compat.sampler_epoch_forwarder(sampler).set_epoch(5)
    assert sampler.epoch == 5


def test_compat_imports_without_torch():
    code = "import sys, learned_metrics.compat; assert 'torch' not in sys.modules, 'torch imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_no_private_library_name_outside_compat():
    """Structural guard: the private names compat isolates are not reached around it."""
    pattern = re.compile(r"_global_mapping|_NormBase|\.fit_loop\b|_get_train_description|_set_sampler_epoch"
                         r"|from (lightning|transformers|torch)[\w.]*\._\w+ import|from (lightning|transformers|torch)"
                         r"[\w.]* import _[a-zA-Z]")
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if p.name != "compat.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


# --- (b) a disappeared name is one line: library, installed version, missing name ----------------


def _assert_names(error: compat.LibraryChanged, library: str, name: str) -> None:
    message = str(error)
    assert isinstance(error, UserError) and "\n" not in message
    assert f"{library} {version(library)}" in message and name in message, message


def test_missing_attention_registry(monkeypatch):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    for cls in type(ALL_ATTENTION_FUNCTIONS).__mro__:  # the registry and its base class both define it
        if "_global_mapping" in vars(cls):
            monkeypatch.delattr(cls, "_global_mapping")
    with pytest.raises(compat.LibraryChanged) as caught:
        compat.attention_functions()
    _assert_names(caught.value, "transformers", "transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS._global_mapping")


def test_missing_norm_base(monkeypatch):
    monkeypatch.delattr(torch.nn.modules.batchnorm, "_NormBase")
    with pytest.raises(compat.LibraryChanged) as caught:
        compat.stateful_norm_types()
    _assert_names(caught.value, "torch", "torch.nn.modules.batchnorm._NormBase")


def test_missing_batch_progress(monkeypatch):
    trainer = _bare_trainer()
    monkeypatch.delattr(trainer.fit_loop.epoch_loop, "batch_progress")
    with pytest.raises(compat.LibraryChanged) as caught:
        compat.batches_done_this_epoch(trainer)
    _assert_names(caught.value, "lightning", "Trainer.fit_loop.epoch_loop.batch_progress.current.processed")


def test_missing_rich_train_description(monkeypatch):
    from lightning.pytorch.callbacks import RichProgressBar

    monkeypatch.delattr(RichProgressBar, "_get_train_description")
    with pytest.raises(compat.LibraryChanged) as caught:
        compat.rich_progress_bar(describe=position)
    _assert_names(caught.value, "lightning", "lightning.pytorch.callbacks.RichProgressBar._get_train_description")


def test_missing_set_sampler_epoch(monkeypatch):
    import lightning.fabric.utilities.data as lightning_data

    monkeypatch.delattr(lightning_data, "_set_sampler_epoch")
    with pytest.raises(compat.LibraryChanged) as caught:
        LengthGroupedBatchSampler([1, 2, 3], batch_size=2)
    _assert_names(caught.value, "lightning", "lightning.fabric.utilities.data._set_sampler_epoch")
