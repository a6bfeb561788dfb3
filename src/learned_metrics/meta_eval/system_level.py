"""Realistic system-level correlations (Deutsch, Dror & Roth 2022; Deutsch's thesis, chapter 8): ``tau_sys_full``
takes the metric's system means over the full test set (as a metric is used), and bands of |delta metric| show how
the metric orders close system pairs, which an all-pairs correlation hides. A band's pairs stay those of the observed
differences in every resample, so its interval is about *these* pairs (docs/meta_eval.md)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.coefficients import rowwise_correlation
from learned_metrics.meta_eval.data import key_grid
from learned_metrics.meta_eval.frames import input_grids, is_long_frame, labelled_grids
from learned_metrics.meta_eval.options import SystemLevelSettings, band_edge, check_bands, confidence_level
from learned_metrics.meta_eval.resampling import Estimate, drawn_counts, estimate_from, records_frame
from learned_metrics.outputs import shown_names
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes


@dataclass(frozen=True)
class Band:
    """Pairs of systems whose metric scores differ by ``lo <= |delta| < hi`` (edges up to 1e-12, see :func:`_below`)."""

    lo: float
    hi: float
    pairs: int
    human_ties: int
    agreement: Estimate
    tau: Estimate

    def label(self) -> str:
        return f"[{band_edge(self.lo)}, {band_edge(self.hi)})"

    def to_json(self) -> dict:
        return {"lo": self.lo, "hi": None if math.isinf(self.hi) else self.hi, "pairs": self.pairs,
                "human_ties": self.human_ties, "agreement": self.agreement.to_json(), "tau": self.tau.to_json()}


@dataclass(frozen=True)
class SystemLevelReport(Tabular):
    """Result of :func:`realistic_system_level`; ``to_json()`` is the ``--json`` file."""

    tau_sys: Estimate
    tau_sys_full: Estimate | None
    bands: list[Band]
    systems: int
    judged_docs: int
    full_docs: int | None
    settings: SystemLevelSettings
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"tau_sys": self.tau_sys.to_json(),
                "tau_sys_full": None if self.tau_sys_full is None else self.tau_sys_full.to_json(),
                "bands": [band.to_json() for band in self.bands],
                "settings": {"systems": self.systems, "judged_docs": self.judged_docs, "full_docs": self.full_docs,
                             **self.settings.to_json()}}

    def to_frame(self):
        """One row per estimate (tau_sys, tau_sys_full, and agreement/tau per band), for notebooks."""
        rows = [{"statistic": name, "band": None, "pairs": None, **estimate.to_json()}
                for name, estimate in (("tau_sys", self.tau_sys), ("tau_sys_full", self.tau_sys_full))
                if estimate is not None]
        rows += [{"statistic": name, "band": band.label(), "pairs": band.pairs, **getattr(band, name).to_json()}
                 for band in self.bands for name in ("agreement", "tau")]
        return records_frame(rows)

    def tables(self) -> list[Table]:
        """The system-level correlations (key ``system_level``) and, with bands, the pairs per band (``bands``)."""
        o = self.settings
        words, name = o.words(), o.label("tau_sys")
        rows = [[f"{name} ({where})", Cell(tau.value, tau.ci), tau.n] for where, tau in
                (("judged subset", self.tau_sys), ("full set", self.tau_sys_full)) if tau is not None]
        full = (f" {name} (full set), tau_sys_full in the JSON, takes the metric's system means over the full test "
                "set." if self.tau_sys_full is not None else "")
        docs = f"{self.judged_docs} judged" + (f", {self.full_docs} full-set" if self.full_docs else "")
        intervals = o.intervals("judged documents, full-set documents and systems redrawn")
        out = [Table([Column("statistic", kind="text"), Column("value", kind="estimate"), Column("n", kind="count")],
                     rows, key="system_level", title=f"{self.systems} systems · {docs} documents · {words} · "
                     f"{o.resamples} resamples, seed {o.seed}",
                     caption=f"System-level {words} between the humans' and the metric's system means, with "
                     f"{intervals}, seed {o.seed}.{full}")]
        if self.bands:
            out.append(Table(
                [Column("band", "|delta|", kind="text"), Column("pairs", kind="count"),
                 Column("human_ties", "human ties", kind="count"), Column("agreement", kind="estimate"),
                 Column("tau", kind="estimate")],
                [[band.label(), band.pairs, band.human_ties, Cell(band.agreement.value, band.agreement.ci),
                  Cell(band.tau.value, band.tau.ci)] for band in self.bands],
                key="bands", title="system pairs by |delta metric|",
                caption=f"System pairs whose metric scores differ by lo <= |delta| < hi: agreement (share of the pairs "
                f"with a strict human order the metric orders the same way) and Kendall tau-b over the pairs, with "
                f"{confidence_level(o.confidence)} CIs (the pairs fixed, documents redrawn; {o.resamples} resamples, "
                f"seed {o.seed})."))
        return out


def _below(edge: float) -> float:
    """A band edge lowered by float noise (1e-12, relative above 1), so that a difference equal to the edge falls in
    the band [edge, ...) whatever order the sums were computed in."""
    return edge if math.isinf(edge) else edge - 1e-12 * max(1.0, abs(edge))


def system_means(grid: np.ndarray, doc_counts: np.ndarray) -> np.ndarray:
    """(R, S) per-system means under document counts (R, D); NaN where a system has no drawn document."""
    present = ~np.isnan(grid)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (doc_counts @ np.where(present, grid, 0.0)) / (doc_counts @ present)


def _band_values(metric_means: np.ndarray, human_means: np.ndarray, pairs: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per draw (R,): agreement, tau, and the human-tied pair count over the given (i, j) pairs."""
    dm = metric_means[:, pairs[:, 0]] - metric_means[:, pairs[:, 1]]
    dh = human_means[:, pairs[:, 0]] - human_means[:, pairs[:, 1]]
    product = np.sign(dm) * np.sign(dh)
    strict = dh != 0
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(strict.sum(axis=1) > 0, (product > 0).sum(axis=1) / strict.sum(axis=1), np.nan)
    # Kendall's tau-b over the pairs (Deutsch, Dror & Roth 2022): (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)),
    # T_x the pairs tied in the metric only, T_y those tied in the humans only (tied in both: in neither).
    concordant, discordant = (product > 0).sum(axis=1), (product < 0).sum(axis=1)
    metric_only = ((dm == 0) & strict).sum(axis=1)
    human_only = ((dh == 0) & (dm != 0)).sum(axis=1)
    untied = concordant + discordant
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (concordant - discordant) / np.sqrt((untied + metric_only) * (untied + human_only))
    return agreement, tau, (~strict).sum(axis=1)


