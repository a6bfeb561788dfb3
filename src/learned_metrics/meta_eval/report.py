"""The paper table: many metrics side by side, each cell a value with its CI, the best in bold, and markers
for significant differences (the coherence paper's Table 4.3 layout): correlations (:func:`correlation_report`) or
ROC AUC per corpus (:func:`auc_report`, and ``benchmark``'s BAcc and AUC tables), one :class:`ReportTable` for all.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.correlations import correlations
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.options import (
    AucReportSettings,
    AucSettings,
    BenchmarkSettings,
    ComparisonSettings,
    CorrelationSettings,
    ReportSettings,
    baseline_names,
    resolution_sentence,
    statistic_label,
)
from learned_metrics.meta_eval.resampling import interval, joined, none_if_nan, records_frame
from learned_metrics.meta_eval.rows import check_paired
from learned_metrics.meta_eval.significance import compare, permutation_p
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.validate import renamed_keywords
from learned_metrics.workers import run_jobs


@dataclass
class ReportCell:
    value: float | None
    ci: tuple[float, float] | None
    beats: list[int] = field(default_factory=list)  # 1-based numbers of the metrics this one beats significantly
    best: bool = False

    @classmethod
    def of(cls, estimate: Any) -> ReportCell:
        """The cell of an :class:`~.resampling.Estimate` (or any result with ``value`` and ``ci``)."""
        return cls(estimate.value, estimate.ci)


@dataclass
class ReportTable(Tabular):
    """Rows = metrics (numbered from 1 in the order given), columns = statistics (or corpora in AUC mode)."""

    metrics: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], ReportCell]
    caption: str
    settings: dict[str, Any]
    title: str = ""

    def cell(self, metric: str, column: str) -> ReportCell:
        return self.cells[(metric, column)]

    def tables(self) -> list[Table]:
        coefficient = self.settings.get("coefficient")
        columns = [Column("#", kind="count"), Column("metric", kind="text"),
                   *(Column(name, kind="estimate", share=True) if coefficient is None  # AUC mode: corpora
                     else Column(name, statistic_label(name, coefficient), kind="estimate",
                                 latex=statistic_label(name, coefficient, latex=True), share=name == "acc_pair")
                     for name in self.columns)]
        rows = [[number, metric, *(Cell(c.value, c.ci, bold=c.best and c.value is not None,
                                        marks=tuple(map(str, c.beats)))
                                   for c in (self.cell(metric, column) for column in self.columns))]
                for number, metric in enumerate(self.metrics, start=1)]
        return [Table(columns, rows, title=self.title, caption=self.caption, key="report", mark_names=self.metrics,
                      bold="best per column")]

    def to_json(self) -> dict[str, Any]:
        cells = {metric: {column: {"value": c.value, "ci": None if c.ci is None else list(c.ci),
                                   "better_than": [self.metrics[i - 1] for i in c.beats], "best": c.best}
                          for column in self.columns for c in [self.cell(metric, column)]} for metric in self.metrics}
        return {"metrics": self.metrics, "columns": self.columns, "cells": cells, "caption": self.caption,
                "settings": self.settings}

    def to_frame(self):
        """One row per (metric, statistic): value, CI and the metrics it beats, for notebooks."""
        cells = self.to_json()["cells"]
        return records_frame([{"metric": metric, "statistic": column, **cell}
                              for metric, columns in cells.items() for column, cell in columns.items()])


def mark_best(cells: dict[tuple[str, str], ReportCell], metrics: Sequence[str], columns: Sequence[str]) -> None:
    """Sort each cell's markers and bold the highest value of every column (all of them when tied)."""
    for cell in cells.values():
        cell.beats.sort()
    for column in columns:
        top = max((cells[(m, column)].value for m in metrics if cells[(m, column)].value is not None), default=None)
        for cell in (cells[(metric, column)] for metric in metrics):
            defined = top is not None and cell.value is not None
            cell.best = defined and math.isclose(cell.value, top, rel_tol=0, abs_tol=1e-12)


