"""The one table model every analysis returns: :class:`Table` objects (columns, rows of :class:`Cell`, caption),
never text. :mod:`.text` and :mod:`.terminal` render them and :mod:`.formats` writes each number, interval and
p-value, so a value reads the same in every command and every format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from learned_metrics.errors import UserError

# number: fixed digits; count: an integer; ci: the cell's interval alone; estimate: the value, its interval under it
KINDS = ("text", "number", "count", "p", "ci", "estimate")


@dataclass
class Cell:
    """One table cell: a value (number, count or text), its interval, and how it is marked."""

    value: Any = None
    ci: tuple[float, float] | None = None
    bold: bool = False  # best value, significant test
    marks: tuple[str, ...] = ()  # superscripts: the numbers of the rows it beats, or "*"
    detail: str | None = None  # small type: a pair count


@dataclass(frozen=True)
class Column:
    """A column: ``key`` names it in CSV/JSON, ``title`` for people, ``latex`` when the heading needs math."""

    key: str
    title: str | None = None
    kind: str = "number"
    digits: int = 3
    latex: str | None = None
    share: bool = False  # a fraction of 1 (AUC, BAcc, accuracy, a rate): --number-style percent prints it x 100

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column kind {self.kind!r} is not one of {KINDS}")

    @property
    def heading(self) -> str:
        return self.key if self.title is None else self.title

    @property
    def text(self) -> bool:
        return self.kind == "text"


@dataclass
class Table:
    """Rows of cells under named columns, with what a reader needs to trust them."""

    columns: list[Column]
    rows: list[list[Cell]]
    title: str = ""  # heads the terminal table
    caption: str = ""  # what the numbers are and how they were made
    key: str = "table"  # names it among a result's tables (to_csv(key)) and in its LaTeX \label{tab:<key>}
    heading: str = ""  # heads the Markdown table (optional)
    groups: dict[int, str] = field(default_factory=dict)  # row index -> a heading shown before that row
    rules: set[int] = field(default_factory=set)  # row indices followed by a rule (a mean row)
    mark_names: Sequence[str] | None = None  # the row numbers of marks back as names, in CSV
    bold: str = ""  # what a bold cell means; "Bold: ..." only where a format shows bold (caption_text)

    def __post_init__(self) -> None:
        self.rows = [[cell if isinstance(cell, Cell) else Cell(cell) for cell in row] for row in self.rows]
        for number, row in enumerate(self.rows, start=1):
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.key!r} row {number} has {len(row)} cells for {len(self.columns)} "
                                 "columns")


def caption_text(table: Table, *, shows_bold: bool) -> str:
    """The caption as one format writes it: "Bold: <what bold means>." is added only where the format shows bold
    (Markdown, LaTeX, a terminal with styles), never in plain terminal output (a pipe, a log) or a JSON caption."""
    return f"{table.caption} Bold: {table.bold}.".strip() if shows_bold and table.bold else table.caption


def pick(tables: Sequence[Table], key: str | None) -> Table:
    """The table named ``key`` (the first when None); a ValueError-type one-liner names the keys there are."""
    found = tables[0] if key is None else next((table for table in tables if table.key == key), None)
    if found is not None:
        return found
    raise UserError(f"no table {key!r}; tables: {', '.join(t.key for t in tables)}")


NUMBER_STYLES = ("fraction", "percent")
PERCENT_DIGITS = 1


def in_percent(table: Table) -> Table:
    """The table as the leaderboards and papers print rates: every ``share`` column (value and interval) x 100
    with one decimal, the caption saying so. Tables without such columns come back unchanged."""
    numeric = [i for i, c in enumerate(table.columns) if c.kind in ("number", "estimate", "ci")]
    shares = [i for i in numeric if table.columns[i].share]
    if not shares:
        return table

    def scaled(cell: Cell) -> Cell:
        return replace(cell, value=None if cell.value is None else cell.value * 100,
                       ci=None if cell.ci is None else (cell.ci[0] * 100, cell.ci[1] * 100))

    columns = [replace(c, digits=PERCENT_DIGITS) if i in shares else c for i, c in enumerate(table.columns)]
    rows = [[scaled(cell) if i in shares else cell for i, cell in enumerate(row)] for row in table.rows]
    which = "Values" if shares == numeric else ", ".join(table.columns[i].heading for i in shares)
    return replace(table, columns=columns, rows=rows, caption=f"{table.caption} {which} in percent.".strip())