def full_set_grid(cells: Any, systems: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """(full-set documents x ``systems``) from a metric file's :class:`~.data.CellScores`; notes for systems the
    judged files do not have (ignored). A judged system without any full-set score is an error."""
    grid = key_grid(cells.values, systems=systems)
    scored = [s for j, s in enumerate(systems) if not np.isnan(grid[:, j]).all()]
    return grid, full_set_notes([*scored, *sorted({system for _, system in cells.values} - set(systems))], systems,
                                Path(cells.path).name, path=cells.path)


def full_set_notes(full_systems: Sequence[str], systems: Sequence[str], what: str, path: Any = None) -> list[str]:
    """The one rule pairing full-set scores to the judged systems by name: a judged system missing is refused;
    systems without human judgements are left out with a note."""
    have, judged = set(full_systems), set(systems)
    missing = [name for name in systems if name not in have]
    if missing:
        raise UserError(f"{what} has no scores for system {missing[0]!r} ({len(missing)} judged system(s) missing; "
                        "the full-set scores must cover every judged system, paired by name)", path=path)
    extra = [name for name in full_systems if name not in judged]
    return [f"{what}: ignored {len(extra)} system(s) without human judgements ({shown_names(map(repr, extra))})"
            ] if extra else []


@takes(SystemLevelSettings)
def realistic_system_level(human: Any, metric: Any, metric_full: Any = None, *,
                           bands: Sequence[tuple[float, float]] = (), axes: str = "documents x systems",
                           settings: SystemLevelSettings) -> SystemLevelReport:
    """System-level correlation on the judged subset and, with ``metric_full`` (all test documents x the same
    systems), with metric system scores from the full set; agreement on the system pairs within each ``(lo, hi)``
    band of metric-score differences. Matrices with the named ``axes`` (NaN = absent), or long DataFrames."""
    coefficient, bands = settings.coefficient, check_bands(bands)
    notes: list[str] = []
    if is_long_frame(human) and metric_full is not None:  # one grid of systems; judged: rows with a human score
        human, grids = input_grids(human, {"metric": metric, "full": metric_full}, axes)
        judged = ~np.isnan(human).all(axis=1)
        human, metric, metric_full = human[judged], grids["metric"][judged], grids["full"]
    else:
        human, grids, _, systems = labelled_grids(human, {"metric": metric}, axes)
        metric = grids["metric"]
        if metric_full is not None:
            metric_full, full_notes = _full_set_by_system(metric_full, systems, axes)
            notes += full_notes
    judged = np.where(np.isnan(human) | np.isnan(metric), np.nan, 1.0)
    human, metric = human * judged, metric * judged
    n_docs, n_systems = human.shape
    if metric_full is not None:
        if metric_full.shape[1] != n_systems:
            raise UserError(f"the full-set metric matrix has {metric_full.shape} columns for {n_systems} systems")
        empty = np.flatnonzero(np.isnan(metric_full).all(axis=0))
        if len(empty):
            raise UserError(f"the full-set metric file has no score for system number {empty[0] + 1}")
    if n_systems < 3:
        raise UserError(f"a system-level correlation needs at least 3 systems, got {n_systems}")
    selected = metric_full if metric_full is not None else metric
    selected_means = system_means(selected, np.ones((1, selected.shape[0])))
    pair_list = np.array(list(itertools.combinations(range(n_systems), 2)))
    gaps = np.abs(selected_means[0, pair_list[:, 0]] - selected_means[0, pair_list[:, 1]])
    band_pairs = [pair_list[(gaps >= _below(lo)) & (gaps < _below(hi))] for lo, hi in bands]

    def statistics(doc_counts: np.ndarray, full_counts: np.ndarray | None, system_counts: np.ndarray) -> dict:
        h, m = system_means(human, doc_counts), system_means(metric, doc_counts)
        out = {"tau_sys": rowwise_correlation(m, h, np.where(np.isnan(h) | np.isnan(m), 0, system_counts), coefficient)}
        if metric_full is not None:  # from here on m is the full-set means, which also order the band pairs
            m = system_means(metric_full, full_counts)
            out["tau_sys_full"] = rowwise_correlation(m, h, np.where(np.isnan(h) | np.isnan(m), 0, system_counts),
                                                      coefficient)
        for index, pairs in enumerate(band_pairs):
            if len(pairs):
                out[f"band{index}"] = _band_values(m, h, pairs)
        return out

    sizes = (n_docs, None if metric_full is None else metric_full.shape[0], n_systems)
    point = statistics(*(None if n is None else np.ones((1, n)) for n in sizes))
    draws = [statistics(*counts) for counts in drawn_counts(sizes, settings.resamples, settings.seed)]

    def estimate(value: float, name: str, n: int, part: int | None = None) -> Estimate:
        chunks = [d[name] if part is None else d[name][part] for d in draws if name in d]
        return estimate_from(value, np.concatenate(chunks) if chunks else np.empty(0), n=n,
                             confidence=settings.confidence)

    tau_sys = estimate(point["tau_sys"][0], "tau_sys", n_systems)
    tau_sys_full = None if metric_full is None else estimate(point["tau_sys_full"][0], "tau_sys_full", n_systems)
    results = []
    for index, ((lo, hi), pairs) in enumerate(zip(bands, band_pairs, strict=True)):
        name = f"band{index}"
        agreement, tau, ties = point.get(name, ([np.nan], [np.nan], [0]))  # a band without pairs: undefined
        tied = int(ties[0])
        results.append(Band(lo, hi, len(pairs), tied, estimate(agreement[0], name, len(pairs) - tied, 0),
                            estimate(tau[0], name, len(pairs), 1)))
    return SystemLevelReport(tau_sys, tau_sys_full, results, n_systems, n_docs, sizes[1], settings, notes)


def _full_set_by_system(metric_full: Any, systems: list[str] | None, axes: str) -> tuple[np.ndarray, list[str]]:
    """The full-set matrix with its systems in the judged matrices' order, paired by label (a wide DataFrame's
    columns, a long frame's ``system_id``), never by position: its documents differ from the judged ones by design,
    so it is read on its own, and a pivot or a run that lists its systems in another order would otherwise hand
    every system another's mean. Systems the judged inputs lack are left out with a note; a judged one missing is
    refused. Plain matrices (no labels on either side) stay in column order; a long frame beside them has none."""
    grid, _, _, full_systems = labelled_grids(metric_full, {}, axes, annotators=False)
    if full_systems is None:
        return grid, []
    if systems is None:
        if is_long_frame(metric_full):
            raise UserError("metric_full is a long DataFrame but the judged scores are plain matrices, whose systems "
                            "have no names to pair it with: give the judged scores as DataFrames too, or metric_full "
                            "as a matrix in their column order")
        return grid, []  # a wide DataFrame beside plain matrices: their only order is the column order
    notes = full_set_notes(list(full_systems), systems, "metric_full")
    column = {name: j for j, name in enumerate(full_systems)}
    return grid[:, [column[name] for name in systems]], notes
