"""Figures for papers: bias matrix, score histograms by label, ROC curves, shuffle accuracy by length gap. matplotlib
(Agg) is imported only when a plot is asked for; ``plot_*`` write .png, .pdf or .svg by suffix, checked before drawing,
through a temporary file; ``*_figure`` return the figure, for notebooks. Names are drawn literally, never as mathtext.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import shown_text
from learned_metrics.meta_eval.length_gap import BUCKET_LIMIT, BUCKET_WIDTH
from learned_metrics.meta_eval.roc import roc_points
from learned_metrics.outputs import atomic_file

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_plot_path(path: str | Path) -> Path:
    """Fail before any work when the plot file type is not one matplotlib writes here."""
    path = Path(path)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise UserError(f"unsupported plot type '{path.suffix or '(none)'}', expected one of: "
                        f"{', '.join(PLOT_SUFFIXES)}", path=path)
    return path


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# names are user data: never mathtext (``$...$``) or LaTeX, whatever the user's matplotlibrc says
_LITERAL = {"text.parse_math": False, "text.usetex": False}


def literal_text(build: Callable[..., Any]) -> Callable[..., Any]:
    """Every text of the figure ``build`` returns is drawn as written: built under ``text.parse_math`` off, then
    each text switched off too (matplotlib reads the setting when a text is made; a notebook draws the figure
    later, outside this block), its control characters but line breaks shown as :func:`shown_text` shows them (no
    font has a glyph for them). The one place figures decide how names are drawn."""

    @functools.wraps(build)
    def literal(*args: Any, **kwargs: Any) -> Any:
        import matplotlib
        from matplotlib.text import Text

        with matplotlib.rc_context(_LITERAL):
            fig = build(*args, **kwargs)
        for text in fig.findobj(Text):
            lines = text.get_text().replace("\r\n", "\n").split("\n")  # a title's line breaks are its layout
            text.set(text="\n".join(map(shown_text, lines)), parse_math=False, usetex=False)
        return fig

    return literal


def _save(path: str | Path, draw: Callable[[], Any]) -> Path:
    """The figure ``draw`` makes, written to ``path``: its type is checked before any drawing."""
    path = check_plot_path(path)
    fig = draw()
    try:
        # TrueType (42) instead of Type 3 fonts in PDF/PS: what conference checks (ACL, IEEE PDF eXpress) require
        with atomic_file(path) as tmp, _pyplot().rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, **_LITERAL}):
            fig.savefig(tmp, format=path.suffix.lower().lstrip("."), dpi=150, bbox_inches="tight")
    finally:
        _pyplot().close(fig)
    return path


SCORE_LABEL = "Score, P(entail) − P(contradict)"
_SCORE_LABELS = {("faithfulness", "e-c"): SCORE_LABEL, ("faithfulness", "e"): "Score, P(entail)",
                 ("coherence", None): "Score, P(coherent)"}


def score_axis_label(provenance: dict | None, field: str = "score") -> str:
    """What a histogram's x axis calls the scores: the metric and mode the file's provenance records (our scored
    files), else the field's name (any other metric's scores, whose scale we do not know)."""
    known = provenance and field == "score" and _SCORE_LABELS.get((provenance.get("metric"), provenance.get("mode")))
    return known or f"Score ('{field}' field)"


def plot_bias_matrix(matrix: Any, path: str | Path, title: str | None = None) -> Path:
    """Circles per cell: area proportional to the pair count, colour = tau+/tau- on a diverging scale."""
    return _save(path, lambda: bias_matrix_figure(matrix, title))


@literal_text
def bias_matrix_figure(matrix: Any, title: str | None = None) -> Any:
    """The figure of :func:`plot_bias_matrix`, returned for notebooks and inspection."""
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
    points = ax.scatter(cols, rows, s=areas, c=matrix.tau[rows, cols], cmap="RdBu", vmin=-1, vmax=1, edgecolors="0.3",
                        linewidths=0.5)
    ax.set_xticks(range(n), matrix.systems, rotation=90)
    ax.set_yticks(range(n), matrix.systems)
    ax.set(xlim=(-0.5, n - 0.5), ylim=(n - 0.5, -0.5), aspect="equal")
    ax.grid(True, color="0.92", linewidth=0.5)
    ax.set(axisbelow=True, xlabel="Other system (columns; best mean human score first)",
           ylabel="Human-preferred system (rows; same order)")
    bar = fig.colorbar(points, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label("Metric agreement, 2 × accuracy − 1\n(τ+ above the diagonal, τ− below)")
    ax.set_title(title or f"Metric agreement per system pair\n(circle area ∝ pairs, largest {int(biggest):,})")
    return fig


def _rows_of_each_group(groups: list[str]) -> list[tuple[str, np.ndarray]]:
    """(group name, row mask) in order of first appearance."""
    groups_arr = np.asarray(groups)
    return [(name, groups_arr == name) for name in dict.fromkeys(groups)]


CLASSES = ((1, "faithful", "tab:blue"), (0, "unfaithful", "tab:red"))


def histogram_edges(scores: np.ndarray, bins: int = 20) -> np.ndarray:
    """``bins`` equal bins over the scores' range: numpy's edges, except where they need ``max - min`` past the
    float maximum (scores near -1e308 and 1e308) or one value has no room for numpy's +-0.5 (all 1e308): then
    ``low * (1 - f) + high * f``, each term finite, over the range (widened by a thousandth when it is one value)."""
    scores = np.asarray(scores, dtype=np.float64)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            edges = np.histogram_bin_edges(scores, bins=bins)
        if np.isfinite(edges).all() and np.all(np.diff(edges) > 0):
            return edges
    except ValueError:  # "too many bins for data range": the range overflowed
        pass
    low, high = float(scores.min()), float(scores.max())
    if low == high:
        room = abs(low) / 1000
        low, high = max(low - room, -np.finfo(float).max), min(high + room, np.finfo(float).max)
    share = np.linspace(0.0, 1.0, bins + 1)
    edges = low * (1 - share) + high * share
    edges[0], edges[-1] = low, high
    return edges


@literal_text
def score_histogram_figure(scores: np.ndarray, labels: np.ndarray, groups: list[str],
                           aucs: dict[str, float | None] | None = None, *, score_label: str = SCORE_LABEL) -> Any:
    """The figure of :func:`plot_score_histograms`. Densities, not counts: TRUE corpora are very unbalanced and
    counts would hide the smaller class; one bin grid and x-range for all panels, so they compare at a glance; one
    legend right of the panels, so it never covers a bar."""
    plt = _pyplot()
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    panels = _rows_of_each_group(groups)
    columns = len(panels) if len(panels) <= 3 else min(4, math.ceil(math.sqrt(len(panels))))  # near-square beyond 3
    n_rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(4.2 * columns, 3.0 * n_rows + 0.6), squeeze=False,
                             layout="constrained")
    bins = histogram_edges(scores)
    # matplotlib's transforms take differences of axis limits: scores near the float maximum are drawn in units of
    # a power of ten (the axis label says which), the same histogram
    unit = 10.0 ** math.floor(math.log10(np.abs(bins).max())) if np.abs(bins).max() > 1e300 else 1.0
    scores, bins = scores / unit, bins / unit
    for ax, (name, in_group) in zip(axes.ravel(), panels, strict=False):
        counts = []
        for label, what, colour in CLASSES:
            values = scores[in_group & (labels == label)]
            if values.size:
                ax.hist(values, bins=bins, density=True, alpha=0.55, color=colour)
                counts.append(f"{what} n={values.size:,}")
        auc = (aucs or {}).get(name)
        details = ([] if auc is None else [f"AUC {auc:.3f}"]) + counts
        ax.set_title(f"{name}\n{' · '.join(details)}", fontsize="medium")
        ax.set_xlim(bins[0], bins[-1])
        ax.xaxis.set_major_locator(MaxNLocator(5))
    for ax in axes.ravel()[len(panels) :]:
        fig.delaxes(ax)
    fig.supxlabel(score_label if unit == 1 else f"{score_label}, in units of {unit:.0e}")
    fig.supylabel("Density (share of rows per score unit)")
    fig.suptitle("Score distributions of faithful and unfaithful rows by corpus")
    handles = [Patch(color=colour, alpha=0.55, label=f"{what.capitalize()} (label {label})")
               for label, what, colour in CLASSES]
    fig.legend(handles=handles, loc="outside right upper", fontsize="small")
    return fig


def plot_score_histograms(scores: np.ndarray, labels: np.ndarray, groups: list[str], path: str | Path,
                          aucs: dict[str, float | None] | None = None, *, score_label: str = SCORE_LABEL) -> Path:
    """One panel per group: score densities of label 1 (faithful) vs label 0 (unfaithful), class counts and AUC
    in the panel title, the same x-range everywhere, one legend beside the panels."""
    return _save(path, lambda: score_histogram_figure(scores, labels, groups, aucs, score_label=score_label))


@literal_text
def roc_figure(scores: np.ndarray, labels: np.ndarray, groups: list[str],
               aucs: dict[str, float | None] | None = None) -> Any:
    """The figure of :func:`plot_roc_curves`, returned for notebooks and inspection."""
    plt = _pyplot()
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    fig, ax = plt.subplots(figsize=(7.5, 5.0), layout="constrained")
    lines = ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1)
    names = ["Chance"]
    for name, in_group in _rows_of_each_group(groups):
        if len(set(labels[in_group].tolist())) < 2:
            continue  # AUC undefined: the table says so
        auc = (aucs or {}).get(name)
        lines += ax.plot(*roc_points(scores[in_group], labels[in_group]), linewidth=1.5)
        names.append(name if auc is None else f"{name} (AUC {auc:.3f})")
    ax.set(xlim=(0, 1), ylim=(0, 1.01), aspect="equal", title="ROC curves by corpus",
           xlabel="False positive rate (share of unfaithful rows accepted)",
           ylabel="True positive rate (share of faithful rows accepted)")
    # beside the axes: a curve below the diagonal (AUC < 0.5) runs through the lower right corner
    # labels given with their lines: matplotlib would hide a group whose name starts with "_"
    ax.legend(lines, names, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def plot_roc_curves(scores: np.ndarray, labels: np.ndarray, groups: list[str], path: str | Path,
                    aucs: dict[str, float | None] | None = None) -> Path:
    """ROC curve of every group with both labels on one set of axes, AUC in the legend beside the axes."""
    return _save(path, lambda: roc_figure(scores, labels, groups, aucs))


def bucket_range_label(bucket: Any) -> str:
    """A length-gap bucket's range as an x tick says it: ``[−30, 10)``, ``< −190``, ``≥ 190``, ``all``."""
    low, high = (None if end is None else f"{end}".replace("-", "−") for end in (bucket.low, bucket.high))
    if low is None or high is None:
        return "all" if low == high else f"< {high}" if low is None else f"≥ {low}"
    return f"[{low}, {high})"