@takes(ReportSettings)
def correlation_report(human: object, metrics: dict[str, object], *, axes: str = "documents x systems",
                       settings: ReportSettings) -> ReportTable:
    """Every metric's statistics with CIs (matrices with the named ``axes`` or long DataFrames, NaN = absent), and
    markers from ``test`` between every ordered pair, its p-values adjusted by ``correction``. A marker always means
    "better than" (two-sided: a significant difference in this metric's favour); one metric gets no markers."""
    from learned_metrics.meta_eval.frames import input_grids

    o = settings
    human, metrics = input_grids(human, metrics, axes)
    if not metrics:
        raise UserError("report needs at least one metric")
    names = list(metrics)
    reports = run_jobs(functools.partial(correlations, settings=o.narrow(CorrelationSettings)),
                       [(human, values) for values in metrics.values()], o.workers)  # partial: a worker can run it
    cells = {(name, statistic): ReportCell.of(result) for name, report in zip(names, reports, strict=True)
             for statistic, result in report.stats.items()}
    note = ""
    if len(names) > 1:
        bootstrap = o.resamples if o.test == "bootstrap" else 0  # the paired bootstrap only when it decides
        tests = compare(human, metrics, settings=o.narrow(ComparisonSettings, resamples=bootstrap))
        for statistic, items in tests.comparisons.items():
            for c in items:
                p = c.p(o.test)
                if p is not None and p < o.alpha and (c.delta or 0) > 0:
                    cells[(c.metric_a, statistic)].beats.append(names.index(c.metric_b) + 1)
        if o.test == "permutation":
            note = resolution_sentence(tests.family, o.permutations, o.correction, o.alpha)
    mark_best(cells, names, o.stats)
    caption = (f"{o.words()} correlations with {o.intervals(o.resample, o.ci_method)}; superscript numbers: the "
               f"metrics this one is significantly better than ({o.test_words(o.test)}, {o.corrected()}p < "
               f"{o.alpha}).{note}")
    record = {name: value for name, value in o.to_json().items() if name not in ("stats", "workers")}
    record.update(documents=human.shape[0], systems=human.shape[1])
    return ReportTable(names, list(o.stats), cells, caption, record, f"{human.shape[1]} systems x {human.shape[0]} "
                       "documents")


MEAN_COLUMN = "mean"


