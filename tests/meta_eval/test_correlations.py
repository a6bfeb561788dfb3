"""The five statistics and their bootstrap against direct scipy computations.

The reference below is deliberately plain (loops, scipy per group), the way a
reader would check a number by hand; the vectorized kernels must agree with
it to floating-point precision, including ties, absent cells and the
duplicated items a bootstrap resample creates.
"""

from __future__ import annotations

import numpy as np
import pytest
from meta_eval_reference import direct_corr, reference
from scipy import stats as scipy_stats

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import (
    STATISTICS,
    bootstrap_indices,
    coefficients,
    correlations,
    kendall_tau_b,
    percentile_interval,
)
from learned_metrics.meta_eval.coefficients import TieClasses
from learned_metrics.meta_eval.correlations import StatisticsEngine
from learned_metrics.meta_eval.resampling import index_counts


def tied_data(rng: np.random.Generator, n_docs: int, n_systems: int, holes: bool = False):
    """Small integer scores (many ties), one constant document, optionally absent cells."""
    human = rng.integers(1, 5, (n_docs, n_systems)).astype(float)
    metric = rng.integers(0, 4, (n_docs, n_systems)).astype(float)
    human[0] = 2.0
    if holes:
        human[rng.random(human.shape) < 0.1] = np.nan
    return human, metric


def assert_same(actual: float | None, expected: float, label: str) -> None:
    if np.isnan(expected):
        assert actual is None or np.isnan(actual), label
    else:
        assert actual == pytest.approx(expected, abs=1e-10), label


def test_weighted_tau_b_and_midranks_equal_scipy_on_expanded_data():
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 25))
        x, y = rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)
        weights = rng.integers(0, 3, n)
        expanded_x, expanded_y = np.repeat(x, weights), np.repeat(y, weights)
        expected = direct_corr(expanded_x, expanded_y, "kendall") if weights.sum() > 1 else np.nan
        assert_same(kendall_tau_b(x, y, weights), expected, "tau-b")
        ranks = TieClasses.of(x[None]).midranks(weights[None, None, :].astype(float))[0, 0]
        expected_ranks = scipy_stats.rankdata(expanded_x)
        for i in np.flatnonzero(weights):
            assert ranks[i] == pytest.approx(expected_ranks[expanded_x == x[i]][0])


@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman"])
@pytest.mark.parametrize("holes", [False, True])
def test_point_estimates_equal_direct_computation(coefficient, holes):
    rng = np.random.default_rng(1 + holes)
    for _ in range(3):
        human, metric = tied_data(rng, int(rng.integers(4, 12)), int(rng.integers(3, 8)), holes)
        report = correlations(human, metric, coefficient=coefficient, resamples=0)
        for name, expected in reference(human, metric, coefficient).items():
            assert_same(report.stats[name].value, expected, f"{coefficient} {name}")


@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman"])
def test_every_bootstrap_resample_equals_direct_computation_on_the_resampled_matrix(coefficient):
    """Duplicated systems/documents are separate items, exactly as indexing the matrices gives."""
    rng = np.random.default_rng(7)
    human, metric = tied_data(rng, 8, 5, holes=True)
    valid = ~(np.isnan(human) | np.isnan(metric))
    engine = StatisticsEngine(metric[None], human[None], valid[None], coefficient, STATISTICS)
    doc_idx, sys_idx = next(bootstrap_indices(8, 5, 6, "both", seed=3))
    samples = engine.evaluate(index_counts(doc_idx, 8, 6), index_counts(sys_idx, 5, 6))
    for r in range(6):
        expected = reference(human[doc_idx[r]][:, sys_idx[r]], metric[doc_idx[r]][:, sys_idx[r]], coefficient)
        for name in STATISTICS:
            assert_same(samples[name].value[r], expected[name], f"resample {r} {name}")


def test_large_groups_take_the_scipy_path_with_identical_results(monkeypatch):
    """Groups above LARGE_GROUP items use scipy on the expanded resample instead of m**2 sign products."""
    rng = np.random.default_rng(5)
    human, metric = tied_data(rng, 15, 6, holes=True)
    quadratic = correlations(human, metric, resamples=40, seed=2)
    monkeypatch.setattr(coefficients, "LARGE_GROUP", 5)
    expansion = correlations(human, metric, resamples=40, seed=2)
    for name in STATISTICS:
        assert expansion.stats[name].value == pytest.approx(quadratic.stats[name].value, abs=1e-12)
        assert expansion.stats[name].ci == pytest.approx(quadratic.stats[name].ci, abs=1e-12)