@literal_text
def length_gap_figure(report: Any, *, min_bucket_pairs: int | None = None) -> Any:
    """The figure of :func:`plot_length_gap`: one point per bucket of the report (sparse ones already merged by
    ``shuffle_test``) at its centre, its tick naming its range, its comparisons written under it; a bucket with
    fewer than ``min_bucket_pairs`` (default: the report's) is hollow, without a CI bar."""
    if report.buckets is None:
        raise UserError("the shuffle-test report has no length-gap buckets (run it with length_gap)")
    plt = _pyplot()
    from matplotlib.lines import Line2D

    minimum = getattr(report, "min_bucket_pairs", 0) if min_bucket_pairs is None else min_bucket_pairs
    buckets = [b for b in report.buckets if b.pairs]
    fig, ax = plt.subplots(figsize=(9.5, 4.2), layout="constrained")
    gaps = np.array([b.gap for b in buckets], dtype=float)
    accuracy = np.array([b.accuracy for b in buckets], dtype=float)
    few = np.array([b.pairs < minimum for b in buckets], dtype=bool)
    with_ci = np.array([b.ci is not None for b in buckets], dtype=bool) & ~few
    ax.plot(gaps, accuracy, color="tab:blue", linewidth=1.2)
    if with_ci.any():
        cis, shown = np.array([b.ci for b, ok in zip(buckets, with_ci, strict=True) if ok]), accuracy[with_ci]
        ax.errorbar(gaps[with_ci], shown, yerr=[shown - cis[:, 0], cis[:, 1] - shown], fmt="o", color="tab:blue",
                    capsize=3, linewidth=1.2)
    plain = ~with_ci & ~few  # no resamples: points without bars
    ax.plot(gaps[plain], accuracy[plain], "o", color="tab:blue", linestyle="none")
    ax.plot(gaps[few], accuracy[few], "o", color="tab:blue", markerfacecolor="white", linestyle="none")
    # n in a band below 0, clear of the CI bars; in two staggered rows where six-character counts ("12,345")
    # would touch between buckets 20 characters apart
    labels = [f"{bucket.pairs:,}" for bucket in buckets]
    stagger = len(buckets) > 1 and np.diff(gaps).min() < 2 * BUCKET_WIDTH and max(map(len, labels)) >= 6
    for k, (gap, label) in enumerate(zip(gaps, labels, strict=True)):
        y = -0.065 if not stagger else (-0.05 if k % 2 == 0 else -0.105)
        ax.annotate(label, (gap, y), ha="center", va="center", fontsize=6.5, color="0.35")
    ax.axhline(0.5, color="0.4", linestyle="--", linewidth=1)
    ax.axhline(0, color="0.8", linewidth=0.8)
    ax.set(ylim=(-0.13, 1.04), yticks=np.linspace(0, 1, 6), xlim=(-215, 215), ylabel="Accuracy (share of pairs)",
           xlabel="Length gap, original minus other document (characters); ends clamped at ±200")
    ax.set_xticks(gaps, [bucket_range_label(b) for b in buckets], rotation=45, ha="right",
                  rotation_mode="anchor", fontsize=7)
    settings = report.settings  # the CI level and resamples the bars were drawn with
    handles = [Line2D([], [], color="tab:blue", marker="o", linewidth=1.2, label=f"Accuracy, {settings.confidence:.0%} "
                      "bootstrap CI" if settings.resamples else "Accuracy (no CIs: 0 resamples)"),
               Line2D([], [], color="0.4", linestyle="--", linewidth=1, label="Chance (0.5)"),
               Line2D([], [], linestyle="none", label="Numbers at the bottom: n,\ncomparisons per bucket")]
    if few.any():
        handles.append(Line2D([], [], color="tab:blue", marker="o", markerfacecolor="white", linestyle="none",
                              label=f"Fewer than {minimum} comparisons:\nno CI"))
    end = BUCKET_LIMIT + BUCKET_WIDTH // 2  # the open end buckets as if closed: wider than one bucket when merged
    if any((end if b.high is None else b.high) - (-end if b.low is None else b.low) > BUCKET_WIDTH for b in buckets):
        label = f"Buckets under {getattr(report, 'min_bucket_pairs', minimum)} comparisons\nmerged with a neighbour"
        handles.append(Line2D([], [], linestyle="none", label=label))
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title(f"Shuffle-test accuracy by length gap (overall {report.accuracy.value:.3f})")
    return fig


def plot_length_gap(report: Any, path: str | Path, *, min_bucket_pairs: int | None = None) -> Path:
    """Shuffle-test accuracy per length-gap bucket with CI bars, range ticks and counts; .png, .pdf or .svg by
    suffix. ``min_bucket_pairs`` (default: the report's): buckets with fewer comparisons are drawn without a bar."""
    return _save(path, lambda: length_gap_figure(report, min_bucket_pairs=min_bucket_pairs))
