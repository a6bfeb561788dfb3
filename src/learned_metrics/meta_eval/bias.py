"""Bias matrix: for which pairs of systems does a metric get the human order wrong? Cell (a, b) is 2 * acc - 1 over
the same-document pairs where the humans prefer system a (tau+ above the diagonal, tau- below; definition in
docs/meta_eval.md, ``meta-eval bias-matrix``); a cell without such pairs is undefined (NaN; null in JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.frames import labelled_grids
from learned_metrics.meta_eval.resampling import none_if_nan
from learned_metrics.render import Cell, Column, Table, Tabular


@dataclass(frozen=True)
class BiasMatrix(Tabular):
    """Systems (best first), their mean human score, tau+/tau- values and pair counts (both S x S)."""

    systems: list[str]
    mean_human: np.ndarray
    tau: np.ndarray
    pairs: np.ndarray

    def tables(self) -> list[Table]:
        """The matrix: one row per system (rank, name, mean human score), one column per system headed by its rank
        (narrow for print) and keyed by its name (CSV headers and ``to_frame`` columns are system names)."""
        columns = [Column("#", kind="count"), Column("system", kind="text"), Column("mean_human", "mean H", digits=2),
                   *(Column(name, str(k + 1), digits=2) for k, name in enumerate(self.systems))]
        rows = [[a + 1, name, float(self.mean_human[a]),
                 *(Cell(None) if np.isnan(self.tau[a, b]) else Cell(float(self.tau[a, b]),
                                                                    detail=str(int(self.pairs[a, b])))
                   for b in range(len(self.systems)))] for a, name in enumerate(self.systems)]
        return [Table(columns, rows, key="bias_matrix",
                      title="bias matrix: 2*acc-1 (pairs); row = system the humans prefer; upper tau+, lower tau-",
                      caption="Cell (a, b): over same-document pairs where the humans prefer system a to b, 2*acc-1 "
                      "with acc the share the metric orders the same way (a tie counts wrong), and the pair count. "
                      "Systems by mean human score, best first; upper triangle tau+, lower tau-.")]

    def to_json(self) -> dict:
        return {"systems": self.systems, "mean_human": [float(v) for v in self.mean_human],
                "tau": [[none_if_nan(v) for v in row] for row in self.tau], "pairs": self.pairs.astype(int).tolist(),
                "definition": "tau[a][b] = 2*acc-1 over same-document pairs where humans prefer systems[a] to "
                "systems[b]; acc = share the metric also orders so (ties wrong). Upper triangle: tau+, lower: tau-."}

    def to_frame(self, form: str = "long"):
        """For notebooks. ``"long"``: one row per matrix cell, ``preferred`` the row system, ``other`` the column
        system, ranks 1 = best, ``tau`` NaN where undefined, ``kind`` tau+ or tau-. ``"tau"`` / ``"pairs"``: the
        systems x systems matrix of tau or of pair counts, index and columns the system names, best first."""
        import pandas as pd

        if form in ("tau", "pairs"):
            values = self.tau.astype(float) if form == "tau" else self.pairs.astype(int)
            return pd.DataFrame(values, index=pd.Index(self.systems, name="preferred"),
                                columns=pd.Index(self.systems, name="other"))
        if form != "long":
            raise UserError(f"form must be 'long', 'tau' or 'pairs', got {form!r}")
        n = len(self.systems)
        return pd.DataFrame([{"preferred": self.systems[a], "other": self.systems[b], "rank_preferred": a + 1,
                              "rank_other": b + 1, "mean_human_preferred": float(self.mean_human[a]),
                              "mean_human_other": float(self.mean_human[b]), "tau": float(self.tau[a, b]),
                              "pairs": int(self.pairs[a, b]), "kind": "tau+" if a < b else "tau-"}
                             for a in range(n) for b in range(n) if a != b])


def bias_matrix(human: object, metric: object, systems: Sequence[str] | None = None,
                axes: str = "documents x systems") -> BiasMatrix:
    """tau+/tau- matrix of a metric from human and metric matrices with the named ``axes`` (NaN = absent) or long
    DataFrames (the human frame's annotator rows averaged). System names: ``systems``, else a long frame's
    ``system_id`` values or a wide DataFrame's columns, else a plain matrix's column numbers ("0", "1", ...)."""
    human_grid, grids, _, names = labelled_grids(human, {"metric": metric}, axes)
    metric_grid = grids["metric"]
    n_systems = human_grid.shape[1]
    systems = [str(s) for s in (systems if systems is not None else names or range(n_systems))]
    if len(systems) != n_systems:
        raise UserError(f"{len(systems)} system names for {n_systems} columns")
    if len(set(systems)) != n_systems:
        raise UserError(f"system names must be distinct, got {systems}")
    valid = ~(np.isnan(human_grid) | np.isnan(metric_grid))
    with np.errstate(invalid="ignore"):
        mean_human = np.nansum(np.where(valid, human_grid, 0), axis=0) / valid.sum(axis=0)
    order = np.argsort(-np.nan_to_num(mean_human, nan=-np.inf), kind="stable")
    h, p, ok = human_grid[:, order], metric_grid[:, order], valid[:, order]
    human_prefers = (h[:, :, None] > h[:, None, :]) & ok[:, :, None] & ok[:, None, :]  # [d, a, b]: a preferred on d
    metric_agrees = human_prefers & (p[:, :, None] > p[:, None, :])
    pairs = human_prefers.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(pairs > 0, 2 * metric_agrees.sum(axis=0) / pairs - 1, np.nan)
    np.fill_diagonal(tau, np.nan)
    return BiasMatrix([systems[i] for i in order], mean_human[order], tau, pairs)
