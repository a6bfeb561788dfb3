"""Scoring with learned metrics: the Python API behind ``learned-metrics score``.

``load_scorer`` loads an export (or a plain transformers NLI folder, or a Hub
id); ``Scorer.score`` returns a :class:`ScoreResult` in input order. Batching,
MC dropout, premise chunking and device/precision handling live in the
submodules of this package.
"""

from learned_metrics.scoring.scorer import Scorer, ScoreResult, TruncationWarning, load_scorer

__all__ = ["load_scorer", "Scorer", "ScoreResult", "TruncationWarning"]
