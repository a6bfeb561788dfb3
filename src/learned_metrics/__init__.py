"""learned-metrics: train, export, run and judge learned metrics for generated text.

The Python API mirrors the CLI (``learned_metrics.load_scorer(folder).score(texts=[...])``); torch and transformers
are imported lazily so that ``import learned_metrics`` stays cheap for meta-evaluation users."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load_scorer": ("learned_metrics.scoring", "load_scorer"),
    "Scorer": ("learned_metrics.scoring", "Scorer"),
    "export_checkpoint": ("learned_metrics.export", "export_checkpoint"),
    "UserError": ("learned_metrics.errors", "UserError"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'learned_metrics' has no attribute {name!r}")
