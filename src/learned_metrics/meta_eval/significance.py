"""Does metric A correlate better with the human scores than metric B?

Permutation test (Deutsch et al., 2021): both metrics are standardized (so
their scores can trade places), delta = r(A, H) - r(B, H); each permutation
swaps A's and B's scores per cell (default), per system or per document, and
p = (1 + #{delta* >= delta}) / (1 + k), one-sided for "A better than B".
The two metrics stay fixed values; a permutation is a 0/1 weight choosing A's
or B's copy of each cell, so all permutations of a block are evaluated at once.

Williams' test (Williams 1959; Graham & Baldwin 2014) is the parametric
alternative for dependent correlations sharing H, with n the number of items
one correlation is computed over (for per-document/per-system means, the
items of one group, as in ``nlpstats``); it has no version for ``acc_pair``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.correlations import STATISTICS, StatisticsEngine, check_options
from learned_metrics.meta_eval.frames import input_grids
from learned_metrics.meta_eval.resampling import SWAP_MODES, single_threaded_blas, swap_masks


@dataclass(frozen=True)
class Comparison:
    """One statistic for one ordered pair of metrics: is ``metric_a`` better than ``metric_b``?"""

    statistic: str
    metric_a: str
    metric_b: str
    value_a: float | None
    value_b: float | None
    delta: float | None
    p_permutation: float | None
    p_williams: float | None
    permutations: int
    nan_permutations: int

    def to_json(self) -> dict:
        return {
            "metric_a": self.metric_a,
            "metric_b": self.metric_b,
            "value_a": self.value_a,
            "value_b": self.value_b,
            "delta": self.delta,
            "p_permutation": self.p_permutation,
            "p_williams": self.p_williams,
            "permutations": self.permutations,
            "nan_permutations": self.nan_permutations,
        }


@dataclass(frozen=True)
class ComparisonReport:
    """Result of :func:`compare`: comparisons grouped by statistic; ``to_json()`` is the ``--json`` file."""

    comparisons: dict[str, list[Comparison]]
    coefficient: str
    swap: str
    permutations: int
    seed: int

    def to_json(self) -> dict:
        return {name: [c.to_json() for c in items] for name, items in self.comparisons.items()}

    def to_frame(self):
        """One row per (statistic, metric A, metric B), for notebooks."""
        import pandas as pd

        return pd.DataFrame([{"statistic": name, **c.to_json()} for name, items in self.comparisons.items()
                             for c in items])


def standardize(scores: np.ndarray) -> np.ndarray:
    """z-scores over all present cells, so two metrics' scores are exchangeable under the null."""
    std = np.nanstd(scores)
    if not std > 0:
        raise UserError("a metric gives the same score to every summary; it cannot be compared")
    return (scores - np.nanmean(scores)) / std


def williams_p(r12: float, r13: float, r23: float, n: int) -> float | None:
    """One-sided p of Williams' t for r12 > r13 (variable 1 = human, 2 = A, 3 = B); None if undefined."""
    if n <= 3 or any(v is None or math.isnan(v) for v in (r12, r13, r23)):
        return None
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r23) ** 3
    if denominator <= 0:
        return None
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)
    from scipy import stats as scipy_stats  # imported here: scipy.stats costs ~1 s at CLI start-up

    return float(scipy_stats.t.sf(t, n - 3))


def _williams_n(statistic: str, valid: np.ndarray) -> int | None:
    """Items one correlation of the statistic is computed over."""
    return {
        "tau_sys": int(valid.any(axis=0).sum()),
        "tau_sum": int(valid.sum()),
        "tau_pair": int(valid.sum(axis=1).max()),
        "tau_intra": int(valid.sum(axis=0).max()),
    }.get(statistic)


def _point(engine: StatisticsEngine, n_docs: int, n_systems: int, q: np.ndarray | None = None) -> dict[str, float]:
    values = engine.evaluate(np.ones((1, n_docs)), np.ones((1, n_systems)), q)
    return {name: float(sample.value[0]) for name, sample in values.items()}


