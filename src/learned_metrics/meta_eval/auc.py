"""ROC AUC per group (corpus), their unweighted mean and intra-system AUC, with bootstrap CIs. AUC (Mann-Whitney,
ties one half, as ``sklearn.metrics.roc_auc_score``) under integer row weights needs only each tie class's positive
and negative weight, so a block of resamples is one sparse product and a cumulative sum; a resample that leaves a
group with one class is dropped and counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.coefficients import TieClasses
from learned_metrics.meta_eval.options import AucSettings
from learned_metrics.meta_eval.resampling import Estimate, estimate_from, mean_estimate, records_frame, row_weights
from learned_metrics.meta_eval.roc import roc_points as roc_points  # its home: the API reference lists it here
from learned_metrics.meta_eval.rows import by_index
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.validate import binary_label, numbers


class RaggedAuc:
    """Weighted AUC for rows split into groups of any size, many weight vectors at once."""

    def __init__(self, scores: np.ndarray, labels: np.ndarray, group_ids: np.ndarray, n_groups: int):
        self.labels = labels.astype(np.float64)
        self.n_groups = n_groups
        self.ties = TieClasses.ragged(scores, group_ids, n_groups)  # the tie classes of scores within each group

    def _per_group(self, per_class: np.ndarray) -> np.ndarray:
        out = np.zeros((per_class.shape[0], self.n_groups))
        np.add.at(out.T, self.ties.class_group, per_class.T)
        return out

    def auc(self, weights: np.ndarray) -> np.ndarray:
        """AUC per group for (R, n_rows) integer weights: (R, n_groups), NaN where a class is missing."""
        positive, negative = self.ties.totals(weights * self.labels), self.ties.totals(weights * (1 - self.labels))
        running = np.cumsum(negative, axis=1) - negative
        group_offset = running[:, np.minimum(self.ties.group_starts, max(running.shape[1] - 1, 0))]
        below = running - group_offset[:, self.ties.class_group]
        wins = self._per_group(positive * (below + negative / 2))
        pairs = self._per_group(positive) * self._per_group(negative)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pairs > 0, wins / pairs, np.nan)


@dataclass(frozen=True)
class GroupAuc:
    """AUC of one group (``n`` = rows) and, with a system field, its intra-system AUC (``n`` = systems)."""

    group: str
    auc: Estimate
    positives: int
    negatives: int
    intra_system: Estimate | None

    def to_json(self) -> dict:
        intra = {} if self.intra_system is None else {"intra_system": self.intra_system.to_json()}
        return {**self.auc.to_json(), "positives": self.positives, "negatives": self.negatives, **intra}

    def to_row(self) -> dict:
        """One DataFrame row: ``group``, the AUC as ``value``/``ci_low``/``ci_high``/``n``/..., class counts and
        ``intra_system_*`` with a system field."""
        intra = self.intra_system.to_row("intra_system_") if self.intra_system is not None else {}
        return {"group": self.group, **self.auc.to_row(), "positives": self.positives, "negatives": self.negatives,
                **intra}

    def to_frame(self):
        """:meth:`to_row` as a one-row DataFrame, for notebooks."""
        return records_frame([self.to_row()])


@dataclass(frozen=True)
class AucReport(Tabular):
    """Per-group AUCs, their unweighted mean (``n`` groups used, ``skipped`` single-class groups)."""

    groups: list[GroupAuc]
    mean: Estimate
    intra_system_mean: Estimate | None
    settings: AucSettings = AucSettings()

    def tables(self) -> list[Table]:
        columns = [Column("group", kind="text"), Column("auc", "AUC", kind="estimate", share=True),
                   Column("rows", kind="count"), Column("positives", "pos", kind="count"),
                   Column("negatives", "neg", kind="count")]
        mean = ["mean (unweighted)", Cell(self.mean.value, self.mean.ci), None, None, None]
        if self.intra_system_mean is not None:
            columns += [Column("intra_system", "intra-system", kind="estimate", share=True),
                        Column("systems", kind="count"), Column("skipped", kind="count")]
            mean += [Cell(self.intra_system_mean.value, self.intra_system_mean.ci), None, None]
        rows = [[g.group, Cell(g.auc.value, g.auc.ci), g.auc.n, g.positives, g.negatives,
                 *([Cell(g.intra_system.value, g.intra_system.ci), g.intra_system.n, g.intra_system.skipped]
                   if g.intra_system is not None else [])] for g in self.groups]
        skipped = (f" {self.mean.skipped} group(s) with a single class are left out of the mean (AUC undefined)."
                   if self.mean.skipped else "")
        o = self.settings
        caption = (f"ROC AUC per group and their unweighted mean, with {o.intervals('rows redrawn within each group')}"
                   f", seed {o.seed}." + skipped)
        return [Table(columns, [*rows, mean], title=f"ROC AUC · {o.resamples} bootstrap resamples, seed {o.seed}",
                      caption=caption, key="auc", rules={len(rows) - 1})]

    def to_json(self) -> dict:
        intra = {} if self.intra_system_mean is None else {"intra_system_mean": self.intra_system_mean.to_json()}
        return {"groups": {g.group: g.to_json() for g in self.groups}, "mean": self.mean.to_json(),
                "resamples": self.settings.resamples, **intra}

    def to_frame(self):
        """One row per group, then one row ``group="mean"`` (the unweighted mean), for notebooks: the AUC as
        ``value``/``ci_low``/``ci_high``/``n``/..., class counts, and ``intra_system_*`` columns with a system field."""
        intra_mean = self.intra_system_mean.to_row("intra_system_") if self.intra_system_mean is not None else {}
        return records_frame([*(g.to_row() for g in self.groups),
                              {"group": "mean", **self.mean.to_row(), **intra_mean}])


def group_index(values: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values in order of first appearance, and each value's number among them."""
    names = list(dict.fromkeys(values))
    lookup = {name: i for i, name in enumerate(names)}
    return names, np.array([lookup[v] for v in values], dtype=np.int64)


