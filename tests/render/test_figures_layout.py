"""Print-ready figures (issue 23 item 5): legends never cover bars, length-gap CIs only where a bucket has enough
comparisons (sparse buckets merged, ranges on the ticks, n under each point), caption-ready titles and labels."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.bias import bias_matrix
from learned_metrics.meta_eval.options import ShuffleTestSettings
from learned_metrics.meta_eval.shuffle_test import merge_sparse_buckets, shuffle_test
from learned_metrics.render.figures import (
    bias_matrix_figure,
    length_gap_figure,
    plot_bias_matrix,
    plot_length_gap,
    roc_figure,
    score_histogram_figure,
)
from learned_metrics.settings import flag_name

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["meta-eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _overlap(a, b) -> bool:
    """Whether two display-space boxes share interior (touching edges do not count)."""
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def _legends(fig) -> list:
    return list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]


def legend_bar_overlaps(fig) -> list[tuple[int, int]]:
    """(legend, bar) index pairs whose window extents overlap, after drawing the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bars = [p.get_window_extent(renderer) for ax in fig.axes for p in ax.patches if p.get_height() > 0]
    assert bars, "no bars drawn"
    legends = _legends(fig)
    assert legends, "no legend drawn"
    return [(i, j) for i, legend in enumerate(legends) for j, bar in enumerate(bars)
            if _overlap(legend.get_window_extent(renderer), bar)]


def _filling_histogram_rows(panels: int, per_class: int = 400):
    """Both classes spread evenly over one score range in every panel: every bin equally tall, so the bars reach
    the top of each panel in every corner."""
    grid = np.linspace(-1.0, 1.0, per_class)
    scores = np.tile(np.r_[grid, grid], panels)
    labels = np.tile(np.r_[np.ones(per_class, int), np.zeros(per_class, int)], panels)
    groups = [f"corpus {k}" for k in range(panels) for _ in range(2 * per_class)]
    return scores, labels, groups


def _corners_are_covered(fig) -> None:
    """Control of the hostile case: in every panel, bars reach 80% of the axes height at its left and right ends."""
    fig.canvas.draw()
    for ax in fig.axes:
        top = ax.get_ylim()[1]
        bars = sorted((p for p in ax.patches if p.get_height() > 0), key=lambda p: p.get_x())
        assert bars[0].get_height() > 0.8 * top and bars[-1].get_height() > 0.8 * top
        low, high = ax.get_xlim()
        assert bars[0].get_x() <= low + 1e-9 and bars[-1].get_x() + bars[-1].get_width() >= high - 1e-9


# --- 1. histogram legends never cover bars --------------------------------------------------------


@pytest.mark.parametrize("panels", [1, 2, 4, 10])
@pytest.mark.slow
def test_histogram_legend_overlaps_no_bar_even_when_bars_fill_every_corner(panels):
    scores, labels, groups = _filling_histogram_rows(panels)
    aucs = {f"corpus {k}": 0.5 for k in range(panels)}
    fig = score_histogram_figure(scores, labels, groups, aucs)
    _corners_are_covered(fig)
    assert len(fig.axes) == panels
    assert legend_bar_overlaps(fig) == []
    legend = _legends(fig)
    assert len(legend) == 1  # one legend for the figure, not one per panel
    assert [t.get_text() for t in legend[0].get_texts()] == ["Faithful (label 1)", "Unfaithful (label 0)"]


def test_histogram_panels_keep_name_auc_and_class_counts_in_their_titles():
    scores, labels, groups = _filling_histogram_rows(3, per_class=50)
    labels[:10] = 0  # corpus 0: 40 faithful, 60 unfaithful
    fig = score_histogram_figure(scores, labels, groups, {"corpus 0": 0.625})
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "corpus 0\nAUC 0.625 · faithful n=40 · unfaithful n=60"
    assert titles[1] == "corpus 1\nfaithful n=50 · unfaithful n=50"