def permutation_deltas(
    human: np.ndarray,
    metric_a: np.ndarray,
    metric_b: np.ndarray,
    *,
    coefficient: str,
    stats: Sequence[str],
    permutations: int,
    swap: str,
    seed: int,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Observed delta = r(A,H) - r(B,H) per statistic, and delta on every permutation (NaN if undefined)."""
    valid = ~(np.isnan(human) | np.isnan(metric_a) | np.isnan(metric_b))
    a = standardize(np.where(valid, metric_a, np.nan))
    b = standardize(np.where(valid, metric_b, np.nan))
    both = np.stack([a, b])
    engine = StatisticsEngine(both, np.stack([human, human]), np.stack([valid, valid]), coefficient, stats)
    n_docs, n_systems = human.shape
    keep_a = np.array([1.0, 0.0])[:, None, None][None]
    observed_a = _point(engine, n_docs, n_systems, keep_a)
    observed_b = _point(engine, n_docs, n_systems, 1 - keep_a)
    observed = {name: observed_a[name] - observed_b[name] for name in stats}
    chunks: dict[str, list[np.ndarray]] = {name: [] for name in stats}
    with single_threaded_blas():
        for swapped in swap_masks(n_docs, n_systems, permutations, swap, seed):
            pick_a = np.stack([1 - swapped, swapped], axis=1)  # copy 0 = A's score, copy 1 = B's
            ones_d, ones_s = np.ones((len(swapped), n_docs)), np.ones((len(swapped), n_systems))
            first = engine.evaluate(ones_d, ones_s, pick_a)
            second = engine.evaluate(ones_d, ones_s, 1 - pick_a)
            for name in stats:
                chunks[name].append(first[name].value - second[name].value)
    deltas = {name: np.concatenate(parts) if parts else np.empty(0) for name, parts in chunks.items()}
    return observed, deltas


def permutation_p(observed: float, deltas: np.ndarray) -> tuple[float | None, int]:
    """p = (1 + #{delta* >= delta}) / (1 + k) over the defined permutations; also the count dropped."""
    defined = deltas[~np.isnan(deltas)]
    if math.isnan(observed):
        return None, int(deltas.size - defined.size)
    # A tiny tolerance keeps permutations that reproduce the observed delta up to rounding counted as >=.
    exceed = int((defined >= observed - 1e-12).sum())
    return (1 + exceed) / (1 + defined.size), int(deltas.size - defined.size)


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def compare(
    human: object,
    metrics: dict[str, object],
    *,
    coefficient: str = "kendall",
    stats: Sequence[str] = STATISTICS,
    permutations: int = 1000,
    swap: str = "cell",
    seed: int = 0,
    axes: str = "documents x systems",
) -> ComparisonReport:
    """Permutation and Williams tests for every ordered pair of metrics (A better than B), per statistic.

    ``human`` and each metric are matrices with the named ``axes``, or long DataFrames (NaN = absent).
    Both directions of a pair come from the same permutations.
    """
    stats = tuple(stats)
    check_options(coefficient, stats)
    if swap not in SWAP_MODES:
        raise UserError(f"unknown swap mode '{swap}', expected one of: {', '.join(SWAP_MODES)}")
    if len(metrics) < 2:
        raise UserError(f"compare needs at least two metrics, got {len(metrics)}")
    if permutations < 1:
        raise UserError(f"--permutations must be >= 1, got {permutations}")
    human_grid, grids = input_grids(human, dict(metrics), axes)
    for name, grid in grids.items():
        if grid.shape != human_grid.shape:
            raise UserError(f"{name}: shape {grid.shape} differs from the human matrix {human_grid.shape}")
    names = list(grids)
    comparisons: dict[str, list[Comparison]] = {name: [] for name in stats}
    for i, name_a in enumerate(names):
        for name_b in names[i + 1 :]:
            pair = _compare_pair(human_grid, grids[name_a], grids[name_b], coefficient, stats, permutations, swap, seed)
            for statistic in stats:
                forward, backward = _both_directions(statistic, name_a, name_b, pair, permutations)
                comparisons[statistic].extend([forward, backward])
    return ComparisonReport(comparisons, coefficient, swap, permutations, seed)


def _compare_pair(human, a, b, coefficient, stats, permutations, swap, seed) -> dict:
    """Everything both directions of one metric pair need."""
    observed, deltas = permutation_deltas(
        human, a, b, coefficient=coefficient, stats=stats, permutations=permutations, swap=swap, seed=seed
    )
    valid = ~(np.isnan(human) | np.isnan(a) | np.isnan(b))
    present = np.stack([valid])
    n_docs, n_systems = human.shape

    def values(metric: np.ndarray, target: np.ndarray) -> dict[str, float]:
        engine = StatisticsEngine(metric[None], target[None], present, coefficient, stats)
        return _point(engine, n_docs, n_systems)

    return {
        "observed": observed,
        "deltas": deltas,
        "r_a": values(a, human),
        "r_b": values(b, human),
        "r_ab": values(a, b),
        "valid": valid,
    }


def _both_directions(statistic: str, name_a: str, name_b: str, pair: dict, permutations: int):
    observed = pair["observed"][statistic]
    deltas = pair["deltas"][statistic]
    p_forward, dropped = permutation_p(observed, deltas)
    p_backward, _ = permutation_p(-observed, -deltas)
    r_a, r_b, r_ab = pair["r_a"][statistic], pair["r_b"][statistic], pair["r_ab"][statistic]
    n = _williams_n(statistic, pair["valid"])
    w_forward = williams_p(r_a, r_b, r_ab, n) if n else None
    w_backward = williams_p(r_b, r_a, r_ab, n) if n else None

    def make(a, b, value_a, value_b, delta, p_perm, p_will) -> Comparison:
        return Comparison(
            statistic,
            a,
            b,
            _none_if_nan(value_a),
            _none_if_nan(value_b),
            _none_if_nan(delta),
            p_perm,
            p_will,
            permutations,
            dropped,
        )

    return (
        make(name_a, name_b, r_a, r_b, r_a - r_b, p_forward, w_forward),
        make(name_b, name_a, r_b, r_a, r_b - r_a, p_backward, w_backward),
    )
