"""Faithfulness benchmarks judged the way the field reports them (BAcc, ROC AUC, the unsupported class's P/R/F1 per
dataset and their unweighted mean, supported when ``score > t``), under a named threshold protocol whose grid and
tie rule follow the reference code it names, so a number here can be set beside a published one (docs/benchmarks.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.auc import auc_by_group, group_index
from learned_metrics.meta_eval.benchmarks_io import TUNE_SPLITS, BenchmarkRows
from learned_metrics.meta_eval.options import AucReportSettings, AucSettings, BenchmarkSettings, check
from learned_metrics.meta_eval.report import (
    MEAN_COLUMN,
    PairedAucTest,
    ReportCell,
    ReportTable,
    baseline_names,
    marked_table,
    paired_auc_test,
    paired_result,
)
from learned_metrics.meta_eval.resampling import Estimate, estimate_from, mean_estimate, row_weights, swap_masks
from learned_metrics.meta_eval.rows import by_index
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.validate import numbers, renamed_keywords

PERCENTILES = np.arange(0, 100, 0.2)  # SummaC's grid: 0, 0.2, ..., 99.8
FIXED_GRID = np.arange(1001) / 1000  # AlignScore's grid: i / 1000 for i in 0..1000
TIES = {"percentile": "later", "fixed-0.001": "lowest"}
GRID_WORDS = {"percentile": "the score percentiles 0, 0.2, ..., 99.8 of the tuning rows",
              "fixed-0.001": "0, 0.001, ..., 1"}
PROTOCOL_TOOLS = {"fixed": "MiniCheck and LLM-AggreFact; TRUE's accuracy", "tune-on-val": "AggreFact and AlignScore",
                  "same-split": "SummaC's benchmark code"}
STATISTICS = ("bacc", "auc", "precision", "recall", "f1")
STATISTIC_TITLES = {"bacc": "BAcc", "auc": "AUC", "precision": "P unsup", "recall": "R unsup", "f1": "F1 unsup"}
# The statistics of report's marked tables: their words, short title and what a paired test swaps per row.
MARKED = {"bacc": ("Balanced accuracy", "BAcc", "the two metrics' predictions (each at its own threshold)"),
          "auc": ("ROC AUC", "ROC AUC", "the two metrics' scores")}
DEFAULT_THRESHOLD = 0.5


def _rates(tp, fn, tn, fp) -> dict[str, np.ndarray]:
    """BAcc and the unsupported class's P, R and F1 from confusion counts (any shape; undefined: NaN). BAcc is the
    recall of the one class present, else (recall 0 + recall 1) / 2 in sklearn's order of operations, so equal counts
    give ``balanced_accuracy_score``'s float."""
    tp, fn, tn, fp = (np.asarray(x, dtype=np.float64) for x in (tp, fn, tn, fp))
    positives, negatives = tp + fn, tn + fp
    with np.errstate(invalid="ignore", divide="ignore"):
        recall_1, recall_0 = tp / positives, tn / negatives
        bacc = np.where(positives > 0, np.where(negatives > 0, (recall_0 + recall_1) / 2, recall_1), recall_0)
        return {"bacc": bacc, "precision": tn / (tn + fn), "recall": recall_0, "f1": 2 * tn / (2 * tn + fn + fp)}


def threshold_grid(scores: np.ndarray, grid: str) -> np.ndarray:
    """The thresholds a tuning protocol tries, in the reference code's order. numpy's ``a + (b - a) * t`` overflows
    when neighbouring scores lie more than the float maximum apart (about -1e308 and 1e308); those few are
    interpolated as ``a + d * t + d * t`` with ``d = b / 2 - a / 2``, which stays between ``a`` and ``b``."""
    if grid != "percentile":
        return FIXED_GRID.copy()
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        thresholds = np.percentile(scores, PERCENTILES)
    wrong = ~np.isfinite(thresholds)
    if wrong.any() and np.isfinite(scores).all():
        low, high = (np.percentile(scores, PERCENTILES[wrong], method=m) for m in ("lower", "higher"))
        position = PERCENTILES[wrong] / 100 * (scores.size - 1)
        half_gap, fraction = high / 2 - low / 2, position - np.floor(position)
        thresholds[wrong] = low + half_gap * fraction + half_gap * fraction
    return thresholds