def test_constant_groups_are_skipped_and_counted():
    rng = np.random.default_rng(2)
    human = rng.normal(size=(6, 4))
    metric = human + rng.normal(size=(6, 4))
    human[:, 3] = 1.0  # a system the humans score constantly
    human[1] = 1.0  # constant human scores on a document
    metric[4] = 0.5  # constant metric scores on another
    report = correlations(human, metric, resamples=0)
    assert report.stats["tau_pair"].n == 4 and report.stats["tau_pair"].skipped == 2
    assert report.stats["tau_intra"].n == 3 and report.stats["tau_intra"].skipped == 1
    expected = reference(human, metric)
    assert report.stats["tau_pair"].value == pytest.approx(expected["tau_pair"])
    assert report.stats["tau_intra"].value == pytest.approx(expected["tau_intra"])


def test_acc_pair_counts_metric_ties_wrong_and_reports_pair_counts():
    human = np.array([[3.0, 2.0, 1.0], [1.0, 1.0, 2.0]])
    metric = np.array([[0.9, 0.9, 0.1], [0.5, 0.2, 0.7]])
    # doc 0: (0,1) metric tie -> wrong; (0,2) right; (1,2) right. doc 1: (0,1) human tie; (0,2), (1,2) right.
    result = correlations(human, metric, stats=["acc_pair"], resamples=0).stats["acc_pair"]
    assert result.value == pytest.approx(4 / 5)
    assert (result.n, result.skipped) == (5, 1)


def test_bootstrap_is_deterministic_by_seed_and_prefix_stable():
    rng = np.random.default_rng(3)
    human, metric = tied_data(rng, 20, 6)
    first = correlations(human, metric, resamples=300, seed=11)
    again = correlations(human, metric, resamples=300, seed=11)
    other = correlations(human, metric, resamples=300, seed=12)
    assert first.to_json() == again.to_json()
    assert first.to_json() != other.to_json()
    chunks = [d for d, _ in bootstrap_indices(20, 6, 300, "both", seed=11)]
    longer = [d for d, _ in bootstrap_indices(20, 6, 600, "both", seed=11)]
    np.testing.assert_array_equal(np.concatenate(chunks), np.concatenate(longer)[:300])


def test_resample_modes_draw_only_what_they_name():
    for mode, (docs_drawn, systems_drawn) in {"documents": (True, False), "systems": (False, True)}.items():
        doc_idx, sys_idx = next(bootstrap_indices(5, 4, 10, mode, seed=0))
        assert (doc_idx is not None) == docs_drawn and (sys_idx is not None) == systems_drawn


def test_percentile_interval_on_a_known_case_drops_and_counts_nan():
    samples = np.concatenate([np.arange(1, 1002, dtype=float), [np.nan] * 7])
    interval = percentile_interval(samples)
    assert interval.ci == pytest.approx((26.0, 976.0))  # 2.5% / 97.5% of 1..1001, linear interpolation
    assert (interval.used, interval.dropped) == (1001, 7)
    assert percentile_interval(np.array([np.nan, np.nan])).ci is None


def test_undefined_resamples_are_dropped_and_counted():
    """With 3 systems, some BOOT-BOTH resamples draw one system thrice: tau_sys is undefined there."""
    rng = np.random.default_rng(4)
    human = rng.normal(size=(10, 3))
    metric = human + rng.normal(size=(10, 3))
    result = correlations(human, metric, stats=["tau_sys"], resamples=400, seed=0).stats["tau_sys"]
    doc_systems = [s for _, s in bootstrap_indices(10, 3, 400, "both", seed=0)]
    one_system = sum(int((np.ptp(block, axis=1) == 0).sum()) for block in doc_systems)
    assert result.nan_resamples == one_system > 0
    assert result.ci is not None


def test_bad_api_arguments_raise_user_errors():
    grid = np.ones((3, 3))
    with pytest.raises(UserError, match="coefficient"):
        correlations(grid, grid, coefficient="cosine")
    with pytest.raises(UserError, match="statistic"):
        correlations(grid, grid, stats=["tau_everything"])
    with pytest.raises(UserError, match="shape"):
        correlations(grid, np.ones((3, 2)))
