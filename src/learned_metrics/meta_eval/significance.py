"""Does metric A correlate better with the human scores than metric B? Permutation, paired bootstrap and Williams
tests per statistic (docs/meta_eval.md, ``meta-eval compare``). Both metrics are standardized so their scores can
trade places; a permutation is a 0/1 weight choosing A's or B's copy of each cell, so a block is evaluated at once."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.coefficients import tau_b_from_sums
from learned_metrics.meta_eval.correlations import StatisticsEngine, bootstrap_distribution, items_per_correlation
from learned_metrics.meta_eval.frames import input_grids
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.options import (
    CORRELATION_TESTS,
    ComparisonSettings,
    check,
    confidence_level,
    resolution_sentence,
)
from learned_metrics.meta_eval.resampling import (
    interval,
    joined,
    none_if_nan,
    records_frame,
    single_threaded_blas,
    swap_masks,
)
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.workers import run_jobs


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
    p_bootstrap: float | None = None
    delta_ci: tuple[float, float] | None = None
    resamples: int = 0
    p_adjusted: dict[str, float | None] = field(default_factory=dict)

    def p(self, test: str, *, adjusted: bool = True) -> float | None:
        """The p-value of ``test`` (permutation, bootstrap, williams), corrected when a correction was asked."""
        if adjusted and test in self.p_adjusted:
            return self.p_adjusted[test]
        return {"permutation": self.p_permutation, "bootstrap": self.p_bootstrap, "williams": self.p_williams}[test]

    def to_json(self) -> dict:
        out = asdict(self)
        del out["statistic"]  # the key the comparison is listed under
        return {**out, "delta_ci": None if self.delta_ci is None else list(self.delta_ci)}


@dataclass(frozen=True)
class ComparisonReport(Tabular):
    """Result of :func:`compare`: comparisons grouped by statistic; ``to_json()`` is the ``--json`` file."""

    comparisons: dict[str, list[Comparison]]
    options: ComparisonSettings

    def to_json(self) -> dict:
        return {name: [c.to_json() for c in items] for name, items in self.comparisons.items()}

    @property
    def family(self) -> int:
        """Tests per statistic that the correction counts: the ordered pairs one-sided, the unordered two-sided."""
        step = 2 if self.options.alternative == "two-sided" else 1
        return max((len(items) // step for items in self.comparisons.values()), default=0)

    def tables(self) -> list[Table]:
        o = self.options
        two_sided = o.alternative == "two-sided"
        hypothesis = "A and B differ" if two_sided else "A correlates better than B"
        columns = [Column("statistic", kind="text"), Column("metric_a", "A", kind="text"),
                   Column("metric_b", "B", kind="text"), Column("value_a", "r(A)"), Column("value_b", "r(B)"),
                   Column("delta"), Column("delta_ci", f"{confidence_level(o.confidence)} CI delta", kind="ci"),
                   Column("p_permutation", "p perm", kind="p"), Column("p_bootstrap", "p boot", kind="p"),
                   Column("p_williams", "p Williams", kind="p")]
        rows = [[o.label(statistic), c.metric_a, c.metric_b, c.value_a, c.value_b, c.delta, Cell(ci=c.delta_ci),
                 c.p("permutation"), c.p("bootstrap"), c.p("williams")]
                for statistic, items in self.comparisons.items() for c in (items[::2] if two_sided else items)]
        corrected = (f" p-values {o.corrected()}over the {'unordered' if two_sided else 'ordered'} pairs of each "
                     "statistic; the uncorrected ones are in the JSON." if o.correction != "none" else "")
        corrected += resolution_sentence(self.family, o.permutations, o.correction, getattr(o, "alpha", 0.05),
                                         "Note (p perm)")  # compare marks nothing: the conventional 0.05
        caption = (f"H1: {hypothesis}, for {o.words()} correlations with the human scores: "
                   f"{'; '.join(o.tests())}; delta CI from {o.intervals()}, seed {o.seed}.{corrected}")
        return [Table(columns, rows, key="compare", caption=caption,
                      title=f"H1: {hypothesis} · {o.words()} · seed {o.seed}")]

    def to_frame(self):
        """One row per (statistic, metric A, metric B), for notebooks."""
        return records_frame([{"statistic": name, **c.to_json()} for name, items in self.comparisons.items()
                              for c in items])


def standardize(scores: np.ndarray, name: str | None = None) -> np.ndarray:
    """z-scores over all present cells, so two metrics' scores are exchangeable under the null; ``name`` is the
    metric a refusal names."""
    std = np.nanstd(scores)
    if not std > 0:
        which = f"metric {name!r}" if name is not None else "a metric"
        raise UserError(f"{which} gives the same score to every summary; it cannot be compared")
    return (scores - np.nanmean(scores)) / std


def williams_p(r12: float, r13: float, r23: float, n: int, *, alternative: str = "greater",
               absolute: bool = False) -> float | None:
    """p of Williams' t for r12 > r13 (or r12 != r13 two-sided); variable 1 = human, 2 = A, 3 = B; ``absolute``
    takes |r| of all three first, as the WMT scripts and ``nlpstats`` do. None if undefined."""
    check(alternative=alternative)
    if n <= 3 or any(v is None or math.isnan(v) for v in (r12, r13, r23)):
        return None
    if absolute:
        r12, r13, r23 = abs(r12), abs(r13), abs(r23)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r23) ** 3
    if denominator <= 0:
        return None
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)
    from scipy import stats as scipy_stats  # imported here: scipy.stats costs ~1 s at CLI start-up

    if alternative == "two-sided":
        return float(min(1.0, 2 * scipy_stats.t.sf(abs(t), n - 3)))
    return float(scipy_stats.t.sf(t, n - 3))


def _point(engine: StatisticsEngine, n_docs: int, n_systems: int, q: np.ndarray | None = None) -> dict[str, float]:
    values = engine.evaluate(np.ones((1, n_docs)), np.ones((1, n_systems)), q)
    return {name: float(sample.value[0]) for name, sample in values.items()}


KEEP_A = np.array([1.0, 0.0])[None, :, None, None]  # cell selection: copy 0 (metric A) only


def _standardized(human: np.ndarray, metric_a: np.ndarray, metric_b: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells all three have, and both metrics standardized over them (NaN elsewhere)."""
    valid = ~(np.isnan(human) | np.isnan(metric_a) | np.isnan(metric_b))
    return valid, standardize(np.where(valid, metric_a, np.nan)), standardize(np.where(valid, metric_b, np.nan))


