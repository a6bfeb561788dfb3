"""Crash-safe checkpoint files: Lightning writes onto the final name, so a run killed during the write left a
truncated ``last.ckpt`` that cannot be resumed; here each file is written beside it and renamed (atomic on POSIX)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import Callback, Trainer
from lightning.pytorch.plugins.io import TorchCheckpointIO

from learned_metrics.outputs import atomic_file


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose files appear complete or not at all."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike, storage_options: Any = None) -> None:
        if storage_options is not None:
            raise TypeError("AtomicCheckpointIO does not take storage_options")
        with atomic_file(path) as tmp, tmp.open("wb") as handle:
            torch.save(checkpoint, handle)
            handle.flush()
            os.fsync(handle.fileno())


class LastCheckpoint(Callback):
    """Keep ``last.ckpt`` fresh: every ``every_n_train_steps`` optimizer steps and at each epoch end (a
    ``ModelCheckpoint`` saves on a step interval *or* per epoch); the monitored ``ModelCheckpoint`` keeps the best."""

    def __init__(self, dirpath: str | os.PathLike, every_n_train_steps: int = 200, filename: str = "last.ckpt"):
        super().__init__()
        self.path = Path(dirpath) / filename
        self.every_n_train_steps = every_n_train_steps
        self._saved_at_step = -1

    def _save(self, trainer: Trainer) -> None:
        if trainer.sanity_checking or trainer.global_step == self._saved_at_step:
            return
        trainer.save_checkpoint(self.path, weights_only=False)  # full state: optimizer, loops, data position
        self._saved_at_step = trainer.global_step

    def on_train_batch_end(self, trainer: Trainer, *args: Any) -> None:
        if self.every_n_train_steps and trainer.global_step > 0 and trainer.global_step % self.every_n_train_steps == 0:
            self._save(trainer)

    def on_train_epoch_end(self, trainer: Trainer, pl_module: Any) -> None:
        self._save(trainer)

    def on_train_end(self, trainer: Trainer, pl_module: Any) -> None:
        self._save(trainer)

    def state_dict(self) -> dict[str, Any]:
        return {"saved_at_step": self._saved_at_step}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._saved_at_step = state_dict.get("saved_at_step", -1)
