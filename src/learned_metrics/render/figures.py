"""Figures for papers: bias matrix, score histograms by label, shuffle accuracy by length gap.

matplotlib runs on the non-interactive Agg backend (no display on servers
and CI) and is imported only when a plot is asked for. Every ``plot_*``
writes .png, .pdf or .svg by the file's suffix (checked before drawing);
files are written through a temporary file and renamed, so a failed plot
leaves nothing behind. ``*_figure`` functions return the matplotlib figure
instead, for notebooks.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.outputs import atomic_file

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_plot_path(path: str | Path) -> Path:
    """Fail before any work when the plot file type is not one matplotlib writes here."""
    path = Path(path)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise UserError(
            f"unsupported plot type '{path.suffix or '(none)'}', expected one of: {', '.join(PLOT_SUFFIXES)}", path=path
        )
    return path


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path) -> Path:
    path = check_plot_path(path)
    plt = _pyplot()
    import matplotlib

    try:
        # TrueType (42) instead of Type 3 fonts in PDF/PS: what conference checks (ACL, IEEE PDF eXpress) require
        with atomic_file(path) as tmp, matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
            fig.savefig(tmp, format=path.suffix.lower().lstrip("."), dpi=150, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def plot_bias_matrix(matrix: Any, path: str | Path, title: str | None = None) -> Path:
    """Circles per cell: area proportional to the pair count, colour = tau+/tau- on a diverging scale."""
    check_plot_path(path)
    plt = _pyplot()
    n = len(matrix.systems)
    size = max(4.0, 0.45 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    rows, cols = np.nonzero(~np.isnan(matrix.tau))
    counts = matrix.pairs[rows, cols].astype(float)
    biggest = counts.max() if counts.size else 1.0
    # Largest circle about one cell wide: area ~ (points per cell)**2.
    cell_points = 72 * size * 0.8 / max(n, 1)
    areas = (cell_points**2) * counts / biggest
    points = ax.scatter(
        cols, rows, s=areas, c=matrix.tau[rows, cols], cmap="RdBu", vmin=-1, vmax=1, edgecolors="0.3", linewidths=0.5
    )
    ax.set_xticks(range(n), matrix.systems, rotation=90)
    ax.set_yticks(range(n), matrix.systems)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.grid(True, color="0.92", linewidth=0.5)
    ax.set_axisbelow(True)
    ax.set_xlabel("system (ordered by mean human score, best first)")
    ax.set_ylabel("system preferred by the humans")
    bar = fig.colorbar(points, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label("2·acc − 1  (upper: tau+, lower: tau−)")
    ax.set_title(title or f"Bias matrix (circle area = pairs, max {int(biggest)})")
    return _save(fig, path)


def _rows_of_each_group(groups: list[str]) -> list[tuple[str, np.ndarray]]:
    """(group name, row mask) in order of first appearance."""
    groups_arr = np.asarray(groups)
    return [(name, groups_arr == name) for name in dict.fromkeys(groups)]


def _grid_shape(panels: int) -> tuple[int, int]:
    """(rows, columns) for ``panels`` panels: up to 3 in one row, else a near-square grid at most 4 wide."""
    columns = panels if panels <= 3 else min(4, math.ceil(math.sqrt(panels)))
    return math.ceil(panels / columns), columns


def score_histogram_figure(
    scores: np.ndarray,
    labels: np.ndarray,
    groups: list[str],
    aucs: dict[str, float | None] | None = None,
) -> Any:
    """The figure of :func:`plot_score_histograms`, returned for notebooks (``fig.savefig``) and inspection.

    Densities, not counts: TRUE corpora are very unbalanced, and counts would hide the smaller class. One bin
    grid and x-range for every panel, so panels compare at a glance; exactly one panel per group.
    """
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    panels = _rows_of_each_group(groups)
    n_rows, columns = _grid_shape(len(panels))
    fig, axes = plt.subplots(n_rows, columns, figsize=(4.2 * columns, 3.0 * n_rows), squeeze=False)
    bins = np.histogram_bin_edges(scores, bins=20)
    for ax, (name, in_group) in zip(axes.ravel(), panels, strict=False):
        for label, what, colour in ((1, "faithful", "tab:blue"), (0, "unfaithful", "tab:red")):
            values = scores[in_group & (labels == label)]
            if values.size:
                ax.hist(values, bins=bins, density=True, alpha=0.55, color=colour,
                        label=f"{label} {what} (n={values.size:,})")
        auc = (aucs or {}).get(name)
        ax.set_title(name if auc is None else f"{name}  (AUC {auc:.3f})")
        ax.set_xlim(bins[0], bins[-1])
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlabel("score")
        ax.set_ylabel("density")
        ax.legend(fontsize="small", title="label", title_fontsize="small")
    for ax in axes.ravel()[len(panels) :]:
        fig.delaxes(ax)
    fig.tight_layout()
    return fig


def plot_score_histograms(
    scores: np.ndarray,
    labels: np.ndarray,
    groups: list[str],
    path: str | Path,
    aucs: dict[str, float | None] | None = None,
) -> Path:
    """One panel per group: score densities of label 1 (faithful) vs label 0 (unfaithful), class counts in the
    legend, the same x-range everywhere; written as .png, .pdf or .svg by the suffix of ``path``."""
    check_plot_path(path)
    return _save(score_histogram_figure(scores, labels, groups, aucs), path)


def plot_roc_curves(
    scores: np.ndarray,
    labels: np.ndarray,
    groups: list[str],
    path: str | Path,
    aucs: dict[str, float | None] | None = None,
) -> Path:
    """ROC curve of every group with both labels on one set of axes, AUC in the legend."""
    from learned_metrics.meta_eval.auc import roc_points

    check_plot_path(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5.0))
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="chance")
    for name, in_group in _rows_of_each_group(groups):
        if len(set(labels[in_group].tolist())) < 2:
            continue  # AUC undefined: the table says so
        fpr, tpr = roc_points(scores[in_group], labels[in_group])
        auc = (aucs or {}).get(name)
        ax.plot(fpr, tpr, linewidth=1.5, label=name if auc is None else f"{name} (AUC {auc:.3f})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate (unfaithful rows accepted)")
    ax.set_ylabel("true-positive rate (faithful rows accepted)")
    ax.set_title("ROC curves by group")
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    return _save(fig, path)


def length_gap_figure(report: Any) -> Any:
    """The figure of :func:`plot_length_gap`, returned for notebooks (``fig.savefig``) and inspection.

    Bars are the buckets' bootstrap 95% CIs (pair ids redrawn), so a trend can be told from bucket noise; the
    number of comparisons is written under each point, since the end buckets are often small.
    """
    if report.buckets is None:
        raise UserError("the shuffle-test report has no length-gap buckets (run it with length_gap)")
    plt = _pyplot()
    buckets = [b for b in report.buckets if b.pairs]
    fig, ax = plt.subplots(figsize=(8, 4))
    gaps = np.array([b.gap for b in buckets], dtype=float)
    accuracy = np.array([b.accuracy for b in buckets], dtype=float)
    low = np.array([b.ci[0] if b.ci else a for b, a in zip(buckets, accuracy, strict=True)])
    high = np.array([b.ci[1] if b.ci else a for b, a in zip(buckets, accuracy, strict=True)])
    ax.errorbar(gaps, accuracy, yerr=[accuracy - low, high - accuracy], marker="o", color="tab:blue", capsize=3,
                linewidth=1.2, label="accuracy, 95% bootstrap CI")
    for gap, bucket in zip(gaps, buckets, strict=True):  # in a band below 0, clear of the CI bars
        ax.annotate(f"{bucket.pairs:,}", (gap, -0.07), ha="center", va="center", fontsize=7, color="0.35")
    ax.axhline(0.5, color="0.4", linestyle="--", linewidth=1)
    ax.axhline(0, color="0.8", linewidth=0.8)
    ax.set_ylim(-0.12, 1.04)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlim(-210, 210)
    ax.set_xlabel("length of original − length of shuffled (characters; ends clamped at ±200)")
    ax.set_ylabel("accuracy (original scored higher)")
    ax.plot([], [], " ", label="numbers at the bottom: comparisons per bucket")
    ax.set_title(f"Shuffle test by length gap (overall accuracy {report.accuracy.value:.3f})")
    ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    return fig


def plot_length_gap(report: Any, path: str | Path) -> Path:
    """Shuffle-test accuracy per length-gap bucket with CI bars and counts; .png, .pdf or .svg by suffix."""
    check_plot_path(path)
    return _save(length_gap_figure(report), path)
