"""Meta-evaluation: judge a metric's scores against human judgements. The Python API mirrors ``learned-metrics
meta-eval``: arrays (documents x systems, NaN = absent) or files via :func:`load_grid` in, dataclasses with
``to_json()`` out (docs/meta_eval.md). Names load on first use (PEP 562): a command's ``--help`` loads no numpy."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

# public name -> the module that defines it, declared once (``__all__`` and ``__getattr__`` read it)
_EXPORTS = {
    **dict.fromkeys(("AucReport", "GroupAuc", "auc_by_group", "roc_points"), "auc"),
    **dict.fromkeys(("BenchmarkReport", "benchmark", "evaluate_benchmark", "tune_threshold"), "benchmark"),
    "read_benchmark": "benchmarks_io",
    **dict.fromkeys(("BiasMatrix", "bias_matrix"), "bias"),
    **dict.fromkeys(("ConfounderReport", "confounders", "read_confounder_rows"), "confounders"),
    **dict.fromkeys(("CorrelationReport", "StatResult", "bootstrap_distribution", "correlations"), "correlations"),
    **dict.fromkeys(("KeyFields", "ScoreGrid", "load_grid", "read_human_scores", "read_labelled_scores",
                     "read_metric_scores", "read_scored_corpora", "read_shuffle_rows", "true_corpus"), "data"),
    "kendall_tau_b": "coefficients",
    "STATISTICS": "options",
    **dict.fromkeys(("Estimate", "bootstrap_indices", "percentile_interval"), "resampling"),
    **dict.fromkeys(("ShuffleReport", "pairs_from_rows", "shuffle_test"), "shuffle_test"),
    **dict.fromkeys(("ComparisonReport", "compare", "williams_p"), "significance"),
    **dict.fromkeys(("SystemComparison", "SystemScores", "compare_systems", "read_system_scores"), "systems"),
    **dict.fromkeys(("plot_bias_matrix", "plot_length_gap", "plot_roc_curves", "plot_score_histograms",
                     "bias_matrix_figure", "length_gap_figure", "roc_figure", "score_histogram_figure"),
                    "learned_metrics.render.figures"),
}

__all__ = sorted(_EXPORTS, key=lambda name: (not name.isupper(), not name[0].isupper(), name))


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _EXPORTS[name]
    value = getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
    globals()[name] = value  # found once; later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """Four functions share their module's name (``correlations``, ``benchmark``, ``confounders``,
    ``shuffle_test``). Importing such a submodule sets it as an attribute of this package; the function keeps
    the name instead, as when this file imported everything at once."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
