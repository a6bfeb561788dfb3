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

from learned_metrics.meta_eval.auc import AucReport, GroupAuc, auc_by_group, roc_points
from learned_metrics.meta_eval.benchmark import BenchmarkReport, benchmark, evaluate_benchmark, tune_threshold
from learned_metrics.meta_eval.benchmarks_io import read_benchmark
from learned_metrics.meta_eval.bias import BiasMatrix, bias_matrix
from learned_metrics.meta_eval.confounders import ConfounderReport, confounders, read_confounder_rows
from learned_metrics.meta_eval.correlations import (
    CorrelationReport,
    StatResult,
    bootstrap_distribution,
    correlations,
)
from learned_metrics.meta_eval.data import (
    KeyFields,
    ScoreGrid,
    load_grid,
    read_human_scores,
    read_labelled_scores,
    read_metric_scores,
    read_scored_corpora,
    read_shuffle_rows,
    true_corpus,
)
from learned_metrics.meta_eval.kendall import kendall_tau_b
from learned_metrics.meta_eval.options import STATISTICS
from learned_metrics.meta_eval.resampling import Estimate, bootstrap_indices, percentile_interval
from learned_metrics.meta_eval.shuffle_test import ShuffleReport, pairs_from_rows, shuffle_test
from learned_metrics.meta_eval.significance import ComparisonReport, compare, williams_p
from learned_metrics.meta_eval.systems import SystemComparison, SystemScores, compare_systems, read_system_scores
from learned_metrics.render.figures import plot_bias_matrix, plot_length_gap, plot_roc_curves, plot_score_histograms

__all__ = [
    "STATISTICS",
    "AucReport",
    "BenchmarkReport",
    "BiasMatrix",
    "ComparisonReport",
    "ConfounderReport",
    "CorrelationReport",
    "Estimate",
    "GroupAuc",
    "KeyFields",
    "ScoreGrid",
    "ShuffleReport",
    "StatResult",
    "SystemComparison",
    "SystemScores",
    "auc_by_group",
    "benchmark",
    "bias_matrix",
    "bootstrap_distribution",
    "bootstrap_indices",
    "compare",
    "compare_systems",
    "confounders",
    "correlations",
    "evaluate_benchmark",
    "kendall_tau_b",
    "load_grid",
    "pairs_from_rows",
    "percentile_interval",
    "plot_bias_matrix",
    "plot_length_gap",
    "plot_roc_curves",
    "plot_score_histograms",
    "read_benchmark",
    "read_confounder_rows",
    "read_human_scores",
    "read_labelled_scores",
    "read_metric_scores",
    "read_scored_corpora",
    "read_shuffle_rows",
    "read_system_scores",
    "roc_points",
    "shuffle_test",
    "true_corpus",
    "tune_threshold",
    "williams_p",
]