def rank_auc(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """ROC AUC of every row of ``scores`` (``(k, n)``) against 0/1 ``labels`` (``(n,)`` or ``(k, n)``):
    Mann-Whitney with ties counted 1/2; NaN for a row without both classes."""
    from scipy.stats import rankdata

    scores = np.atleast_2d(scores)
    positive = np.broadcast_to(labels, scores.shape).astype(bool)
    n_pos = positive.sum(axis=1)
    n_neg = positive.shape[1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((rankdata(scores, axis=1) * positive).sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


@dataclass
class PairedAucTest:
    """Is metric ``a`` better than ``b``: AUC differences (per corpus and the mean), one-sided approximate
    randomization p-values (scores of a and b swapped per row) and paired bootstrap CIs of the differences."""

    a: str
    b: str
    delta: dict[str, float | None]
    p: dict[str, float | None]
    ci: dict[str, tuple[float, float] | None]
    p_adjusted: dict[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.a, "baseline": self.b,
                "columns": {c: {"delta": self.delta[c], "p_randomization": self.p[c],
                                "p_adjusted": self.p_adjusted.get(c, self.p[c]),
                                "delta_ci": None if self.ci[c] is None else list(self.ci[c])} for c in self.delta}}


class _AucDifference:
    """AUC(a) - AUC(b) per corpus and their mean, for blocks of randomized or resampled copies of the rows."""

    def __init__(self, a: np.ndarray, b: np.ndarray, labels: np.ndarray, groups: Sequence[str]):
        values = np.asarray(groups)
        self.rows = {name: np.flatnonzero(values == name) for name in dict.fromkeys(groups)}
        self.a, self.b, self.labels = a, b, labels
        self.defined = [g for g, idx in self.rows.items() if 0 < labels[idx].sum() < len(idx)]

    def _with_mean(self, per_group: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
        per_group[MEAN_COLUMN] = (np.mean([per_group[g] for g in self.defined], axis=0) if self.defined
                                  else np.full(k, np.nan))
        return per_group

    def randomized(self, swap: np.ndarray) -> dict[str, np.ndarray]:
        """``swap`` (``(k, rows)``): where True, the two metrics' scores of that row trade places."""
        return self._with_mean({g: rank_auc(np.where(swap[:, idx], self.b[idx], self.a[idx]), self.labels[idx])
                                - rank_auc(np.where(swap[:, idx], self.a[idx], self.b[idx]), self.labels[idx])
                                for g, idx in self.rows.items()}, swap.shape[0])

    def resampled(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        """``k`` paired bootstrap copies: the same rows drawn for both metrics, within each corpus."""
        taken = {g: idx[rng.integers(0, len(idx), (k, len(idx)))] for g, idx in self.rows.items()}
        return self._with_mean({g: rank_auc(self.a[t], self.labels[t]) - rank_auc(self.b[t], self.labels[t])
                                for g, t in taken.items()}, k)


@takes(AucReportSettings)
def paired_auc_test(a: np.ndarray, b: np.ndarray, labels: np.ndarray, groups: Sequence[str], *, names=("a", "b"),
                    block: int = 100, settings: AucReportSettings) -> PairedAucTest:
    """Approximate randomization and paired bootstrap for AUC(a) - AUC(b), per corpus and for the unweighted mean
    over the corpora where both classes occur. p = (1 + #{delta* >= delta}) / (1 + permutations), with
    |delta*| >= |delta| when two-sided, as :func:`~.significance.permutation_p` computes it."""
    rng = np.random.default_rng(settings.seed)
    difference = _AucDifference(np.asarray(a, float), np.asarray(b, float), np.asarray(labels, np.int64), groups)
    observed = difference.randomized(np.zeros((1, len(a)), dtype=bool))  # nothing swapped
    randomized = [difference.randomized(rng.random((min(block, settings.permutations - start), len(a))) < 0.5)
                  for start in range(0, settings.permutations, block)]  # True: the row's two scores trade places
    boot = [difference.resampled(rng, min(block, settings.resamples - start))
            for start in range(0, settings.resamples, block)]
    return paired_result(names, {c: float(v[0]) for c, v in observed.items()}, randomized, boot, settings)


def paired_result(names: Sequence[str], observed: dict[str, float], randomized: list[dict[str, np.ndarray]],
                  boot: list[dict[str, np.ndarray]], settings: AucReportSettings | BenchmarkSettings) -> PairedAucTest:
    """Per column: the observed difference, its randomization p (blocks of randomized differences) and the
    percentile CI of its paired bootstrap copies; shared by the AUC and the BAcc tests."""
    randomized_all = joined({c: [block[c] for block in randomized] for c in observed})
    boot_all = joined({c: [block[c] for block in boot] for c in observed})
    return PairedAucTest(names[0], names[1], {c: none_if_nan(v) for c, v in observed.items()},
                         {c: permutation_p(v, randomized_all[c], settings.alternative)[0] for c, v in observed.items()},
                         {c: interval(boot_all[c], settings.confidence).ci for c in observed})


@renamed_keywords(baselines="baseline")
@takes(AucReportSettings)
def auc_report(scored: dict[str, Any], *, baseline: str | Sequence[str] | None = None,
               settings: AucReportSettings) -> tuple[ReportTable, list]:
    """Rows = metrics, columns = corpora + their mean: AUC with CIs, best in bold, markers for a significant gain over
    each ``baseline`` (one name or a list; none: every other metric). ``scored``: name -> :class:`~.rows.ScoredRows`
    of the same rows (labels and corpora checked row by row); ``correction`` adjusts each column's p-values."""
    from learned_metrics.meta_eval.auc import auc_by_group

    if not scored:
        raise UserError("report needs at least one metric")
    o = settings
    names = list(scored)
    first = scored[names[0]]
    for name in names[1:]:
        check_paired(first, scored[name], (names[0], name))
    baselines = baseline_names(baseline, names)
    cells: dict[tuple[str, str], ReportCell] = {}
    for name in names:
        report = auc_by_group(scored[name].scores, scored[name].labels, scored[name].groups,
                              settings=o.narrow(AucSettings))
        cells.update({(name, group.group): ReportCell.of(group.auc) for group in report.groups})
        cells[(name, MEAN_COLUMN)] = ReportCell.of(report.mean)
    columns = [*dict.fromkeys(first.groups), MEAN_COLUMN]  # every metric's groups, in auc_by_group's order
    labels = np.asarray(first.labels, dtype=np.int64)
    tests = [paired_auc_test(scored[a].scores, scored[b].scores, labels, first.groups, names=(a, b), settings=o)
             for a in names for b in (baselines or names) if a != b]
    table = marked_table(names, columns, cells, tests, o, "ROC AUC per corpus and their unweighted mean",
                         o.intervals("rows redrawn within corpora"), "scores of the two metrics", baselines,
                         {**o.to_json(), "mode": "auc", "baselines": list(baselines)})
    table.title = f"ROC AUC · {len(first.scores):,} rows in {len(columns) - 1} corpora"
    return table, tests


def marked_table(names: list[str], columns: list[str], cells: dict[tuple[str, str], ReportCell],
                 tests: Sequence[PairedAucTest], o: AucReportSettings | BenchmarkSettings, what: str, intervals: str,
                 swapped: str, baselines: Sequence[str], record: dict[str, Any]) -> ReportTable:
    """A table of AUCs or BAccs with the best in bold and the markers of ``tests`` (each column's p-values adjusted
    over all the tests made; a marker: adjusted p < alpha and a positive difference), under the caption every such
    table shares: what was swapped per row, how many rounds, the correction and the level."""
    for column in columns:
        adjusted = adjust_p_values([t.p[column] for t in tests], o.correction)
        for test, p in zip(tests, adjusted, strict=True):
            test.p_adjusted[column] = p
            if p is not None and p < o.alpha and (test.delta[column] or 0) > 0:
                cells[(test.a, column)].beats.append(names.index(test.b) + 1)
    mark_best(cells, names, columns)
    against = "the baselines" if baselines else "the other metrics"
    note = resolution_sentence(len(tests), o.permutations, o.correction, o.alpha)
    caption = (f"{what}, with {intervals}; superscript numbers: {against} (by row number) this metric is "
               f"significantly better than ({o.sided()} approximate randomization, {swapped} swapped per row, "
               f"{o.permutations} rounds, {o.corrected()}p < {o.alpha}).{note}")
    return ReportTable(names, columns, cells, caption, record)
