"""Flat host memory across a long epoch: hand freed heap memory back to the OS every few steps.

Batches of different shapes (dynamic padding) allocate and free tensors of ever different
sizes; glibc keeps freed chunks in its heap and, as fragmentation grows, resident memory
drifts upward for the whole epoch although the live working set does not (measured on
MiniLM: +45% over 150 steps, see bench/README.md "Training"). ``malloc_trim(0)`` every
``every_n_steps`` optimizer steps returns those pages; at 50 steps its cost is within
noise. Where glibc is absent (macOS, musl) the callback does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

from lightning.pytorch import Callback


def _glibc_malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


class ReleaseFreedMemory(Callback):
    """Calls ``malloc_trim(0)`` every ``every_n_steps`` optimizer steps (and after each validation)."""

    def __init__(self, every_n_steps: int = 50):
        self.every_n_steps = every_n_steps
        self._trim = _glibc_malloc_trim()

    def _release(self) -> None:
        if self._trim is not None:
            self._trim(0)

    def on_train_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
        if self.every_n_steps and trainer.global_step % self.every_n_steps == 0:
            self._release()

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        self._release()
