"""Every private name and internal API of Lightning, transformers and torch that learned-metrics uses, in one place.

An upgrade that moves one fails here with one line naming the library, its version and the name (LibraryChanged,
checked by ``tests/test_compat.py``). Heavy imports stay inside the accessors: this module imports without torch."""

from __future__ import annotations

import functools
import importlib
import types
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

from learned_metrics.errors import UserError


class LibraryChanged(UserError):
    """An installed library no longer has a private name learned-metrics relies on."""

    def __init__(self, library: str, name: str):
        from importlib.metadata import PackageNotFoundError, version

        try:
            self.version = version(library)
        except PackageNotFoundError:
            self.version = "(version unknown)"
        self.library, self.name = library, name
        super().__init__(f"{library} {self.version} has no {name}, which learned-metrics relies on "
                         f"(learned_metrics/compat.py); install an earlier {library} release or report this")


def _attribute(obj: Any, path: str, library: str, shown: str) -> Any:
    """``obj.a.b.c`` for ``path="a.b.c"``; :class:`LibraryChanged` naming ``shown`` when a part is missing."""
    try:
        return functools.reduce(getattr, path.split("."), obj)
    except AttributeError:
        raise LibraryChanged(library, shown) from None


def _module_attribute(library: str, module: str, path: str) -> Any:
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError:
        if find_spec(library) is None:  # not installed at all: the ordinary ImportError
            raise
        raise LibraryChanged(library, f"{module}.{path}") from None
    return _attribute(imported, path, library, f"{module}.{path}")


def attention_functions() -> dict[str, Callable[..., Any]]:
    """transformers' registry of attention implementations (``"sdpa"`` -> function), the mutable dict itself:
    scoring.mc_dropout swaps ``"sdpa"`` for one drawing cheaper CPU dropout masks and puts it back."""
    return _module_attribute("transformers", "transformers.modeling_utils", "ALL_ATTENTION_FUNCTIONS._global_mapping")


def stateful_norm_types() -> tuple[type, ...]:
    """Layers whose train mode updates running statistics (``_NormBase``): scoring.mc_dropout keeps them in eval."""
    return (_module_attribute("torch", "torch.nn.modules.batchnorm", "_NormBase"),)


BATCH_PROGRESS = "fit_loop.epoch_loop.batch_progress.current.processed"


def batches_done_this_epoch(trainer: Any) -> int:
    """Training batches processed in the current epoch: where a checkpoint resumes (train.datamodule, train.logs)."""
    return int(_attribute(trainer, BATCH_PROGRESS, "lightning", f"Trainer.{BATCH_PROGRESS}"))


def _train_description(bar: Any, describe: Callable[[Any], str], current_epoch: int) -> str:
    """Stands in for ``RichProgressBar._get_train_description`` on one bar (bound with a partial: picklable)."""
    return describe(bar.trainer)


def rich_progress_bar(describe: Callable[[Any], str]) -> Any:
    """Lightning's ``RichProgressBar`` whose training bar reads ``describe(trainer)`` (train.logs): Lightning's
    private text says ``Epoch 0/-2`` for runs bounded by steps. ``describe`` must be module-level (picklable)."""
    from lightning.pytorch.callbacks import RichProgressBar

    name = "_get_train_description"
    _attribute(RichProgressBar, name, "lightning", f"lightning.pytorch.callbacks.RichProgressBar.{name}")
    bar = RichProgressBar()
    setattr(bar, name, functools.partial(_train_description, bar, describe))
    return bar


def sampler_epoch_forwarder(batch_sampler: Any) -> Any:
    """What to set as ``batch_sampler.sampler`` so Lightning's per-epoch ``set_epoch`` reaches ``batch_sampler`` (else
    every epoch repeats epoch 0's order; train.sampler), checked against Lightning's ``_set_sampler_epoch``."""
    if find_spec("lightning") is not None:
        _module_attribute("lightning", "lightning.fabric.utilities.data", "_set_sampler_epoch")
    return types.SimpleNamespace(set_epoch=batch_sampler.set_epoch)  # Lightning never calls the batch sampler's