def _pair_engine(human: np.ndarray, valid: np.ndarray, a: np.ndarray, b: np.ndarray, coefficient: str,
                 stats: Sequence[str]) -> StatisticsEngine:
    """One engine over both metrics (copy 0 = A, copy 1 = B), on the cells all three have (``_standardized``)."""
    return StatisticsEngine(np.stack([a, b]), np.stack([human, human]), np.stack([valid, valid]), coefficient, stats)


def _outer_sign(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """sign(u_c - v_d) for every (c, d), as int8 (a quarter of the memory traffic of float64)."""
    return np.greater.outer(u, v).astype(np.int8) - np.less.outer(u, v).astype(np.int8)


class SwappedPooledKendall:
    """Pooled tau-b (``tau_sum``) when every cell takes metric A's or B's score, for a block of choices at once:
    with z_c = 1 where cell c takes A's score, tau-b's numerator and x-tied pair count are quadratic forms in z, so
    a block of permutations (and its complement) costs two matrix products instead of one sort per permutation."""

    MAX_CELLS = 6000  # two float32 m x m matrices (the ties one sparse when few): 288 MB at the limit

    def __init__(self, a: np.ndarray, b: np.ndarray, y: np.ndarray):
        m = len(y)
        off_diagonal = ~np.eye(m, dtype=bool)
        sy = _outer_sign(y, y)
        self.signs = self._form(a, b, lambda u, v: _outer_sign(u, v) * sy)
        self.ties = self._form(a, b, lambda u, v: (u[:, None] == v[None, :]) & off_diagonal)
        self.pairs = m * (m - 1) / 2
        self.untied_y = self.pairs - ((sy == 0) & off_diagonal).sum() / 2

    @staticmethod
    def _form(a: np.ndarray, b: np.ndarray, relation) -> tuple[float, np.ndarray, np.ndarray, float, np.ndarray]:
        """1/2 sum_{c != d} relation(x_c, x_d) with x = z a + (1 - z) b as constant + linear.z + z'Qz; Q is symmetric
        (relation is symmetric, or antisymmetric times sign(dy)), which also gives the complement's value."""
        bb, ab, ba, aa = (relation(u, v).astype(np.float32) for u, v in ((b, b), (a, b), (b, a), (a, a)))
        linear = 0.5 * ((ab - bb).sum(axis=1, dtype=np.float64) + (ba - bb).sum(axis=0, dtype=np.float64))
        quadratic = 0.5 * (aa - ab - ba + bb)  # small integers and halves: exact in float32
        row_sums = quadratic.sum(axis=1, dtype=np.float64)
        if np.count_nonzero(quadratic) < 0.02 * quadratic.size:  # ties of continuous scores: a sparse product
            from scipy import sparse

            quadratic = sparse.csr_matrix(quadratic)
        return 0.5 * bb.sum(dtype=np.float64), linear, quadratic, float(row_sums.sum()), row_sums

    @staticmethod
    def _values(form: tuple[float, np.ndarray, np.ndarray, float, np.ndarray], z: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """The form at ``z`` and at its complement ``1 - z``, from one matrix product."""
        constant, linear, quadratic, total, row_sums = form
        zq = (quadratic @ z.T.astype(np.float32)).T if not isinstance(quadratic, np.ndarray) else (
            z.astype(np.float32) @ quadratic)  # Q is symmetric: Q z' is (z Q)'
        zqz = np.einsum("rm,rm->r", np.asarray(zq, dtype=np.float64), z)
        return constant + z @ linear + zqz, constant + (1 - z) @ linear + total - 2 * (z @ row_sums) + zqz

    def tau(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """tau-b for every row of 0/1 choices ``z`` (R, m) and for its complement; NaN where a side is constant."""
        signs, ties = self._values(self.signs, z), self._values(self.ties, z)
        return tuple(tau_b_from_sums(s, self.pairs - t, self.untied_y) for s, t in zip(signs, ties, strict=True))


def permutation_deltas(human: np.ndarray, metric_a: np.ndarray, metric_b: np.ndarray, *, coefficient: str,
                       stats: Sequence[str], permutations: int, swap: str, seed: int
                       ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Observed delta = r(A,H) - r(B,H) per statistic, and delta on every permutation (NaN if undefined)."""
    value_a, value_b, deltas = _permutation_run(human, metric_a, metric_b, coefficient=coefficient, stats=stats,
                                                permutations=permutations, swap=swap, seed=seed)
    return {name: value_a[name] - value_b[name] for name in stats}, deltas


def _permutation_run(human: np.ndarray, metric_a: np.ndarray, metric_b: np.ndarray, *, coefficient: str,
                     stats: Sequence[str], permutations: int, swap: str, seed: int
                     ) -> tuple[dict[str, float], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """r(A,H) and r(B,H) per statistic (standardizing changes no correlation), and delta on every permutation;
    Kendall's ``tau_sum`` of at most ``MAX_CELLS`` cells through :class:`SwappedPooledKendall`, the rest the engine."""
    valid, a, b = _standardized(human, metric_a, metric_b)
    pooled = None
    if coefficient == "kendall" and "tau_sum" in stats and valid.sum() <= SwappedPooledKendall.MAX_CELLS:
        pooled = SwappedPooledKendall(a[valid], b[valid], human[valid])
    engine_stats = [name for name in stats if not (pooled is not None and name == "tau_sum")]
    engine = _pair_engine(human, valid, a, b, coefficient, engine_stats)
    n_docs, n_systems = human.shape
    value_a, value_b = (_point(engine, n_docs, n_systems, q) if engine_stats else {} for q in (KEEP_A, 1 - KEEP_A))
    if pooled is not None:
        with_a, with_b = pooled.tau(np.ones((1, int(valid.sum()))))
        value_a["tau_sum"], value_b["tau_sum"] = float(with_a[0]), float(with_b[0])
    blocks: list[dict[str, np.ndarray]] = []
    with single_threaded_blas():
        for swapped in swap_masks(n_docs, n_systems, permutations, swap, seed):
            pick_a = np.stack([1 - swapped, swapped], axis=1)  # copy 0 = A's score, copy 1 = B's
            ones_d, ones_s = np.ones((len(swapped), n_docs)), np.ones((len(swapped), n_systems))
            blocks.append(engine.difference(ones_d, ones_s, pick_a) if engine.stats else {})
            if pooled is not None:
                first, second = pooled.tau((1 - swapped)[:, valid])  # z = 1 where A's copy keeps A's score
                blocks[-1]["tau_sum"] = first - second
    return value_a, value_b, joined({name: [block[name] for block in blocks] for name in stats})


def bootstrap_deltas(human: np.ndarray, metric_a: np.ndarray, metric_b: np.ndarray, *, coefficient: str,
                     stats: Sequence[str], resamples: int, resample: str, seed: int) -> dict[str, np.ndarray]:
    """delta* = r*(A,H) - r*(B,H) on paired bootstrap resamples: the same documents/systems drawn for A and B."""
    engine = _pair_engine(human, *_standardized(human, metric_a, metric_b), coefficient, stats)
    return bootstrap_distribution(engine, *human.shape, resamples, resample, seed, contrast=KEEP_A)


def permutation_p(observed: float, deltas: np.ndarray, alternative: str = "greater") -> tuple[float | None, int]:
    """p = (1 + #{delta* >= delta}) / (1 + k) over the defined permutations (|delta*| >= |delta| when
    two-sided); also the count dropped."""
    defined = deltas[~np.isnan(deltas)]
    if math.isnan(observed):
        return None, int(deltas.size - defined.size)
    if alternative == "two-sided":
        defined, observed = np.abs(defined), abs(observed)
    exceed = int((defined >= observed - 1e-12).sum())  # the tolerance: a delta* equal to delta up to rounding counts
    return (1 + exceed) / (1 + defined.size), int(deltas.size - defined.size)


def bootstrap_p(observed: float, deltas: np.ndarray, alternative: str = "greater") -> float | None:
    """Paired bootstrap p: how often the resampled deltas, shifted to the null (delta* - delta), reach delta;
    (1 + #) / (1 + k) like the permutation p, so it is never 0 (the paper's #/k differs by < 1/k)."""
    if np.isnan(deltas).all():
        return None
    return permutation_p(observed, deltas - observed, alternative)[0]


@takes(ComparisonSettings)
def compare(human: object, metrics: dict[str, object], *, axes: str = "documents x systems",
            settings: ComparisonSettings) -> ComparisonReport:
    """Permutation, paired bootstrap and Williams tests for every ordered pair of metrics, per statistic, both
    directions from the same draws; ``correction`` adjusts each test's p-values over one statistic's comparisons
    (ordered pairs one-sided, unordered two-sided) into ``p_adjusted``. ``workers`` changes no result."""
    if len(metrics) < 2:
        raise UserError(f"compare needs at least two metrics, got {len(metrics)}")
    human_grid, grids = input_grids(human, metrics, axes)
    names = list(grids)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    for name in names:
        standardize(grids[name], name)  # a constant metric: one clear error, naming it, before any work
    results = run_jobs(_compare_pair, [(human_grid, grids[a], grids[b], settings) for a, b in pairs], settings.workers)
    comparisons: dict[str, list[Comparison]] = {name: [] for name in settings.stats}
    for (name_a, name_b), pair in zip(pairs, results, strict=True):
        for statistic in settings.stats:
            comparisons[statistic].extend(_both_directions(statistic, name_a, name_b, pair, settings))
    if settings.correction != "none":
        comparisons = {name: _corrected(items, settings) for name, items in comparisons.items()}
    return ComparisonReport(comparisons, settings)


def _corrected(items: list[Comparison], options: ComparisonSettings) -> list[Comparison]:
    """Each test's p-values adjusted over the family; a two-sided pair counts once (both directions share p)."""
    step = 1 if options.alternative == "greater" else 2
    adjusted = {test: adjust_p_values([c.p(test, adjusted=False) for c in items[::step]], options.correction)
                for test in CORRELATION_TESTS}
    return [replace(c, p_adjusted={test: adjusted[test][i // step] for test in CORRELATION_TESTS})
            for i, c in enumerate(items)]


def _compare_pair(human: np.ndarray, a: np.ndarray, b: np.ndarray, options: ComparisonSettings) -> dict:
    """Everything both directions of one metric pair need."""
    common = {"coefficient": options.coefficient, "stats": options.stats, "seed": options.seed}
    r_a, r_b, deltas = _permutation_run(human, a, b, permutations=options.permutations, swap=options.swap, **common)
    boot = (bootstrap_deltas(human, a, b, resamples=options.resamples, resample=options.resample, **common)
            if options.resamples else None)
    valid = ~(np.isnan(human) | np.isnan(a) | np.isnan(b))
    r_ab = _point(StatisticsEngine(a[None], b[None], valid[None], options.coefficient, options.stats), *human.shape)
    return {"deltas": deltas, "boot": boot, "r_a": r_a, "r_b": r_b, "r_ab": r_ab, "valid": valid}


def _both_directions(statistic: str, name_a: str, name_b: str, pair: dict, o: ComparisonSettings) -> list[Comparison]:
    """A against B and B against A from the same draws: the differences' signs flipped."""
    deltas, boot = pair["deltas"][statistic], None if pair["boot"] is None else pair["boot"][statistic]
    r = {name_a: pair["r_a"][statistic], name_b: pair["r_b"][statistic]}
    n = items_per_correlation(statistic, pair["valid"])
    ci = None if boot is None else interval(boot, o.confidence).ci
    out = []
    for sign, a, b in ((1.0, name_a, name_b), (-1.0, name_b, name_a)):
        observed = sign * (r[name_a] - r[name_b])
        p_perm, dropped = permutation_p(observed, sign * deltas, o.alternative)
        p_boot = None if boot is None else bootstrap_p(observed, sign * boot, o.alternative)
        p_will = (williams_p(r[a], r[b], pair["r_ab"][statistic], n, alternative=o.alternative,
                             absolute=o.williams == "abs") if n else None)
        delta_ci = None if ci is None else ci if sign > 0 else (-ci[1], -ci[0])
        out.append(Comparison(statistic, a, b, none_if_nan(r[a]), none_if_nan(r[b]), none_if_nan(r[a] - r[b]),
                              p_perm, p_will, o.permutations, dropped, p_boot, delta_ci, o.resamples))
    return out
