"""The terminal renderer: one console factory, the table model as a rich table, and the small shapes the other
commands print (key-value summaries, plain lists)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from learned_metrics.io import display_text, shown_text
from learned_metrics.render.model import Table, caption_text
from learned_metrics.render.text import cell_text, interval_text

PIPE_WIDTH = 120  # files, pipes and SLURM logs: wide enough that tables are not squeezed to 80 columns


def console(*, stderr: bool = False, width: int | None = None):
    """A rich console on stdout (or stderr): ``width`` columns, or the terminal's, or 120 when piped."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = PIPE_WIDTH if width is None and not stream.isatty() else width
    return Console(file=_Shown(stream), highlight=False, width=width, soft_wrap=False)


class _Shown:
    """A text stream that writes names that are not UTF-8 as every output does (:func:`display_text`): a strict
    UTF-8 terminal or pipe would refuse them."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(display_text(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def literal(text: Any, style: str = ""):
    """``text`` as rich draws it literally: a Text, never markup (a name ``[/]`` is no closing tag), through
    :func:`shown_text` (a name's control characters are no escape sequence the terminal obeys)."""
    from rich.text import Text

    return Text(shown_text(str(text)), style=style)


def rich_table(table: Table):
    """The model as a rich table: intervals and details dim under their values, marks as ``^1,2``, bold kept."""
    from rich.table import Table as RichTable

    rendered = RichTable(title=literal(table.title) if table.title else None, show_header=True)
    for column in table.columns:
        rendered.add_column(literal(column.heading), justify="left" if column.text else "right",
                            no_wrap=not column.text)
    for index, row in enumerate(table.rows):
        if index in table.groups:
            rendered.add_row(literal(table.groups[index], "italic"), *[""] * (len(table.columns) - 1))
        cells = []
        for column, cell in zip(table.columns, row, strict=True):
            text = literal(cell_text(column, cell), "bold" if cell.bold else "")
            if cell.marks:
                text.append("^" + ",".join(cell.marks), style="dim")
            if below := interval_text(column, cell) or (f"({cell.detail})" if cell.detail else None):
                text.append("\n" + below, style="dim")
            cells.append(text)
        rendered.add_row(*cells, end_section=index in table.rules)
    return rendered


def print_tables(out: Any, tables: Iterable[Table], *, captions: bool = True) -> None:
    """Every table, each followed by its caption (what the numbers are and how they were made)."""
    shows_bold = out.color_system is not None  # a pipe or a log file gets no styles: bold is not seen there
    for table in tables:
        out.print(rich_table(table))
        if captions and (caption := caption_text(table, shows_bold=shows_bold)):
            out.print(literal(caption))


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, left: Sequence[str] = (),
          **options: Any):
    """A plain rich table of strings: ``left`` columns left-aligned, the others (numbers) right-aligned."""
    from rich.table import Table as RichTable

    rendered = RichTable(title=literal(title), show_header=True, **options)
    for name in columns:
        rendered.add_column(literal(name), justify="left" if name in left else "right")
    for row in rows:
        rendered.add_row(*map(literal, row))
    return rendered


def key_value_table(title: str, items: Mapping[str, Any]):
    """Two columns, item and value (floats to 4 decimals): the end-of-run summaries."""
    rows = [(key, f"{value:.4f}" if isinstance(value, float) else value) for key, value in items.items()]
    rendered = table(title, ("item", "value"), rows, left=("item", "value"))
    rendered.columns[1].overflow = "fold"
    return rendered