def test_the_overlap_check_catches_a_legend_inside_full_bars():
    """Control: the check is not vacuous. A legend inside a panel of full-height bars (the old layout) overlaps."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.hist(np.linspace(0, 1, 400), bins=20, label="faithful")
    ax.legend(loc="best")
    assert legend_bar_overlaps(fig)
    plt.close(fig)


# --- 2. length-gap buckets: merged until each has enough comparisons -------------------------------


def _sparse_gap_data(n: int = 300, seed: int = 3):
    rng = np.random.default_rng(seed)
    gaps = np.round(rng.normal(0, 80, n))  # the tails hold a few comparisons per 20-character bucket
    original = rng.normal(size=n) + gaps / 150
    shuffled = np.round(rng.normal(size=n), 1)
    return original, shuffled, gaps


def test_min_bucket_pairs_is_one_declared_option():
    option = ShuffleTestSettings.__dataclass_fields__["min_bucket_pairs"]
    api_default = inspect.signature(shuffle_test).parameters["min_bucket_pairs"].default
    assert option.default == api_default == 30 and flag_name(option.name) == "--min-bucket-pairs"
    with pytest.raises(UserError, match="--min-bucket-pairs"):
        shuffle_test(np.ones(3), np.zeros(3), length_gap=[0, 1, 2], min_bucket_pairs=-1)


def test_merge_joins_the_sparsest_bucket_with_its_smaller_neighbour():
    assert merge_sparse_buckets(np.array([3, 7, 0, 40, 50, 2, 1, 35]), 30) == [(0, 3), (4, 4), (5, 7)]
    assert merge_sparse_buckets(np.array([3, 7, 0, 40]), 0) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert merge_sparse_buckets(np.array([3, 7, 0]), 30) == [(0, 2)]  # too few in all: one bucket
    assert merge_sparse_buckets(np.array([31, 29, 31]), 30) == [(0, 1), (2, 2)]  # tie: toward the middle


def test_every_reported_bucket_has_enough_comparisons_and_the_ranges_tile_the_axis():
    original, shuffled, gaps = _sparse_gap_data()
    fine = shuffle_test(original, shuffled, length_gap=gaps, resamples=0, min_bucket_pairs=0)
    assert len(fine.buckets) == 21 and min(b.pairs for b in fine.buckets) < 30  # the case needs merging
    report = shuffle_test(original, shuffled, length_gap=gaps, resamples=200, seed=1)
    buckets = report.buckets
    assert report.min_bucket_pairs == 30 and 1 < len(buckets) < 21
    assert all(b.pairs >= 30 and b.ci is not None for b in buckets)
    assert buckets[0].low is None and buckets[-1].high is None
    assert all(a.high == b.low for a, b in zip(buckets, buckets[1:], strict=False))
    assert sum(b.pairs for b in buckets) == gaps.size
    outcome = np.where(original > shuffled, 1.0, np.where(original == shuffled, 0.5, 0.0))
    for b in buckets:
        members = (gaps >= (-np.inf if b.low is None else b.low)) & (gaps < (np.inf if b.high is None else b.high))
        assert b.pairs == members.sum() and b.accuracy == pytest.approx(outcome[members].mean())
    data = report.to_json()
    assert data["min_bucket_pairs"] == 30 and [b["pairs"] for b in data["by_length_gap"]] == [b.pairs for b in buckets]


def test_a_merged_buckets_ci_is_the_ci_of_its_comparisons_as_one_bucket():
    """Same pair-id resamples: moving the merged bucket's comparisons into one 20-character bucket (and the rest
    far away) and not merging gives the very same interval."""
    original, shuffled, gaps = _sparse_gap_data()
    report = shuffle_test(original, shuffled, length_gap=gaps, resamples=300, seed=4)
    merged = next(b for b in report.buckets if b.low is None)  # the low end always merges here
    members = gaps < merged.high
    moved = np.where(members, 0.0, 150.0)
    alone = shuffle_test(original, shuffled, length_gap=moved, resamples=300, seed=4, min_bucket_pairs=0)
    centre = next(b for b in alone.buckets if b.gap == 0)
    assert centre.pairs == merged.pairs and centre.ci == pytest.approx(merged.ci, abs=1e-12)
    assert centre.nan_resamples == merged.nan_resamples


def test_too_few_comparisons_in_all_one_bucket_without_a_ci_and_the_table_says_so():
    report = shuffle_test(np.ones(5), np.zeros(5), length_gap=[-300, -5, 0, 40, 300], resamples=100)
    (bucket,) = report.buckets
    assert (bucket.low, bucket.high, bucket.pairs, bucket.ci) == (None, None, 5, None)
    cell = report.tables()[1].rows[0][3]
    assert cell.ci is None and cell.detail == "fewer than 30 comparisons: no CI"
    fig = length_gap_figure(report)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["all"]
    assert not ax.containers  # no error bars
    assert any("no CI" in t.get_text() for t in ax.get_legend().get_texts())


def test_length_gap_plot_ticks_name_the_ranges_and_points_carry_their_n():
    original, shuffled, gaps = _sparse_gap_data()
    report = shuffle_test(original, shuffled, length_gap=gaps, resamples=100, seed=2)
    fig = length_gap_figure(report)
    ax = fig.axes[0]
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    expected = []
    for b in report.buckets:
        low, high = (str(v).replace("-", "−") if v is not None else None for v in (b.low, b.high))
        expected.append(f"< {high}" if low is None else f"≥ {low}" if high is None else f"[{low}, {high})")
    assert ticks == expected
    assert any(t.startswith("[") and t.endswith(")") for t in ticks)
    np.testing.assert_array_equal(ax.get_xticks(), [b.gap for b in report.buckets])
    assert [t.get_text() for t in ax.texts] == [f"{b.pairs:,}" for b in report.buckets]
    (bars,) = ax.containers
    assert len(bars.lines[0].get_xdata()) == len(report.buckets)  # every bucket has its CI bar


def test_a_report_kept_fine_is_drawn_without_bars_for_its_sparse_buckets():
    original, shuffled, gaps = _sparse_gap_data()
    fine = shuffle_test(original, shuffled, length_gap=gaps, resamples=100, min_bucket_pairs=0)
    dense = [b for b in fine.buckets if b.pairs >= 30]
    fig = length_gap_figure(fine, min_bucket_pairs=30)
    (bars,) = fig.axes[0].containers
    np.testing.assert_array_equal(bars.lines[0].get_xdata(), [b.gap for b in dense])
    assert 0 < len(dense) < sum(1 for b in fine.buckets if b.pairs)


def test_n_labels_and_range_ticks_do_not_collide_with_21_full_buckets():
    """Hostile: every 20-character bucket kept, five-digit counts."""
    gaps = np.repeat(np.arange(-200, 201, 20), 12_345).astype(float)
    rng = np.random.default_rng(0)
    report = shuffle_test(rng.normal(size=gaps.size), rng.normal(size=gaps.size), length_gap=gaps, resamples=0)
    assert len(report.buckets) == 21
    fig = length_gap_figure(report)
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [a.get_window_extent(renderer) for a in ax.texts]
    assert len(boxes) == 21
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    # tick labels at 45 degrees are parallel lines: their distance across the text must exceed its height
    ticks = ax.get_xticklabels()
    assert len(ticks) == 21 and {t.get_rotation() for t in ticks} == {45.0}
    anchors = ax.transData.transform(np.c_[ax.get_xticks(), np.zeros(21)])[:, 0]
    height = ticks[0].get_fontsize() * fig.dpi / 72
    assert np.diff(anchors).min() * np.sin(np.pi / 4) > 1.2 * height
    legend = ax.get_legend().get_window_extent(renderer)
    assert not _overlap(legend, ax.get_window_extent(renderer))  # beside the axes, over no point


@pytest.mark.slow
def test_cli_min_bucket_pairs_flag_reaches_the_json_table_and_plot(tmp_path, capsys):
    out, plot = tmp_path / "gap.json", tmp_path / "gap.pdf"
    code, stdout, _ = run(capsys, "shuffle-test", "--input", EXAMPLES / "shuffle_length_gap.jsonl", "--length-gap",
                          "--min-bucket-pairs", "50", "--resamples", "50", "--json", out, "--plot", plot)
    assert code == 0 and "merged" in stdout
    data = json.loads(out.read_text())
    buckets = data["by_length_gap"]
    assert data["min_bucket_pairs"] == 50 and all(b["pairs"] >= 50 and b["ci"] for b in buckets)
    assert sum(b["pairs"] for b in buckets) == data["accuracy"]["n"]
    assert plot.read_bytes().startswith(b"%PDF") and b"/FontFile2" in plot.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        run(capsys, "shuffle-test", "--input", EXAMPLES / "shuffle_length_gap.jsonl", "--length-gap",
            "--min-bucket-pairs", "-1")
    assert exit_.value.code == 2 and "--min-bucket-pairs: must be an integer >= 0" in capsys.readouterr().err


# --- 3. caption-ready titles and axis labels with units -------------------------------------------


def _texts(fig) -> dict[str, str]:
    ax = fig.axes[0]
    return {"title": fig._suptitle.get_text() if fig._suptitle else ax.get_title(),
            "x": ax.get_xlabel() or fig._supxlabel.get_text(), "y": ax.get_ylabel() or fig._supylabel.get_text()}


def _figures():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200)
    scores = rng.normal(size=200) + labels
    groups = ["frank"] * 100 + ["summeval"] * 100
    human = rng.normal(size=(12, 4))
    original, shuffled, gaps = _sparse_gap_data()
    return {
        "bias": bias_matrix_figure(bias_matrix(human, human + rng.normal(size=human.shape), list("ABCD"))),
        "histograms": score_histogram_figure(scores, labels, groups, {"frank": 0.7}),
        "roc": roc_figure(scores, labels, groups, {"frank": 0.7}),
        "length_gap": length_gap_figure(shuffle_test(original, shuffled, length_gap=gaps, resamples=50)),
    }


EXPECTED_LABELS = {
    "bias": ("Other system (columns", "Human-preferred system (rows"),
    "histograms": ("Score, P(entail) − P(contradict)", "Density (share of rows per score unit)"),
    "roc": ("False positive rate (share of unfaithful rows accepted)",
            "True positive rate (share of faithful rows accepted)"),
    "length_gap": ("Length gap, original minus other document (characters)", "Accuracy (share of pairs)"),
}


def test_every_figure_has_a_short_title_and_axis_labels_with_units():
    for name, fig in _figures().items():
        texts = _texts(fig)
        x, y = EXPECTED_LABELS[name]
        assert texts["x"].startswith(x) and texts["y"].startswith(y), name
        title = texts["title"]
        assert title and all(len(line) <= 70 for line in title.split("\n")), (name, title)
        for text in texts.values():  # no internal names: snake_case fields, tau_ statistics, lower-case labels
            assert "_" not in text and text[:1].isupper(), (name, text)
    bias = _figures()["bias"]
    colourbar = bias.axes[1].get_ylabel()
    assert colourbar.startswith("Metric agreement, 2 × accuracy − 1") and "τ+" in colourbar


@pytest.mark.parametrize("which", ["bias", "length_gap"])
def test_pdf_of_the_other_figures_embeds_truetype_fonts(tmp_path, which):
    path = tmp_path / "f.pdf"
    if which == "bias":
        human = np.random.default_rng(0).normal(size=(10, 3))
        plot_bias_matrix(bias_matrix(human, human[::-1], list("ABC")), path)
    else:
        original, shuffled, gaps = _sparse_gap_data()
        plot_length_gap(shuffle_test(original, shuffled, length_gap=gaps, resamples=20), path)
    data = path.read_bytes()
    assert b"/FontFile2" in data and b"/Subtype /Type3" not in data


def test_histogram_axis_names_the_score_the_file_holds(tmp_path, monkeypatch):
    """The x axis says P(entail) for a file scored with --mode e, e-c for e-c, the field for other metrics."""
    from learned_metrics.render import figures

    assert figures.score_axis_label({"metric": "faithfulness", "mode": "e"}) == "Score, P(entail)"
    assert figures.score_axis_label({"metric": "faithfulness", "mode": "e-c"}) == figures.SCORE_LABEL
    assert figures.score_axis_label({"metric": "coherence", "mode": None}) == "Score, P(coherent)"
    assert figures.score_axis_label(None, "alignscore") == "Score ('alignscore' field)"
    assert figures.score_axis_label({"metric": "faithfulness", "mode": "e"}, "other") == "Score ('other' field)"

    rows = [{"score": 0.1 * i, "label": i % 2, "corpus": "a"} for i in range(10)]
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "scored.jsonl.provenance.json").write_text(json.dumps(
        {"format": "learned-metrics/provenance", "version": 1, "metric": "faithfulness", "mode": "e"}))
    seen = []
    real = figures.score_histogram_figure
    monkeypatch.setattr(figures, "score_histogram_figure", lambda *a, **k: seen.append(k) or real(*a, **k))
    assert main(["meta-eval", "auc", "--input", str(scored), "--group-field", "corpus", "--resamples", "0",
                 "--plot", str(tmp_path / "hist.png")]) == 0
    assert seen and seen[0]["score_label"] == "Score, P(entail)"
