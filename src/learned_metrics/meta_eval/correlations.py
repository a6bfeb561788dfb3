"""The five correlation statistics (docs/meta_eval.md) with bootstrap or Fisher-z CIs, on (documents x systems)
matrices (NaN = absent summary). Each is evaluated for a whole block of resamples at once from count weights
(:mod:`.coefficients`); an undefined per-group correlation (constant scores) is left out of the mean, counted in
``skipped``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from learned_metrics.meta_eval.coefficients import FixedGroups, rowwise_correlation
from learned_metrics.meta_eval.frames import input_grids
from learned_metrics.meta_eval.options import CorrelationSettings, confidence_level
from learned_metrics.meta_eval.resampling import (
    Estimate,
    bootstrap_weights,
    interval,
    joined,
    none_if_nan,
    records_frame,
    single_threaded_blas,
)
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes

# Bonett & Wright (2000): z = atanh(r) has standard error c / sqrt(n - b).
FISHER_CONSTANTS = {"pearson": (3, lambda r: 1.0), "spearman": (3, lambda r: math.sqrt(1 + r * r / 2)),
                    "kendall": (4, lambda r: math.sqrt(0.437))}


@dataclass(frozen=True)
class StatSample:
    """One statistic for a block of resamples: value, groups used and groups skipped, each (R,)."""

    value: np.ndarray
    n: np.ndarray
    skipped: np.ndarray


@dataclass(frozen=True)
class StatResult(Estimate):
    """A statistic's point estimate with its interval; ``n`` counts what the value averages over (strictly ordered
    pairs for ``acc_pair``), ``skipped`` the undefined groups left out (human-tied pairs for ``acc_pair``)."""

    name: str = ""


@dataclass(frozen=True)
class CorrelationReport(Tabular):
    """Result of :func:`correlations`; ``to_json()`` is the ``--json`` file."""

    stats: dict[str, StatResult]
    settings: CorrelationSettings
    n_docs: int
    n_systems: int

    def to_json(self) -> dict:
        return {name: result.to_json() for name, result in self.stats.items()}

    def tables(self) -> list[Table]:
        o = self.settings
        columns = [Column("statistic", kind="text"), Column("value", digits=4),
                   Column("ci", f"{confidence_level(o.confidence)} CI", kind="ci", digits=4), Column("n", kind="count"),
                   Column("skipped", kind="count")]
        rows = [[o.label(name), r.value, Cell(ci=r.ci), r.n, r.skipped] for name, r in self.stats.items()]
        dropped = {name: r.nan_resamples for name, r in self.stats.items() if r.nan_resamples}
        caption = (f"{o.words()} correlations of the metric with the human scores, "
                   f"with {o.intervals(o.resample, o.ci_method)}, seed {o.seed}; skipped: undefined groups left out "
                   "of a mean." + (" Undefined resamples dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items())
                                   + "." if dropped else ""))
        title = f"{self.n_systems} systems x {self.n_docs} documents · {o.words()}"
        return [Table(columns, rows, title=title, caption=caption, key="correlations")]

    def to_frame(self):
        """One row per statistic (value, CI, n, skipped), for notebooks."""
        return records_frame([{"statistic": name, **r.to_json()} for name, r in self.stats.items()],
                             ["statistic", "value", "ci_low", "ci_high", "n", "skipped"])


def _weighted_group_mean(values: np.ndarray, group_weights: np.ndarray, present: np.ndarray) -> StatSample:
    """Mean of per-group values (R, G) weighted by resample counts, skipping undefined groups."""
    defined = ~np.isnan(values)
    weights = np.where(defined, group_weights, 0.0)
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(total > 0, (weights * np.nan_to_num(values)).sum(axis=1) / total, np.nan)
    n = (defined & (group_weights > 0)).sum(axis=1)
    skipped = (~defined & present & (group_weights > 0)).sum(axis=1)
    return StatSample(mean, n, skipped)


class StatisticsEngine:
    """What the statistics need that depends only on the scores, built once: ``metric`` and ``human`` are (C, D, S),
    C copies of the grid (2 in the permutation test: a 0/1 weight picks A's or B's score per cell); :meth:`evaluate`
    takes document counts ``u`` (R, D), system counts ``v`` (R, S) and cell selections ``q``."""

    def __init__(self, metric: np.ndarray, human: np.ndarray, valid: np.ndarray, coefficient: str,
                 stats: Sequence[str]):
        self.stats = tuple(stats)
        self.coefficient = coefficient
        self.valid = valid.astype(np.float64)
        self.metric = np.where(valid, metric, 0.0)
        self.human = np.where(valid, human, 0.0)
        self.by_doc = self.by_system = self.pooled = None
        if {"tau_pair", "acc_pair"} & set(self.stats):
            self.by_doc = FixedGroups(self._grouped(self.metric, -2), self._grouped(self.human, -2), coefficient,
                                      correlation="tau_pair" in self.stats, accuracy="acc_pair" in self.stats)
        if "tau_intra" in self.stats:
            self.by_system = FixedGroups(self._grouped(self.metric, -1), self._grouped(self.human, -1), coefficient)
        if "tau_sum" in self.stats:
            self.pooled = FixedGroups(self.metric.reshape(1, -1), self.human.reshape(1, -1), coefficient)

    @staticmethod
    def _grouped(cells: np.ndarray, axis: int) -> np.ndarray:
        """(..., C, D, S) -> one group per document (``axis`` -2: (..., D, C*S)) or per system (-1: (..., S, C*D))."""
        moved = np.moveaxis(cells, axis, -3)
        return moved.reshape(*moved.shape[:-2], -1)

    def evaluate(self, u: np.ndarray, v: np.ndarray, q: np.ndarray | None = None) -> dict[str, StatSample]:
        """All requested statistics for one block of resamples."""
        q = self.valid[None] if q is None else q * self.valid[None]
        q = np.broadcast_to(q, (u.shape[0], *self.valid.shape))
        out: dict[str, StatSample] = {}
        if "tau_sys" in self.stats:
            out["tau_sys"] = self._tau_sys(u, v, q)
        if "tau_sum" in self.stats:
            out["tau_sum"] = self._tau_sum(u, v, q)
        if self.by_doc is not None:
            within_doc = self._grouped(v[:, None, None, :] * q, -2)
            if "tau_pair" in self.stats:
                per_doc = self.by_doc.correlation(within_doc)
                out["tau_pair"] = _weighted_group_mean(per_doc, u, within_doc.sum(axis=-1) > 0)
            if "acc_pair" in self.stats:
                out["acc_pair"] = self._acc_pair(within_doc, u)
        if "tau_intra" in self.stats:
            within_system = self._grouped(u[:, None, :, None] * q, -1)
            per_system = self.by_system.correlation(within_system)
            out["tau_intra"] = _weighted_group_mean(per_system, v, within_system.sum(axis=-1) > 0)
        return {name: out[name] for name in self.stats}

    def difference(self, u: np.ndarray, v: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray]:
        """Each statistic with the cell selection ``q`` minus with ``1 - q`` (metric A's value minus B's): (R,)."""
        first, second = self.evaluate(u, v, q), self.evaluate(u, v, 1 - q)
        return {name: first[name].value - second[name].value for name in self.stats}

    def _tau_sys(self, u: np.ndarray, v: np.ndarray, q: np.ndarray) -> StatSample:
        cell_weights = u[:, None, :, None] * q  # (R, C, D, S)
        totals = cell_weights.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            metric_means = (cell_weights * self.metric).sum(axis=(1, 2)) / totals
            human_means = (cell_weights * self.human).sum(axis=(1, 2)) / totals
        system_weights = np.where(totals > 0, v, 0.0)
        value = rowwise_correlation(metric_means, human_means, system_weights, self.coefficient)
        return StatSample(value, (system_weights > 0).sum(axis=1), np.isnan(value).astype(int))

    def _tau_sum(self, u: np.ndarray, v: np.ndarray, q: np.ndarray) -> StatSample:
        weights = (u[:, None, :, None] * v[:, None, None, :] * q).reshape(u.shape[0], 1, -1)
        value = self.pooled.correlation(weights)[:, 0]
        return StatSample(value, (weights > 0).sum(axis=(1, 2)), np.isnan(value).astype(int))

    def _acc_pair(self, within_doc: np.ndarray, u: np.ndarray) -> StatSample:
        agreeing, strict, all_pairs = self.by_doc.pair_agreement(within_doc)
        strict_total = (u * strict).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(strict_total > 0, (u * agreeing).sum(axis=1) / strict_total, np.nan)
        tied = (u * (all_pairs - strict)).sum(axis=1)
        return StatSample(value, np.rint(strict_total).astype(int), np.rint(tied).astype(int))


def items_per_correlation(statistic: str, valid: np.ndarray) -> int | None:
    """n of one correlation of the statistic (Fisher intervals, Williams' test): systems for tau_sys, present
    cells for tau_sum, and for the per-group means the largest group, as in ``nlpstats``; None for acc_pair."""
    return {"tau_sys": int(valid.any(axis=0).sum()), "tau_sum": int(valid.sum()),
            "tau_pair": int(valid.sum(axis=1).max()), "tau_intra": int(valid.sum(axis=0).max())}.get(statistic)


def fisher_interval(r: float | None, n: int | None, coefficient: str,
                    confidence: float = 0.95) -> tuple[float, float] | None:
    """Fisher-z interval tanh(atanh(r) -+ z * c / sqrt(n - b)); None where undefined (n <= b). At |r| = 1
    (atanh infinite) the interval is the point, [1, 1] or [-1, -1], as ``nlpstats`` returns."""
    from scipy.stats import norm

    b, c = FISHER_CONSTANTS[coefficient]
    if r is None or n is None or n <= b or math.isnan(r):
        return None
    if abs(r) >= 1:
        return math.copysign(1.0, r), math.copysign(1.0, r)
    half = norm.ppf(1 - (1 - confidence) / 2) * c(r) / math.sqrt(n - b)
    z = math.atanh(r)
    return math.tanh(z - half), math.tanh(z + half)


@takes(CorrelationSettings)
def correlations(human: object, metric: object, *, axes: str = "documents x systems",
                 settings: CorrelationSettings) -> CorrelationReport:
    """Point estimates and percentile-bootstrap (or Fisher-z) CIs of the chosen statistics; ``human`` and ``metric``
    are matrices with the named ``axes`` (NaN = absent summary) or long DataFrames (:mod:`.frames`)."""
    o = settings
    human_grid, grids = input_grids(human, {"metric": metric}, axes)
    metric_grid = grids["metric"]
    resamples = 0 if o.ci_method == "fisher" else o.resamples
    valid = ~(np.isnan(human_grid) | np.isnan(metric_grid))
    engine = StatisticsEngine(metric_grid[None], human_grid[None], valid[None], o.coefficient, o.stats)
    n_docs, n_systems = valid.shape
    point = engine.evaluate(np.ones((1, n_docs)), np.ones((1, n_systems)))
    samples = bootstrap_distribution(engine, n_docs, n_systems, resamples, o.resample, o.seed)
    results = {}
    for name in o.stats:
        drawn = interval(samples[name], o.confidence)
        value = none_if_nan(float(point[name].value[0]))
        ci = (fisher_interval(value, items_per_correlation(name, valid), o.coefficient, o.confidence)
              if o.ci_method == "fisher" else drawn.ci)
        results[name] = StatResult(value, ci, int(point[name].n[0]), int(point[name].skipped[0]), resamples,
                                   drawn.dropped, name=name)
    return CorrelationReport(results, settings, n_docs, n_systems)


def bootstrap_distribution(engine: StatisticsEngine, n_docs: int, n_systems: int, resamples: int, resample: str,
                           seed: int, contrast: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every statistic on every bootstrap resample: name -> (resamples,) values, NaN where undefined; with a cell
    selection ``contrast``, the :meth:`~StatisticsEngine.difference` it picks (paired: one draw for both)."""
    with single_threaded_blas():
        blocks = [{name: s.value for name, s in engine.evaluate(u, v).items()} if contrast is None
                  else engine.difference(u, v, contrast)
                  for u, v in bootstrap_weights(n_docs, n_systems, resamples, resample, seed)]
    return joined({name: [block[name] for block in blocks] for name in engine.stats})
