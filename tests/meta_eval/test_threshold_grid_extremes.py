"""Scores near the float limits: the percentile threshold grid stays finite (numpy's interpolation a + (b - a) * t
overflows when b - a passes 1.8e308) and tunes the same threshold as the same scores rescaled."""

from __future__ import annotations

import numpy as np
import pytest

from learned_metrics.meta_eval.benchmark import PERCENTILES, balanced_accuracies, threshold_grid, tune_threshold

rng = np.random.default_rng(0)
# two clusters, [-1.5, -1] and [1, 1.5], a few rows of each label in the other's cluster
ORDINARY = np.r_[-(1 + 0.5 * rng.random(40)), 1 + 0.5 * rng.random(40)]
LABELS = np.r_[np.zeros(34, int), np.ones(6, int), np.zeros(5, int), np.ones(35, int)]
SCALE = 1e308  # the clusters at about -1.5e308..-1e308 and 1e308..1.5e308: the gap between them overflows


@pytest.mark.parametrize("scale", [SCALE, -SCALE, 1.0], ids=["huge", "huge-negative", "control"])
def test_grid_of_extreme_scores_is_finite_and_scales(scale):
    scores = ORDINARY * scale
    grid = threshold_grid(scores, "percentile")
    assert grid.shape == PERCENTILES.shape and np.isfinite(grid).all()
    assert np.all(np.diff(grid) >= 0)
    # percentiles commute with a positive scale; a negative one reverses the order (p-th of -x is -(100-p)-th)
    reference = threshold_grid(ORDINARY, "percentile") if scale > 0 else -np.percentile(ORDINARY, 100 - PERCENTILES)
    np.testing.assert_allclose(grid, reference * abs(scale), rtol=1e-12, atol=1e-12 * abs(scale))


@pytest.mark.parametrize("scale", [SCALE, 1.0], ids=["huge", "control"])
def test_tuned_threshold_and_bacc_match_the_rescaled_scores(scale):
    tuned = tune_threshold(ORDINARY * scale, LABELS)
    assert np.isfinite(tuned)
    assert tuned == pytest.approx(tune_threshold(ORDINARY, LABELS) * scale, rel=1e-12)
    bacc = balanced_accuracies(ORDINARY * scale, LABELS, np.array([tuned]))
    assert bacc == pytest.approx(balanced_accuracies(ORDINARY, LABELS, np.array([tuned / scale])))


def test_the_full_float_range_and_the_smallest_subnormal():
    scores = np.array([-np.finfo(float).max, -5e-324, 0.0, 5e-324, np.finfo(float).max])
    grid = threshold_grid(scores, "percentile")
    assert np.isfinite(grid).all() and np.all(np.diff(grid) >= 0)
    assert grid[0] == scores[0]  # the 0th percentile is the smallest score exactly
    assert np.isfinite(tune_threshold(scores, np.array([0, 0, 1, 1, 1])))


def test_control_ordinary_grid_is_numpys_percentiles_exactly():
    np.testing.assert_array_equal(threshold_grid(ORDINARY, "percentile"), np.percentile(ORDINARY, PERCENTILES))
