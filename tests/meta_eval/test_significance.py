"""Permutation and Williams tests: known answers and a brute-force check of the vectorized swaps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from meta_eval_reference import reference
from scipy import stats as scipy_stats

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import compare, williams_p
from learned_metrics.meta_eval.resampling import swap_masks
from learned_metrics.meta_eval.significance import permutation_deltas, permutation_p


def synthetic(seed: int = 0, n_docs: int = 30, n_systems: int = 8):
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1, 1, n_systems)[None, :] + rng.normal(0, 0.8, (n_docs, n_systems))
    human = np.rint(quality * 2) / 2  # ties
    return rng, human, quality


def test_identical_metrics_give_large_p():
    rng, human, quality = synthetic()
    metric = quality + rng.normal(0, 0.5, quality.shape)
    report = compare(human, {"a": metric, "b": metric.copy()}, permutations=200, seed=0)
    for items in report.comparisons.values():
        for comparison in items:
            assert comparison.delta == pytest.approx(0.0)
            assert comparison.p_permutation == 1.0  # every delta* (all 0) >= the observed 0


def test_metric_equal_to_human_beats_noise_with_tiny_p():
    rng, human, _ = synthetic(1)
    noise = rng.normal(size=human.shape)
    k = 300
    report = compare(human, {"human_copy": human, "noise": noise}, permutations=k, seed=0)
    for statistic, items in report.comparisons.items():
        forward = next(c for c in items if c.metric_a == "human_copy")
        backward = next(c for c in items if c.metric_a == "noise")
        assert forward.p_permutation == pytest.approx(1 / (1 + k)), statistic
        assert backward.p_permutation == pytest.approx(1.0), statistic
        if statistic in ("tau_sum", "tau_intra"):
            assert forward.p_williams < 1e-3, statistic


@pytest.mark.parametrize("swap", ["cell", "system", "document"])
@pytest.mark.slow
def test_vectorized_permutations_equal_a_brute_force_loop(swap):
    """delta* on each permutation equals scipy on explicitly swapped, standardized matrices."""
    rng, human, quality = synthetic(2, n_docs=7, n_systems=5)
    a = quality + rng.normal(0, 0.5, quality.shape)
    b = np.rint(quality + rng.normal(0, 1.0, quality.shape))
    a[0, 1] = np.nan  # an absent cell
    observed, deltas = permutation_deltas(
        human, a, b, coefficient="kendall", stats=list(reference(human, a)), permutations=20, swap=swap, seed=5
    )
    valid = ~(np.isnan(human) | np.isnan(a) | np.isnan(b))
    za = np.where(valid, (a - a[valid].mean()) / a[valid].std(), np.nan)  # a cell absent in one metric
    zb = np.where(valid, (b - b[valid].mean()) / b[valid].std(), np.nan)  # is absent for both
    expected = {k: reference(human, za)[k] - reference(human, zb)[k] for k in observed}
    for name, value in observed.items():
        assert value == pytest.approx(expected[name], abs=1e-10)
    masks = np.concatenate(list(swap_masks(7, 5, 20, swap, seed=5))).astype(bool)
    for r, mask in enumerate(masks):
        ref_a, ref_b = reference(human, np.where(mask, zb, za)), reference(human, np.where(mask, za, zb))
        for name in observed:
            assert deltas[name][r] == pytest.approx(ref_a[name] - ref_b[name], abs=1e-10), (swap, r, name)


def test_permutation_p_value_formula():
    deltas = np.array([0.1, 0.3, 0.5, np.nan, -0.2])
    p, dropped = permutation_p(0.3, deltas)
    assert p == pytest.approx((1 + 2) / (1 + 4)) and dropped == 1


def test_williams_matches_the_textbook_formula_and_is_one_sided():
    r12, r13, r23, n = 0.6, 0.4, 0.5, 40
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * math.sqrt(
        (n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3)
    )
    assert williams_p(r12, r13, r23, n) == pytest.approx(scipy_stats.t.sf(t, n - 3))
    assert williams_p(r12, r13, r23, n) + williams_p(r13, r12, r23, n) == pytest.approx(1.0)
    assert williams_p(r12, r13, r23, 3) is None


def test_compare_needs_two_metrics_and_a_known_swap():
    _, human, quality = synthetic()
    with pytest.raises(UserError, match="two metrics"):
        compare(human, {"a": quality})
    with pytest.raises(UserError, match="swap"):
        compare(human, {"a": quality, "b": quality}, swap="row")


def test_a_constant_metric_is_refused_by_name():
    _, human, quality = synthetic()
    with pytest.raises(UserError, match=r"^metric 'flat' gives the same score to every summary"):
        compare(human, {"a": quality, "flat": np.full_like(quality, 0.5)}, permutations=10, resamples=0)
    compare(human, {"a": quality, "b": quality[::-1].copy()}, permutations=10, resamples=0)  # control


def test_swapped_pooled_kendall_equals_scipy_on_every_choice_of_copies():
    """The quadratic-form tau_sum of the permutation test, with ties within and across the two metrics."""
    from learned_metrics.meta_eval.significance import SwappedPooledKendall

    rng = np.random.default_rng(4)
    m = 60
    y = rng.integers(0, 5, m).astype(float)
    a = rng.integers(0, 8, m).astype(float)
    b = rng.integers(0, 8, m).astype(float)  # shares values with a: cross-copy ties
    z = (rng.random((25, m)) < 0.5).astype(float)
    z[0], z[1] = 1.0, 0.0
    fast, complement = SwappedPooledKendall(a, b, y).tau(z)
    for row, other, choice in zip(fast, complement, z, strict=True):
        assert row == pytest.approx(scipy_stats.kendalltau(np.where(choice == 1, a, b), y).statistic, abs=1e-12)
        assert other == pytest.approx(scipy_stats.kendalltau(np.where(choice == 1, b, a), y).statistic, abs=1e-12)
    constant = SwappedPooledKendall(np.zeros(m), np.zeros(m), y).tau(z[:2])
    assert np.isnan(constant).all()
