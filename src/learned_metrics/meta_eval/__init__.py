"""Meta-evaluation: judge a metric's scores against human judgements.

The Python API mirrors ``learned-metrics meta-eval``; inputs are numpy arrays
(documents x systems, NaN = absent summary) or files via :func:`load_grid`,
results are dataclasses with ``to_json()``::

    from learned_metrics.meta_eval import load_grid, correlations
    grid = load_grid("human.jsonl", ["metric.jsonl"])
    report = correlations(grid.human, grid.metrics["metric"], resamples=1000, seed=0)
    report.stats["tau_pair"].value, report.stats["tau_pair"].ci
"""

from __future__ import annotations

import importlib
from typing import Any

# Exports are loaded on first use: the CLI imports submodules of this package, and eager
# imports of scipy/sklearn/matplotlib here would make every `learned-metrics` call slow.
_EXPORTS = {
    "AucReport": "learned_metrics.meta_eval.auc",
    "BiasMatrix": "learned_metrics.meta_eval.bias",
    "ComparisonReport": "learned_metrics.meta_eval.significance",
    "CorrelationReport": "learned_metrics.meta_eval.correlations",
    "Estimate": "learned_metrics.meta_eval.resampling",
    "GroupAuc": "learned_metrics.meta_eval.auc",
    "KeyFields": "learned_metrics.meta_eval.data",
    "STATISTICS": "learned_metrics.meta_eval.correlations",
    "ScoreGrid": "learned_metrics.meta_eval.data",
    "ShuffleReport": "learned_metrics.meta_eval.shuffle_test",
    "StatResult": "learned_metrics.meta_eval.correlations",
    "auc_by_group": "learned_metrics.meta_eval.auc",
    "bias_matrix": "learned_metrics.meta_eval.bias",
    "bootstrap_distribution": "learned_metrics.meta_eval.correlations",
    "bootstrap_indices": "learned_metrics.meta_eval.resampling",
    "compare": "learned_metrics.meta_eval.significance",
    "correlations": "learned_metrics.meta_eval.correlations",
    "kendall_tau_b": "learned_metrics.meta_eval.kendall",
    "load_grid": "learned_metrics.meta_eval.data",
    "pairs_from_rows": "learned_metrics.meta_eval.shuffle_test",
    "percentile_interval": "learned_metrics.meta_eval.resampling",
    "plot_bias_matrix": "learned_metrics.meta_eval.plots",
    "plot_length_gap": "learned_metrics.meta_eval.plots",
    "plot_score_histograms": "learned_metrics.meta_eval.plots",
    "read_human_scores": "learned_metrics.meta_eval.data",
    "read_labelled_scores": "learned_metrics.meta_eval.data",
    "read_metric_scores": "learned_metrics.meta_eval.data",
    "read_shuffle_rows": "learned_metrics.meta_eval.data",
    "shuffle_test": "learned_metrics.meta_eval.shuffle_test",
    "williams_p": "learned_metrics.meta_eval.significance",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