def balanced_accuracies(scores: np.ndarray, labels: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """BAcc of predicting ``score > t`` for every threshold ``t`` (one sort, no loop over thresholds)."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    positive, negative = np.sort(scores[labels == 1]), np.sort(scores[labels == 0])
    tp = len(positive) - np.searchsorted(positive, thresholds, side="right")
    tn = np.searchsorted(negative, thresholds, side="right")
    return _rates(tp, len(positive) - tp, tn, len(negative) - tn)["bacc"]


def tune_threshold(scores: np.ndarray, labels: np.ndarray, grid: str = "percentile") -> float:
    """The grid threshold with the best BAcc on these rows; ties to the later threshold on the percentile grid
    (SummaC/AggreFact), to the lowest on the 0.001 grid (AlignScore)."""
    check(grid=grid)
    if len(scores) == 0:
        raise UserError("no rows to tune a threshold on")
    thresholds = threshold_grid(scores, grid)
    bacc = balanced_accuracies(scores, labels, thresholds)
    best = np.flatnonzero(bacc == bacc.max())
    return float(thresholds[best[-1] if TIES[grid] == "later" else best[0]])


@dataclass(frozen=True)
class Protocol:
    """How the thresholds were set and which rows were judged: named in every caption and in the JSON."""

    name: str
    split: str | None  # the judged split (None: every row; the rows carry no split)
    threshold: float | None = None  # fixed
    grid: str | None = None  # tuning protocols
    tune_split: str | None = None  # tune-on-val
    scope: str | None = None  # dataset | global
    unseen_dataset: str | None = None

    @property
    def judged(self) -> str:
        return self.split or "all rows"

    def words(self) -> str:
        """One sentence for captions: the protocol, who uses it, the grid and the tie rule."""
        if self.name == "fixed":
            return (f"Protocol fixed ({PROTOCOL_TOOLS['fixed']}): threshold {self.threshold:g} for every dataset, "
                    f"supported when score > {self.threshold:g}; judged on {self.judged}.")
        per = "per dataset" if self.scope == "dataset" else "once for all datasets pooled"
        where = (f"tuned {per} on {self.tune_split} and applied to {self.judged}" if self.name == "tune-on-val"
                 else f"tuned {per} on the same {self.judged} rows it is judged on, OPTIMISTIC (the threshold has seen "
                      "the labels it is scored against)")
        return (f"Protocol {self.name} ({PROTOCOL_TOOLS[self.name]}): threshold {where}; grid {GRID_WORDS[self.grid]}, "
                f"best BAcc, ties to the {TIES[self.grid]} threshold; supported when score > threshold.")

    def to_json(self) -> dict[str, Any]:
        """Every field but ``split`` only where this protocol has it (None: it does not apply)."""
        out = {"name": self.name, "used_by": PROTOCOL_TOOLS[self.name], "split": self.split,
               "optimistic": self.name == "same-split", "rule": "supported when score > threshold",
               "threshold": self.threshold, "grid": self.grid, "grid_values": GRID_WORDS.get(self.grid),
               "ties": TIES.get(self.grid), "scope": self.scope, "tune_split": self.tune_split,
               "unseen_dataset": self.unseen_dataset}
        return {key: value for key, value in out.items() if value is not None or key == "split"}


def _protocol(o: BenchmarkSettings, splits: Sequence[str | None]) -> Protocol:
    """The protocol the options ask for, checked against each other and against the splits the rows carry."""
    name = o.threshold_protocol
    if name is None:
        raise UserError("choose a threshold protocol: --threshold-protocol fixed (MiniCheck, LLM-AggreFact), "
                        "tune-on-val (AggreFact, AlignScore) or same-split (SummaC's code, optimistic)")
    if name != "fixed" and o.threshold is not None:
        raise UserError(f"--threshold is for --threshold-protocol fixed; {name} tunes the threshold")
    if name == "fixed" and (o.grid is not None or o.tune_scope is not None):
        raise UserError("--grid and --tune-scope are for the tuning protocols (tune-on-val, same-split)")
    if name != "tune-on-val" and (o.tune_split is not None or o.unseen_dataset is not None):
        raise UserError("--tune-split and --unseen-dataset are for --threshold-protocol tune-on-val")
    present = list(dict.fromkeys(s for s in splits if s is not None))
    no_split = "the rows carry no split (no cut/split field, no dev/val/test in the file names)"
    if not present and o.split is not None:
        raise UserError(f"--split {o.split}: {no_split}")
    if not present and name == "tune-on-val":
        raise UserError(f"tune-on-val needs a tuning split, and {no_split}; use --threshold-protocol fixed or "
                        "same-split")
    judged = (o.split or "test") if present else None
    if present and judged not in present:
        raise UserError(f"no rows of split '{judged}' (splits present: {', '.join(present)}); name one with --split")
    tuned = (o.tune_split or next((s for s in TUNE_SPLITS if s in present), None)) if name == "tune-on-val" else None
    if name == "tune-on-val" and tuned is None:
        raise UserError(f"no validation split ({', '.join(TUNE_SPLITS)}) among the splits present "
                        f"({', '.join(present)}); name one with --tune-split")
    if tuned is not None and tuned not in present:
        raise UserError(f"no rows of --tune-split '{tuned}' (splits present: {', '.join(present)})")
    if tuned is not None and tuned == judged:
        raise UserError(f"--tune-split and --split are both '{tuned}': that is --threshold-protocol same-split")
    if name == "fixed":
        return Protocol(name, judged, threshold=DEFAULT_THRESHOLD if o.threshold is None else o.threshold)
    return Protocol(name, judged, grid=o.grid or "percentile", tune_split=tuned, scope=o.tune_scope or "dataset",
                    unseen_dataset=(o.unseen_dataset or "error") if name == "tune-on-val" else None)


@dataclass(frozen=True)
class DatasetResult:
    """One metric on one dataset: the threshold and where it came from, the class counts and the statistics."""

    dataset: str
    threshold: float
    tuned_on: str  # "fixed", or the tuning split (with "all datasets" for a global threshold)
    tune_rows: int | None
    fallback: bool  # tune-on-val: no tuning rows of this dataset, the global threshold used
    rows: int
    positives: int
    negatives: int
    stats: dict[str, Estimate]
    constant: bool  # every judged row has the same score

    def to_json(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "tuned_on": self.tuned_on, "tune_rows": self.tune_rows,
                "fallback": self.fallback, "rows": self.rows, "positives": self.positives, "negatives": self.negatives,
                "constant_scores": self.constant, **{name: self.stats[name].to_json() for name in STATISTICS}}


@dataclass(frozen=True)
class MetricResult:
    name: str
    datasets: list[DatasetResult]
    mean: dict[str, Estimate]

    def to_json(self) -> dict[str, Any]:
        return {"datasets": {d.dataset: d.to_json() for d in self.datasets},
                "mean": {name: self.mean[name].to_json() for name in STATISTICS}}


@dataclass
class BenchmarkReport(Tabular):
    """Every metric on every dataset under one protocol; with several metrics the BAcc and AUC tables of
    ``report`` (bold best, significance markers: ``marked``) and the paired tests behind them."""

    benchmark: str
    protocol: Protocol
    results: dict[str, MetricResult]
    datasets: list[str]
    tests: dict[str, list[PairedAucTest]]
    notes: list[str]
    warnings: list[str]
    settings: BenchmarkSettings
    marked: dict[str, ReportTable] = field(init=False)

    def __post_init__(self) -> None:
        """``report``'s tables: rows = metrics, columns = datasets + mean, bold best, significance markers."""
        o, names, columns = self.settings, list(self.results), [*self.datasets, MEAN_COLUMN]
        self.marked = {}
        for statistic, tests in self.tests.items():
            cells = {(name, d.dataset): ReportCell.of(d.stats[statistic]) for name in names
                     for d in self.results[name].datasets}
            cells.update({(name, MEAN_COLUMN): ReportCell.of(self.results[name].mean[statistic]) for name in names})
            what, short, swapped = MARKED[statistic]
            table = marked_table(names, columns, cells, tests, o, f"{self.benchmark}: {what} per dataset and their "
                                 "unweighted mean", o.intervals("rows redrawn within each dataset"), swapped,
                                 o.baseline or (), {"mode": statistic, **self.record})
            table.caption += f" {self.protocol.words()}"
            table.title = f"{short} · {self.benchmark} · {self.protocol.judged} · protocol {self.protocol.name}"
            self.marked[statistic] = table

    @property
    def record(self) -> dict[str, Any]:
        """The JSON settings block: the paired tests' settings and the baselines (the protocol's are its own)."""
        return {**self.settings.narrow(AucReportSettings).to_json(), "baselines": list(self.settings.baseline or ())}

    def _table(self, key: str, statistics: Sequence[str], what: str, *, long: bool = False, title: str = "") -> Table:
        """A per-dataset table: per metric its datasets, then the mean; ``long`` (the CSV's) names the metric in each
        row, the others head each metric's block with it."""
        columns = [*([Column("metric", kind="text")] if long else []), Column("dataset", kind="text"),
                   Column("threshold", kind="number", digits=4), Column("tuned_on", "tuned on", kind="text"),
                   Column("rows", kind="count"), Column("positives", "pos", kind="count"),
                   Column("negatives", "neg", kind="count"),
                   *(Column(s, STATISTIC_TITLES[s], kind="estimate", share=True) for s in statistics)]
        rows: list[list[Any]] = []
        rules, groups = set(), {}
        for name, result in self.results.items():
            groups[len(rows)] = name
            first = [name] if long else []
            for d in result.datasets:
                tuned = d.tuned_on if d.tune_rows is None else f"{d.tuned_on} ({d.tune_rows})"
                rows.append([*first, d.dataset, d.threshold, tuned, d.rows, d.positives, d.negatives,
                             *(Cell(d.stats[s].value, d.stats[s].ci) for s in statistics)])
            rows.append([*first, "mean (unweighted)", None, "", None, None, None,
                         *(Cell(result.mean[s].value, result.mean[s].ci) for s in statistics)])
            rules.add(len(rows) - 1)
        p = self.protocol
        short = (f"threshold fixed at {p.threshold:g}" if p.name == "fixed"
                 else f"threshold tuned on {p.tune_split}, {p.grid} grid" if p.name == "tune-on-val"
                 else f"threshold tuned on the same split, {p.grid} grid, OPTIMISTIC")
        title = f"{self.benchmark} · {p.judged} · {short}{title}"
        undefined = any(d.stats["auc"].value is None for r in self.results.values() for d in r.datasets)
        one_class = " AUC —: a dataset with one class only (left out of the AUC mean)." if undefined else ""
        caption = (f"{self.benchmark}: {what} per dataset and their unweighted mean, with "
                   f"{self.settings.intervals('rows redrawn within each dataset, the threshold held')}, seed "
                   f"{self.settings.seed}. {p.words()}{one_class if 'AUC' in what else ''}")
        return Table(columns, rows, title=title, heading="" if long else title, key=key, caption=caption,
                     rules=rules, groups={} if long else groups)

    def tables(self) -> list[Table]:
        """report's marked tables, then per dataset its threshold, BAcc and AUC, and the unsupported class's P/R/F1."""
        marked = [replace(table, key=key, heading=table.title) for key, report in self.marked.items()
                  for table in report.tables()[:1]]
        return [*marked, self._table("per_dataset", ("bacc", "auc"), "balanced accuracy (BAcc) and ROC AUC"),
                self._table("unsupported", ("precision", "recall", "f1"), "precision, recall and F1 of the unsupported "
                            "class (label 0, predicted when score <= threshold)", title=" · unsupported class")]

    def csv_tables(self) -> list[Table]:
        """The long table first (one row per metric and dataset, every statistic), then the printed ones."""
        return [self._table("long", STATISTICS, "BAcc, ROC AUC and the unsupported class's precision, recall and F1",
                            long=True), *self.tables()]

    def to_json(self) -> dict[str, Any]:
        paired = ({"tables": {key: table.to_json() for key, table in self.marked.items()},
                   "tests": {key: [t.to_json() for t in tests] for key, tests in self.tests.items()}}
                  if self.marked else {})
        return {"benchmark": self.benchmark, "protocol": self.protocol.to_json(), "metrics": list(self.results),
                "datasets": self.datasets, "results": {name: r.to_json() for name, r in self.results.items()}, **paired,
                "notes": self.notes, "warnings": self.warnings, "settings": self.record}


def _confusion_rates(positive: np.ndarray, starts: np.ndarray, weights: np.ndarray, supported: np.ndarray
                     ) -> dict[str, np.ndarray]:
    """Statistics per dataset (b, G) for many row weightings at once: rows sorted by dataset (``starts`` the first
    row of each), ``weights`` (b, rows), ``supported`` (rows,) or (b, rows) predictions."""
    on_positive, on_negative = weights * positive, weights * ~positive
    pairs = ((on_positive, supported), (on_positive, ~supported), (on_negative, ~supported), (on_negative, supported))
    return _rates(*(np.add.reduceat(w * s, starts, axis=1) for w, s in pairs))


def _paired_bacc_test(names: tuple[str, str], supported_a: np.ndarray, supported_b: np.ndarray,
                      rates: Callable[..., dict[str, np.ndarray]], dataset_ids: np.ndarray, columns: list[str],
                      o: BenchmarkSettings) -> PairedAucTest:
    """BAcc(a) - BAcc(b) per dataset and for the mean: approximate randomization (the two metrics' predictions
    swapped per row, each at its own threshold) and a paired bootstrap CI (the same rows drawn for both)."""
    def delta(weights: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
        bacc_a, bacc_b = rates(weights, a)["bacc"], rates(weights, b)["bacc"]
        both = np.column_stack([bacc_a - bacc_b, bacc_a.mean(axis=1) - bacc_b.mean(axis=1)])
        return {column: both[:, i] for i, column in enumerate(columns)}

    ones = np.ones((1, len(supported_a)))
    swaps = (masks[:, :, 0] for masks in swap_masks(len(supported_a), 1, o.permutations, "document", o.seed))
    randomized = [delta(ones, np.where(swap, supported_b, supported_a), np.where(swap, supported_a, supported_b))
                  for swap in swaps]
    boot = [delta(weights, supported_a, supported_b)
            for weights in row_weights(dataset_ids, len(columns) - 1, o.resamples, o.seed)]
    observed = {column: float(values[0]) for column, values in delta(ones, supported_a, supported_b).items()}
    return paired_result(names, observed, randomized, boot, o)


@renamed_keywords(baselines="baseline")
@takes(BenchmarkSettings)
def benchmark(scores: dict[str, Any], labels: Any, datasets: Sequence[str], splits: Sequence[str | None] | None = None,
              keys: Sequence[Any] | None = None, *, benchmark_name: str = "benchmark",
              settings: BenchmarkSettings) -> BenchmarkReport:
    """Judge metrics (name -> scores of the same rows) under a named threshold protocol: ``labels`` 0/1 (1 =
    supported); per row its dataset, split (None: none) and ``keys`` (a (grounding, generation) identity, to warn of
    rows in both tuning and judged splits). ``baseline``: the metric names markers compare with (default: all)."""
    o = settings
    if not isinstance(scores, dict) or not scores:
        raise UserError("scores must be a mapping of metric name -> scores, with at least one metric")
    labels, datasets, splits, keys, *columns = by_index(
        ("labels", labels), ("datasets", datasets), ("splits", splits), ("keys", keys),
        *((f"scores[{name!r}]", column) for name, column in scores.items()))
    labels = np.asarray(labels)
    if labels.ndim != 1 or not labels.size or not np.isin(labels, (0, 1)).all():
        raise UserError("labels must be a non-empty 1-D array of 0/1")
    labels, n = labels.astype(np.int64), len(labels)
    values = {}
    for name, column in zip(scores, columns, strict=True):
        array = numbers(column, f"scores[{name!r}]")
        if array.shape != (n,):
            raise UserError(f"scores[{name!r}] has shape {array.shape}, the labels {n} rows")
        if np.isnan(array).any():
            raise UserError(f"scores[{name!r}] has a missing/NaN score at position {int(np.isnan(array).argmax()) + 1}")
        values[str(name)] = array
    datasets = [str(d) for d in datasets]
    splits = list(splits) if splits is not None else [None] * n
    if len(datasets) != n or len(splits) != n or (keys is not None and len(keys) != n):
        raise UserError(f"datasets, splits and keys need one value per row ({n})")
    baselines = baseline_names(o.baseline, list(values))
    protocol = _protocol(o, splits)
    split_array = np.array(splits, dtype=object)
    judged = (split_array == protocol.split) if protocol.split is not None else np.ones(n, dtype=bool)
    unsplit = sum(s is None for s in splits) if protocol.split is not None else 0
    notes = [f"{unsplit} row(s) carry no split and are not judged"] if unsplit else []
    warnings: list[str] = []
    tuning = (split_array == protocol.tune_split) if protocol.name == "tune-on-val" else judged
    if protocol.name == "tune-on-val" and keys is not None:
        seen = {k for k, t in zip(keys, tuning, strict=True) if t}
        shared = sum(1 for k, j in zip(keys, judged, strict=True) if j and k in seen)
        if shared:
            warnings.append(f"{shared} of {int(judged.sum())} {protocol.split} row(s) also appear in "
                            f"{protocol.tune_split} (same grounding and generation): the thresholds were tuned on "
                            "them too")

    dataset_array = np.array(datasets, dtype=object)
    order = np.flatnonzero(judged)  # the judged rows, then sorted by dataset (stable): every per-dataset sum a slice
    names_of_datasets, ids_unsorted = group_index(dataset_array[order])
    sort = np.argsort(ids_unsorted, kind="stable")
    rows, ids = order[sort], ids_unsorted[sort]
    n_groups = len(names_of_datasets)
    starts = np.searchsorted(ids, np.arange(n_groups))
    y = labels[rows]
    group_names = [names_of_datasets[i] for i in ids]
    rates = functools.partial(_confusion_rates, y == 1, starts)
    positives = np.add.reduceat(y, starts)
    counts = np.diff(np.append(starts, len(rows)))
    notes += [f"{name}: every judged row has label {int(positives[g] > 0)}: AUC undefined (—, left out of the AUC "
              "mean), BAcc is that class's recall alone" for g, name in enumerate(names_of_datasets)
              if positives[g] in (0, counts[g])]
    both_classes = bool(((positives > 0) & (positives < counts)).any())
    columns = [*names_of_datasets, MEAN_COLUMN]
    fallback_datasets: set[str] = set()

    results: dict[str, MetricResult] = {}
    supported: dict[str, np.ndarray] = {}
    for name, metric_scores in values.items():
        thresholds, tuned_on, tune_rows, fallback = _thresholds(protocol, metric_scores, labels, dataset_array, tuning,
                                                                names_of_datasets)
        fallback_datasets |= {d for d, f in zip(names_of_datasets, fallback, strict=True) if f}
        s = metric_scores[rows]
        supported[name] = s > thresholds[ids]
        low, high = float(s.min()), float(s.max())  # a fixed threshold or the 0.001 grid assume probabilities
        if (low < 0 or high > 1) and protocol.name == "fixed":
            notes.append(f"{name}: scores range from {low:g} to {high:g}, not a probability in [0, 1]; a fixed "
                         f"threshold of {protocol.threshold:g} may not mean what it does for one")
        elif (low < 0 or high > 1) and protocol.grid == "fixed-0.001":
            notes.append(f"{name}: scores range from {low:g} to {high:g}, but the fixed-0.001 grid only tries 0..1 "
                         "(the percentile grid follows the scores)")
        point = {k: v[0] for k, v in rates(np.ones((1, len(rows))), supported[name]).items()}
        boot = [rates(w, supported[name]) for w in row_weights(ids, n_groups, o.resamples, o.seed)]
        boot_all = {k: np.concatenate([b[k] for b in boot]) if boot else np.empty((0, n_groups)) for k in point}
        auc = auc_by_group(s, y, group_names, settings=o.narrow(AucSettings)) if both_classes else None
        per_dataset = []
        for g, dataset in enumerate(names_of_datasets):
            members = s[starts[g]:starts[g] + counts[g]]
            stats = {k: estimate_from(point[k][g], boot_all[k][:, g], n=int(counts[g]), confidence=o.confidence)
                     for k in point}
            stats["auc"] = (auc.groups[g].auc if auc is not None
                            else estimate_from(np.nan, np.empty(0), n=int(counts[g])))
            constant = bool(members.min() == members.max())
            if constant:
                notes.append(f"{name}: every judged row of {dataset} has the same score ({members[0]:g}): one "
                             "predicted class (BAcc 0.5 with both labels), and an AUC of 0.5 that ranks nothing")
            per_dataset.append(DatasetResult(dataset, float(thresholds[g]), tuned_on[g], tune_rows[g], fallback[g],
                                             int(counts[g]), int(positives[g]), int(counts[g] - positives[g]),
                                             {k: stats[k] for k in STATISTICS}, constant))
        mean = {k: mean_estimate(point[k], boot_all[k], o.confidence) for k in point}
        mean["auc"] = auc.mean if auc is not None else estimate_from(np.nan, np.empty(0), n=0, skipped=n_groups)
        results[name] = MetricResult(name, per_dataset, {k: mean[k] for k in STATISTICS})
    if fallback_datasets:
        notes.append(f"{', '.join(sorted(fallback_datasets))}: no {protocol.tune_split} rows; the threshold tuned on "
                     f"the whole {protocol.tune_split} split is used (--unseen-dataset global)")

    tests: dict[str, list[PairedAucTest]] = {}
    if len(values) > 1:
        pairs = [(a, b) for a in values for b in (baselines or values) if a != b]
        tests["bacc"] = [_paired_bacc_test((a, b), supported[a], supported[b], rates, ids, columns, o)
                         for a, b in pairs]
        if both_classes:
            tests["auc"] = [paired_auc_test(values[a][rows], values[b][rows], y, group_names, names=(a, b),
                                            settings=o.narrow(AucReportSettings)) for a, b in pairs]
    return BenchmarkReport(benchmark_name, protocol, results, names_of_datasets, tests, notes, warnings, o)


def evaluate_benchmark(rows: BenchmarkRows, **options: Any) -> BenchmarkReport:
    """:func:`benchmark` on what :func:`~.benchmarks_io.read_benchmark` read; its notes come first."""
    report = benchmark(rows.scores, rows.labels, rows.datasets, rows.splits, rows.keys,
                       benchmark_name=rows.layout.name, **options)
    report.notes[:0] = rows.notes
    return report


def _thresholds(protocol: Protocol, scores: np.ndarray, labels: np.ndarray, datasets: np.ndarray, tuning: np.ndarray,
                names: list[str]) -> tuple[np.ndarray, list[str], list[int | None], list[bool]]:
    """Per dataset (in ``names`` order): the threshold, where it was tuned, on how many rows, and whether it is the
    global fallback of a dataset without tuning rows."""
    split = protocol.tune_split if protocol.name == "tune-on-val" else protocol.judged

    @functools.cache  # tuned once, for the global scope or the first dataset that falls back to it
    def global_threshold() -> float:
        return tune_threshold(scores[tuning], labels[tuning], protocol.grid)

    def per_dataset(name: str) -> tuple[float, str, int | None, bool]:
        if protocol.name == "fixed":
            return protocol.threshold, "fixed", None, False
        if protocol.scope == "global":
            return global_threshold(), f"{split}, all datasets", int(tuning.sum()), False
        members = tuning & (datasets == name)
        if members.any():
            return tune_threshold(scores[members], labels[members], protocol.grid), split, int(members.sum()), False
        if protocol.unseen_dataset != "global":
            raise UserError(f"dataset '{name}' has {protocol.split} rows but no {protocol.tune_split} rows to tune its "
                            "threshold on; pass --unseen-dataset global to use the threshold tuned on the whole "
                            f"{protocol.tune_split} split, or --tune-scope global")
        return global_threshold(), f"{split}, all datasets (fallback)", int(tuning.sum()), True

    thresholds, tuned_on, tune_rows, fallback = zip(*map(per_dataset, names), strict=True)
    return np.array(thresholds), list(tuned_on), list(tune_rows), list(fallback)
