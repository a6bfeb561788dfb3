"""Rendering: the table model every analysis returns (:mod:`.model`), one renderer per format (:mod:`.text` for
Markdown, LaTeX, CSV and JSON; :mod:`.terminal` for rich tables), number formats (:mod:`.formats`) and figures
(:mod:`.figures`). No analysis formats output itself; it says ``tables()`` and inherits :class:`Tabular`.
"""

from __future__ import annotations

import math

from learned_metrics.render.model import KINDS, NUMBER_STYLES, Cell, Column, Table, in_percent, pick
from learned_metrics.render.text import csv_text, flat_columns, flat_value, latex, markdown


class Tabular:
    """Renderers for a result that can say :meth:`tables`: one implementation for every analysis."""

    def tables(self) -> list[Table]:
        raise NotImplementedError

    def csv_tables(self) -> list[Table]:
        """The tables ``to_csv`` can write, the default first (override for a long format)."""
        return self.tables()

    def to_markdown(self) -> str:
        return markdown(self.tables())

    def to_latex(self) -> str:
        return latex(self.tables())

    def to_csv(self, key: str | None = None) -> str:
        """The first table as CSV (numbers in full precision), or the one named ``key``."""
        return csv_text(pick(self.csv_tables(), key))

    def to_frame(self, key: str | None = None):
        """The first of :meth:`csv_tables` (or the one named ``key``) as a pandas DataFrame, for notebooks: the long
        form where a result has one; :meth:`table_frame` always gives the printed table."""
        return table_frame(pick(self.csv_tables(), key))

    def table_frame(self, key: str | None = None):
        """A table as a DataFrame (see :func:`table_frame`)."""
        return table_frame(pick(self.tables(), key))


def table_frame(table: Table):
    """A :class:`Table` as a pandas DataFrame (pandas imported here, so commands that print never load it): columns as
    in CSV less ``better_than``, numbers as floats (NaN where empty), counts as nullable integers; the first text
    column names the rows (the index) when its values are distinct."""
    import pandas as pd

    data: dict[str, list] = {}
    kinds: dict[str, str] = {}
    for header, i, part in flat_columns(table):
        column, kept = table.columns[i], part == "value" and table.columns[i].kind in ("text", "count")
        values = [flat_value(table, column, row[i], part) for row in table.rows]
        if part != "better_than":
            data[header] = values if kept else [math.nan if value is None else value for value in values]
        if kept and column.kind == "count":
            kinds[header] = "Int64"
    frame = pd.DataFrame(data, columns=list(data)).astype(kinds)
    names = next((c.key for c in table.columns if c.kind == "text"), None)
    if names is not None and frame[names].notna().all() and frame[names].is_unique:
        frame = frame.set_index(names)
    return frame


__all__ = ["KINDS", "NUMBER_STYLES", "Cell", "Column", "Table", "Tabular", "in_percent", "pick", "table_frame"]
