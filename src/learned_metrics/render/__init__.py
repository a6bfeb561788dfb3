"""Rendering: the table model every analysis returns (:mod:`.model`), one renderer per format (:mod:`.text` for
Markdown, LaTeX, CSV and JSON; :mod:`.terminal` for rich tables), number formats (:mod:`.formats`) and figures
(:mod:`.figures`). No analysis formats output itself; it says ``tables()`` and inherits :class:`Tabular`.
"""

from __future__ import annotations

from learned_metrics.render.model import KINDS, Cell, Column, Table, pick
from learned_metrics.render.text import csv_text, latex, markdown


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


__all__ = ["KINDS", "Cell", "Column", "Table", "Tabular", "pick"]