@takes(AucSettings)
def auc_by_group(scores: object, labels: object, groups: Sequence[str] | None = None,
                 systems: Sequence[str] | None = None, *, settings: AucSettings) -> AucReport:
    """ROC AUC per group with bootstrap CIs, the unweighted mean, and with ``systems`` the intra-system AUC: AUC within
    each system's rows, averaged over the systems with both classes (the others skipped and counted)."""
    confidence = settings.confidence
    scores, labels, groups, systems = by_index(("scores", scores), ("labels", labels), ("groups", groups),
                                               ("systems", systems))
    scores = numbers(scores, "scores")
    labels = np.asarray(labels)
    if labels.ndim == 1:  # the files' label spellings: 1/0, true/false, yes/no, as text or JSON (validate.binary_label)
        labels = np.array([binary_label(value, row=i + 1, field="labels") for i, value in enumerate(labels.tolist())],
                          dtype=np.int64)
    if scores.ndim != 1 or labels.shape != scores.shape or scores.size == 0:
        raise UserError(f"scores and labels must be non-empty 1-D arrays of equal length, got {scores.shape}, "
                        f"{labels.shape}")
    if np.isnan(scores).any():
        raise UserError("scores contain NaN")
    group_names, group_ids = group_index(list(groups) if groups is not None else ["all"] * len(scores))
    if len(group_ids) != len(scores):
        raise UserError(f"{len(group_ids)} group values for {len(scores)} scores")
    labels = labels.astype(np.int64)
    kernel = RaggedAuc(scores, labels, group_ids, len(group_names))
    intra = _IntraSystem(scores, labels, group_ids, systems, confidence) if systems is not None else None

    point = kernel.auc(np.ones((1, len(scores))))[0]
    if np.isnan(point).all():
        counts = f"{int(labels.sum())} positive and {int((1 - labels).sum())} negative rows"
        raise UserError(f"ROC AUC is undefined: no group has both labels (1 = faithful and 0 = unfaithful); {counts} "
                        f"over {len(group_names)} group(s). Check --label-field and --group-field")
    boot, intra_boot = [], []
    for weights in row_weights(group_ids, len(group_names), settings.resamples, settings.seed):
        boot.append(kernel.auc(weights))
        if intra is not None:
            intra_boot.append(intra.per_group(weights)[0])
    boot_all = np.concatenate(boot) if boot else np.empty((0, len(group_names)))
    intra_all = np.concatenate(intra_boot) if intra_boot else None
    intra_groups, intra_mean = ([None] * len(group_names), None) if intra is None else intra.estimates(intra_all)
    sizes, positives = np.bincount(group_ids), np.bincount(group_ids, weights=labels).astype(np.int64)
    group_results = [GroupAuc(name, estimate_from(point[g], boot_all[:, g], n=int(sizes[g]), confidence=confidence),
                              int(positives[g]), int(sizes[g] - positives[g]),
                              intra_groups[g]) for g, name in enumerate(group_names)]
    return AucReport(group_results, mean_estimate(point, boot_all, confidence), intra_mean, settings)


class _IntraSystem(RaggedAuc):
    """AUC per (group, system) cell; a group's intra-system AUC is the mean over its systems with both classes."""

    def __init__(self, scores: np.ndarray, labels: np.ndarray, group_ids: np.ndarray, systems: Sequence[str],
                 confidence: float):
        systems = list(systems)
        if len(systems) != len(scores):
            raise UserError(f"{len(systems)} system values for {len(scores)} scores")
        cell_names, cell_ids = group_index([f"{g}\x00{s}" for g, s in zip(group_ids, systems, strict=True)])
        super().__init__(scores, labels, cell_ids, len(cell_names))
        self.cell_group = np.array([int(name.split("\x00")[0]) for name in cell_names])  # each cell's group
        self.confidence = confidence

    def per_group(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R, groups) mean AUC over each group's systems with both classes (NaN if none), and how many those are."""
        per_cell = self.auc(weights)
        groups = [per_cell[:, self.cell_group == g] for g in range(int(self.cell_group.max()) + 1)]
        used = np.stack([(~np.isnan(cells)).sum(axis=1) for cells in groups], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(used > 0, np.stack([np.nansum(cells, axis=1) for cells in groups], axis=1) / used,
                            np.nan), used

    def estimates(self, boot: np.ndarray | None) -> tuple[list[Estimate], Estimate]:
        """Each group's estimate (``n`` systems with both classes, the others ``skipped``) and their mean's."""
        point, used = (values[0] for values in self.per_group(np.ones((1, len(self.labels)))))
        samples = np.empty((0, len(point))) if boot is None else boot
        return ([estimate_from(point[g], samples[:, g], n=int(used[g]), skipped=int(cells - used[g]),
                               confidence=self.confidence) for g, cells in enumerate(np.bincount(self.cell_group))],
                mean_estimate(point, boot, self.confidence))
