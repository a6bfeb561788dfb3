"""A correlation does not depend on the scale of the scores, across the whole float range: Pearson's squares
overflowed beyond 1e154 (r = 0.0, exit 0) and underflowed below 1e-154; the tie-keeping rounding of system means
divided by zero below 1e-312 (tau_sys NaN). Control: the same scores at scale 1, and scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from learned_metrics.meta_eval import correlations

HUMAN = np.random.default_rng(0).integers(1, 6, size=(8, 5)).astype(float)
METRIC = HUMAN + np.random.default_rng(1).normal(size=HUMAN.shape)
SCIPY = {"pearson": stats.pearsonr, "kendall": stats.kendalltau, "spearman": stats.spearmanr}


@pytest.mark.parametrize("coefficient", sorted(SCIPY))
@pytest.mark.parametrize("scale", [1.0, 1e160, 1e300, 1e-160, 1e-300, 1e-313])
def test_every_statistic_is_the_same_at_every_scale(coefficient, scale):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or underflow on the way
        scaled = correlations(HUMAN, METRIC * scale, coefficient=coefficient, resamples=0).stats
    unit = correlations(HUMAN, METRIC, coefficient=coefficient, resamples=0).stats
    for name, result in unit.items():
        assert scaled[name].value == pytest.approx(result.value, abs=1e-9), name
    assert unit["tau_sum"].value == pytest.approx(SCIPY[coefficient](METRIC.ravel(), HUMAN.ravel()).statistic)
    assert unit["tau_sys"].value == pytest.approx(SCIPY[coefficient](METRIC.mean(0), HUMAN.mean(0)).statistic)
