"""Scoring with learned metrics, the Python API behind ``learned-metrics score``: ``load_scorer`` loads an export (or
a plain transformers NLI folder, or a Hub id); ``Scorer.score`` returns a :class:`ScoreResult` in input order. Names
are loaded lazily so that the CLI's ``--help`` does not import torch."""

from __future__ import annotations

from typing import Any

__all__ = ["load_scorer", "Scorer", "ScoreResult", "TruncationWarning"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from learned_metrics.scoring import scorer

        return getattr(scorer, name)
    raise AttributeError(f"module 'learned_metrics.scoring' has no attribute {name!r}")
