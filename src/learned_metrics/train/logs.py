"""Training output a person can read. Lightning's console handler doubled the lines Hydra writes (:func:`tidy_logging`);
its bar printed "Epoch 1/-2" for step-bounded runs and redraws badly in a log file (:func:`progress_bar`); its model
summary has an always-zero FLOPs column (:class:`ParameterSummary`)."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import warnings
from typing import Any

from lightning.pytorch import Callback
from lightning.pytorch.callbacks.progress import ProgressBar

from learned_metrics import compat
from learned_metrics.progress import human_duration, human_rate

log = logging.getLogger("learned_metrics.train")
NOISE = ("💡 Tip", "Loading `train_dataloader` to estimate number of stepping batches",
         "Trainer already configured with model summary callbacks",
         "was configured so validation will run at the end of the training epoch")


def _not_noise(record: logging.LogRecord) -> bool:
    return not any(fragment in record.getMessage() for fragment in NOISE)


def tidy_logging() -> None:
    """One console line per record (Hydra's handler), no Lightning tips, no progress bars in log files; idempotent."""
    lightning_logger = logging.getLogger("lightning")
    for handler in list(lightning_logger.handlers):
        if type(handler) is logging.StreamHandler:
            lightning_logger.removeHandler(handler)
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "lightning.pytorch.utilities.rank_zero"):
        logging.getLogger(name).addFilter(_not_noise)  # added once: addFilter skips a filter already there
    warnings.filterwarnings("ignore", message=".*LeafSpec.*is deprecated")  # inside Lightning, not ours
    if not sys.stderr.isatty():  # a bar redrawn a hundred times is a hundred lines in a log file
        from datasets.utils import logging as datasets_logging
        from transformers.utils import logging as transformers_logging

        datasets_logging.disable_progress_bar()
        transformers_logging.disable_progress_bar()


def position(trainer: Any) -> str:
    """``epoch 2/6`` (1-based) or, for runs bounded by steps, ``step 1200/2000``."""
    if trainer.max_steps and trainer.max_steps > 0:
        return f"step {trainer.global_step}/{trainer.max_steps}"
    epochs = trainer.max_epochs if trainer.max_epochs and trainer.max_epochs > 0 else "?"
    return f"epoch {trainer.current_epoch + 1}/{epochs}"


class LineProgress(ProgressBar):
    """Progress for logs: a plain line every ``every_seconds`` (and after each validation), never a bar."""

    def __init__(self, every_seconds: float = 30.0):
        super().__init__()
        self.every_seconds = every_seconds
        self._enabled = True
        self._started = self._last = 0.0
        self._rows = 0

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self._started = self._last = time.monotonic()
        self._rows = 0

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        with contextlib.suppress(KeyError, TypeError, AttributeError):
            self._rows += int(batch["labels"].shape[0])  # a dict-like BatchEncoding
        now = time.monotonic()
        if self._enabled and trainer.is_global_zero and now - self._last >= self.every_seconds:
            self._last, elapsed = now, now - self._started
            loss = trainer.callback_metrics.get("train/loss")
            done, total = self._fraction(trainer)
            parts = [position(trainer), f"loss {float(loss):.4f}" if loss is not None else "",
                     human_rate(self._rows, elapsed),
                     f"ETA {human_duration(elapsed * (total - done) / max(done, 1e-9))}" if total else "",
                     f"elapsed {human_duration(elapsed)}"]
            log.info(" · ".join(part for part in parts if part))

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if not self._enabled or not trainer.is_global_zero or trainer.sanity_checking or trainer.state.fn != "fit":
            return
        shown = ", ".join(f"{k} {float(v):.4f}" for k, v in sorted(trainer.callback_metrics.items())
                          if k.startswith("val/"))
        log.info(f"validation at {position(trainer)}: {shown}")  # console and train.log alike

    @staticmethod
    def _fraction(trainer: Any) -> tuple[float, float]:
        """Work done and total, in optimizer steps (step-bounded runs) or training batches."""
        if trainer.max_steps and trainer.max_steps > 0:
            return float(trainer.global_step), float(trainer.max_steps)
        per_epoch = trainer.num_training_batches
        if not trainer.max_epochs or trainer.max_epochs < 0 or per_epoch in (None, float("inf")):
            return 0.0, 0.0
        done = trainer.current_epoch * per_epoch + compat.batches_done_this_epoch(trainer)
        return float(done), float(trainer.max_epochs * per_epoch)


def progress_bar(enabled: bool = True, every_seconds: float = 30.0) -> ProgressBar | None:
    """A rich bar in a terminal (see :func:`position`), :class:`LineProgress` in a file or pipe; None when disabled."""
    if not enabled:
        return None
    return compat.rich_progress_bar(describe=position) if sys.stdout.isatty() else LineProgress(every_seconds)


class ParameterSummary(Callback):
    """One line about the model when fitting starts: architecture, parameters (trainable), size."""

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if not trainer.is_global_zero:
            return
        model = getattr(pl_module, "model", pl_module)
        total = sum(p.numel() for p in model.parameters())
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        size = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
        log.info(f"model: {type(model).__name__}, {_count(total)} parameters ({_count(trainable)} trainable), "
                 f"{size:,.1f} MiB")


def _count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return str(n)
