"""Crash-safe checkpoint files: Lightning writes onto the final name, so a run killed during the write left a
truncated ``last.ckpt`` that cannot be resumed; here each file is written beside it and renamed (atomic on POSIX).
A run resumed into a new folder keeps the best checkpoint of the interrupted run as its best so far."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import Checkpoint, ModelCheckpoint
from lightning.pytorch.plugins.io import TorchCheckpointIO

from learned_metrics.outputs import atomic_file

log = logging.getLogger(__name__)


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose files appear complete or not at all."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike, storage_options: Any = None) -> None:
        if storage_options is not None:
            raise TypeError("AtomicCheckpointIO does not take storage_options")
        with atomic_file(path) as tmp, tmp.open("wb") as handle:
            torch.save(checkpoint, handle)
            handle.flush()
            os.fsync(handle.fileno())


class BestCheckpoint(ModelCheckpoint):
    """``ModelCheckpoint`` that resumes its best score in a new folder too. Lightning forgets the best scores when the
    folder changes (it keeps the path alone), so the first validation after the resume became the best and was
    exported even when the interrupted run had saved a better checkpoint. The files of the interrupted run that are
    still there stay the ones to beat; they are never deleted here (Lightning removes files of its own folder only)."""

    @property
    def state_key(self) -> str:
        """ModelCheckpoint's key: a checkpoint written with a plain ModelCheckpoint (before this class) resumes with
        its best checkpoints, and one written here resumes under a plain ModelCheckpoint."""
        return super().state_key.replace(type(self).__qualname__, ModelCheckpoint.__qualname__, 1)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = self._moved_with_its_folder(state_dict)
        with warnings.catch_warnings():  # Lightning's "won't be reloaded": untrue here, the lines below say what is
            warnings.filterwarnings("ignore", message="The dirpath has changed")
            super().load_state_dict(state_dict)
        if state_dict.get("dirpath", self.dirpath) == self.dirpath:  # resumed in place: Lightning restored it all
            return
        here = Path(self.dirpath or ".").resolve()  # Lightning deletes replaced files inside its folder: none of those
        kept = {path: score for path, score in state_dict.get("best_k_models", {}).items()
                if Path(path).is_file() and here not in Path(path).resolve().parents}
        if kept:  # best first, the next to be replaced last
            ranked = sorted(kept, key=lambda path: float(kept[path]) if self.mode == "min" else -float(kept[path]))
            self.best_k_models = kept
            self.best_model_path, self.kth_best_model_path = ranked[0], ranked[-1]
            self.best_model_score, self.kth_value = kept[ranked[0]], kept[ranked[-1]]
            log.info("resumed into a new folder: the interrupted run's best checkpoint (%s = %.4g, %s) is the one to "
                     "beat", self.monitor, float(self.best_model_score), self.best_model_path)
        elif state_dict.get("best_k_models"):
            log.warning("resumed into a new folder, and no best checkpoint of the interrupted run is still there: the "
                        "best is chosen among this run's checkpoints")


    def _moved_with_its_folder(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        """A run folder moved or copied with its checkpoints and resumed there is resumed in place: every best file
        the checkpoint records is in this folder under its name (the state holds the old folder's absolute paths,
        so its own best file was passed over, or the old folder's taken)."""
        if state_dict.get("dirpath", self.dirpath) == self.dirpath or not self.dirpath:
            return state_dict
        here = Path(self.dirpath)
        moved = {path: here / Path(path).name for path in state_dict.get("best_k_models", {})}
        if not moved or not all(path.is_file() for path in moved.values()):
            return state_dict
        relocate = {old: str(new) for old, new in moved.items()}
        log.info("resumed in %s, a copy of the run folder %s: its best checkpoints are the ones here", here,
                 state_dict["dirpath"])
        return {**state_dict, "dirpath": self.dirpath,
                "best_k_models": {relocate[path]: score for path, score in state_dict["best_k_models"].items()},
                **{key: relocate.get(state_dict.get(key), state_dict.get(key))
                   for key in ("best_model_path", "kth_best_model_path")}}


class LastCheckpoint(Checkpoint):
    """Keep ``last.ckpt`` fresh: every ``every_n_train_steps`` optimizer steps and at each epoch end (a
    ``ModelCheckpoint`` saves on a step interval *or* per epoch); the monitored ``ModelCheckpoint`` keeps the best.
    A ``Checkpoint`` that the run puts after the others, so the file holds their state of the same step: a validation
    that follows a save at that step (a new best) writes it again, as does every epoch end."""

    def __init__(self, dirpath: str | os.PathLike, every_n_train_steps: int = 200, filename: str = "last.ckpt"):
        super().__init__()
        self.path = Path(dirpath) / filename
        self.every_n_train_steps = every_n_train_steps
        self._saved_at_step = -1

    def _save(self, trainer: Trainer, again: bool = False) -> None:
        if trainer.sanity_checking or (trainer.global_step == self._saved_at_step and not again):
            return
        trainer.save_checkpoint(self.path, weights_only=False)  # full state: optimizer, loops, data position
        self._saved_at_step = trainer.global_step

    def on_train_batch_end(self, trainer: Trainer, *args: Any) -> None:
        if self.every_n_train_steps and trainer.global_step > 0 and trainer.global_step % self.every_n_train_steps == 0:
            self._save(trainer)

    def on_validation_end(self, trainer: Trainer, pl_module: Any) -> None:
        if trainer.state.fn == "fit" and trainer.global_step == self._saved_at_step:  # not a validate() after fit
            self._save(trainer, again=True)

    def on_train_epoch_end(self, trainer: Trainer, pl_module: Any) -> None:
        self._save(trainer, again=True)

    def on_train_end(self, trainer: Trainer, pl_module: Any) -> None:
        self._save(trainer)

    def state_dict(self) -> dict[str, Any]:
        return {"saved_at_step": self._saved_at_step}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._saved_at_step = state_dict.get("saved_at_step", -1)
