"""The paper table: many metrics side by side, each cell a value with its CI, the best in bold, and markers
for significant differences (the coherence paper's Table 4.3 layout).

:func:`correlation_report` builds a :class:`ReportTable` from human scores and
several metrics: per metric the statistics of :func:`~.correlations.correlations`
(bootstrap CIs), per ordered pair of metrics the one-sided permutation test of
:func:`~.significance.compare`. A cell carries the numbers of the metrics it
beats at ``alpha``. Renderers give Markdown, LaTeX (booktabs), CSV and JSON;
:meth:`ReportTable.to_frame` a pandas DataFrame for notebooks.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.correlations import STATISTICS, check_options, correlations
from learned_metrics.meta_eval.significance import compare

# How the statistics are headed in papers.
LATEX_NAMES = {"tau_sys": r"$\tau_{sys}$", "tau_sum": r"$\tau_{sum}$", "tau_pair": r"$\tau_{pair}$",
               "acc_pair": r"acc$_{pair}$", "tau_intra": r"$\tau_{intra}$"}


@dataclass
class Cell:
    value: float | None
    ci: tuple[float, float] | None
    beats: list[int] = field(default_factory=list)  # 1-based numbers of the metrics this one beats significantly
    best: bool = False


@dataclass
class ReportTable:
    """Rows = metrics (numbered from 1 in the order given), columns = statistics."""

    metrics: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], Cell]
    caption: str
    settings: dict[str, Any]

    def cell(self, metric: str, column: str) -> Cell:
        return self.cells[(metric, column)]

    # -- renderers -----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "metrics": self.metrics,
            "columns": self.columns,
            "cells": {metric: {column: {"value": c.value, "ci": None if c.ci is None else list(c.ci),
                                        "better_than": [self.metrics[i - 1] for i in c.beats], "best": c.best}
                               for column in self.columns for c in [self.cell(metric, column)]}
                      for metric in self.metrics},
            "caption": self.caption,
            "settings": self.settings,
        }

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["metric", *(f"{c}{part}" for c in self.columns for part in ("", "_ci_low", "_ci_high",
                                                                                      "_better_than"))])
        for metric in self.metrics:
            row: list[Any] = [metric]
            for column in self.columns:
                c = self.cell(metric, column)
                row += [_plain(c.value), _plain(c.ci[0] if c.ci else None), _plain(c.ci[1] if c.ci else None),
                        ";".join(self.metrics[i - 1] for i in c.beats)]
            writer.writerow(row)
        return buffer.getvalue()

    def to_markdown(self) -> str:
        lines = ["| # | metric | " + " | ".join(self.columns) + " |",
                 "|---:|---|" + "---:|" * len(self.columns)]
        for number, metric in enumerate(self.metrics, start=1):
            cells = []
            for column in self.columns:
                c = self.cell(metric, column)
                text = _number(c.value)
                if c.best and c.value is not None:
                    text = f"**{text}**"
                if c.beats:
                    text += "<sup>" + ",".join(map(str, c.beats)) + "</sup>"
                if c.ci is not None:
                    text += f" [{_number(c.ci[0])}, {_number(c.ci[1])}]"
                cells.append(text)
            lines.append(f"| {number} | {metric} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + f"\n\n{self.caption}\n"

    def to_latex(self) -> str:
        """A booktabs table that compiles as is (needs ``booktabs``); CIs in small type under each value."""
        heads = " & ".join(LATEX_NAMES.get(c, _latex_escape(c)) for c in self.columns)
        lines = [r"\begin{table}[t]", r"\centering", r"\small",
                 r"\begin{tabular}{rl" + "c" * len(self.columns) + "}", r"\toprule",
                 rf"\# & Metric & {heads} \\", r"\midrule"]
        for number, metric in enumerate(self.metrics, start=1):
            values, intervals = [], []
            for column in self.columns:
                c = self.cell(metric, column)
                text = _number(c.value)
                if c.best and c.value is not None:
                    text = rf"\textbf{{{text}}}"
                if c.beats:
                    text += rf"$^{{{','.join(map(str, c.beats))}}}$"
                values.append(text)
                intervals.append(r"{\scriptsize " + (f"[{_number(c.ci[0])}, {_number(c.ci[1])}]" if c.ci else "")
                                 + "}")
            lines.append(rf"{number} & {_latex_escape(metric)} & " + " & ".join(values) + r" \\")
            lines.append(r" & & " + " & ".join(intervals) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex_escape(self.caption)}}}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_frame(self):
        """One row per (metric, statistic): value, CI and the metrics it beats, for notebooks."""
        import pandas as pd

        return pd.DataFrame([{"metric": metric, "statistic": column, "value": c.value,
                              "ci_low": c.ci[0] if c.ci else None, "ci_high": c.ci[1] if c.ci else None,
                              "better_than": [self.metrics[i - 1] for i in c.beats], "best": c.best}
                             for metric in self.metrics for column in self.columns
                             for c in [self.cell(metric, column)]])


def _plain(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                   "<": r"$<$", ">": r"$>$"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def mark_best(cells: dict[tuple[str, str], Cell], metrics: Sequence[str], columns: Sequence[str]) -> None:
    """Bold the highest value of every column (all of them when tied)."""
    for column in columns:
        values = [cells[(m, column)].value for m in metrics if cells[(m, column)].value is not None]
        if not values:
            continue
        top = max(values)
        for metric in metrics:
            cell = cells[(metric, column)]
            cell.best = cell.value is not None and math.isclose(cell.value, top, rel_tol=0, abs_tol=1e-12)


def correlation_report(human: object, metrics: dict[str, object], *, coefficient: str = "kendall",
                       stats: Sequence[str] = STATISTICS, resamples: int = 1000, resample: str = "both",
                       permutations: int = 1000, swap: str = "cell", alpha: float = 0.05,
                       seed: int = 0) -> ReportTable:
    """Every metric's statistics with bootstrap CIs, and one-sided permutation tests between every pair.

    ``human`` and each metric are (documents x systems) matrices (NaN = absent).
    With one metric there is nothing to compare and no markers.
    """
    stats = list(stats)
    check_options(coefficient, stats, resample)
    if not metrics:
        raise UserError("report needs at least one metric")
    if not 0 < alpha < 1:
        raise UserError(f"--alpha must be in (0, 1), got {alpha}")
    names = list(metrics)
    cells: dict[tuple[str, str], Cell] = {}
    for name, values in metrics.items():
        report = correlations(human, values, coefficient=coefficient, stats=stats, resamples=resamples,
                              resample=resample, seed=seed)
        for statistic, result in report.stats.items():
            cells[(name, statistic)] = Cell(result.value, result.ci)
    if len(names) > 1:
        tests = compare(human, metrics, coefficient=coefficient, stats=stats, permutations=permutations, swap=swap,
                        seed=seed)
        for statistic, items in tests.comparisons.items():
            for c in items:
                if c.p_permutation is not None and c.p_permutation < alpha:
                    cells[(c.metric_a, statistic)].beats.append(names.index(c.metric_b) + 1)
        for cell in cells.values():
            cell.beats.sort()
    mark_best(cells, names, stats)
    caption = (f"{coefficient.capitalize()} correlations with 95% bootstrap CIs ({resamples} resamples, "
               f"{resample}); bold: best per column; superscript numbers: the metrics this one is significantly "
               f"better than (one-sided permutation test, {permutations} permutations swapping per {swap}, "
               f"p < {alpha}).")
    settings = {"coefficient": coefficient, "resamples": resamples, "resample": resample,
                "permutations": permutations, "swap": swap, "alpha": alpha, "seed": seed}
    return ReportTable(names, stats, cells, caption, settings)
