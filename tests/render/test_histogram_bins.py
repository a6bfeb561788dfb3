"""Histogram bins of extreme finite scores: numpy's bin edges need ``max - min`` (inf past 1.8e308, "too many
bins"), so the histogram figure took the scores' range apart; edges are finite and scale with the scores."""

from __future__ import annotations

import io

import numpy as np
import pytest

from learned_metrics.render.figures import histogram_edges, score_histogram_figure

rng = np.random.default_rng(0)
ORDINARY = np.r_[-(1 + 0.5 * rng.random(30)), 1 + 0.5 * rng.random(30)]
LABELS = np.r_[np.zeros(30, int), np.ones(30, int)]
MAX = np.finfo(float).max


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("scale", [1e308, 1.0, 1e-300], ids=["huge", "control", "tiny"])
def test_edges_are_finite_and_scale_with_the_scores(scale):
    edges = histogram_edges(ORDINARY * scale)
    assert edges.size == 21 and np.isfinite(edges).all() and np.all(np.diff(edges) > 0)
    np.testing.assert_allclose(edges, np.histogram_bin_edges(ORDINARY, bins=20) * scale, rtol=1e-12,
                               atol=1e-12 * scale)
    counts = np.histogram(ORDINARY * scale, bins=edges)[0]
    np.testing.assert_array_equal(counts, np.histogram(ORDINARY, bins=20)[0])


@pytest.mark.parametrize("scores", [[-MAX, MAX], [MAX, MAX], [-MAX, 5e-324, MAX], [5e-324, 5e-324], [0.0, 0.0]],
                         ids=["full-range", "all-max", "with-subnormal", "all-subnormal", "all-zero"])
def test_edges_at_the_float_limits(scores):
    edges = histogram_edges(np.array(scores))
    assert np.isfinite(edges).all() and np.all(np.diff(edges) > 0)
    assert edges[0] <= min(scores) and edges[-1] >= max(scores)
    assert np.histogram(np.array(scores), bins=edges)[0].sum() == len(scores)


def bar_heights(fig) -> np.ndarray:
    return np.array([p.get_height() for ax in fig.axes for p in ax.patches])


@pytest.mark.filterwarnings("error")  # no overflow inside matplotlib either
@pytest.mark.parametrize("scale", [1e308, -1e308, 1e-300, 1.0], ids=["huge", "huge-negative", "tiny", "control"])
def test_the_histogram_figure_draws_extreme_scores_as_the_rescaled_ones(scale):
    fig = score_histogram_figure(ORDINARY * scale, LABELS, ["a"] * 60)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"
    assert all(np.isfinite(ax.get_xlim()).all() for ax in fig.axes)
    reference = score_histogram_figure(ORDINARY * np.sign(scale), LABELS, ["a"] * 60)
    # the same bars, as shares of their class: densities scale with 1 / |scale|, and the plotted unit
    heights, expected = bar_heights(fig), bar_heights(reference)
    np.testing.assert_allclose(heights / heights.sum(), expected / expected.sum(), rtol=1e-9)
