"""The file renderers of the table model, one each: Markdown, LaTeX (booktabs), CSV and JSON. Names are escaped per
format and written as :func:`learned_metrics.io.display_text` says when they are not UTF-8; LaTeX numbers carry a
real minus sign, and a table too wide for one column of a two-column paper is ``table*``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from learned_metrics.io import display_text, dump_json, shown_text
from learned_metrics.render.formats import (
    format_ci,
    format_count,
    format_number,
    format_p,
    latex_escape,
    latex_number,
    markdown_escape,
    plain_number,
)
from learned_metrics.render.model import Cell, Column, Table, caption_text

# A LaTeX table whose widest row has more characters than this does not fit one column of a two-column paper.
ONE_COLUMN_CHARACTERS = 60


def cell_text(column: Column, cell: Cell) -> str:
    """The cell's main text, as every renderer writes it (the CI of an ``estimate`` column comes separately)."""
    if column.kind == "text":
        return "" if cell.value is None else str(cell.value)
    if column.kind == "ci":
        return format_ci(cell.ci, column.digits)
    plain = {"count": format_count, "p": format_p}.get(column.kind)
    return plain(cell.value) if plain else format_number(cell.value, column.digits)


def interval_text(column: Column, cell: Cell) -> str | None:
    """The interval shown under an ``estimate`` value (None for other kinds or without one)."""
    return format_ci(cell.ci, column.digits) if column.kind == "estimate" and cell.ci is not None else None


@dataclass(frozen=True)
class _Style:
    """How one text format marks a cell: escaping, numbers, bold, superscript marks, a small detail, the interval of
    an estimate after its value (None: the table renderer places it)."""

    text: Callable[[str], str]
    number: Callable[[str], str]
    bold: str
    marks: str
    detail: str
    interval: str | None = None


MARKDOWN = _Style(markdown_escape, str, "**{}**", "<sup>{}</sup>", " ({})", " {}")
LATEX = _Style(latex_escape, latex_number, r"\textbf{{{}}}", "$^{{{}}}$", r" {{\scriptsize ({})}}")


def _styled_cell(style: _Style, column: Column, cell: Cell) -> str:
    """The cell's text in one format: escaped or with its numbers typeset, bold, marks, detail and interval as the
    format writes them."""
    text = (style.text if column.text else style.number)(cell_text(column, cell))
    if cell.bold and text:
        text = style.bold.format(text)
    if cell.marks:
        text += style.marks.format(",".join(cell.marks))
    if cell.detail:
        text += style.detail.format(style.text(cell.detail))
    interval = interval_text(column, cell) if style.interval else None
    return text + style.interval.format(interval) if interval else text


def markdown_table(table: Table) -> str:
    lines = [f"**{markdown_escape(table.heading)}**", ""] if table.heading else []
    lines.append("| " + " | ".join(markdown_escape(c.heading) for c in table.columns) + " |")
    lines.append("|" + "".join("---|" if c.text else "---:|" for c in table.columns))
    for index, row in enumerate(table.rows):
        if index in table.groups:
            lines.append(f"| **{markdown_escape(table.groups[index])}** |" + " |" * (len(table.columns) - 1))
        cells = (_styled_cell(MARKDOWN, c, cell) for c, cell in zip(table.columns, row, strict=True))
        lines.append("| " + " | ".join(cells) + " |")
    if caption := caption_text(table, shows_bold=True):
        lines += ["", shown_text(" ".join(caption.splitlines()))]  # names in it (a model path) shown, not obeyed
    return "\n".join(lines) + "\n"


def markdown(tables: Sequence[Table]) -> str:
    """Every table in order, a blank line between them."""
    return display_text("\n".join(markdown_table(table) for table in tables))


def _latex_width(table: Table) -> int:
    """Characters of the widest row as printed: headings, values with their marks, intervals on their own line."""
    widths = [len(c.heading) for c in table.columns]
    for row in table.rows:
        for i, (column, cell) in enumerate(zip(table.columns, row, strict=True)):
            shown = cell_text(column, cell) + ",".join(cell.marks)
            widths[i] = max(widths[i], len(shown), len(interval_text(column, cell) or ""))
    return sum(widths) + 2 * len(widths)


def latex_table(table: Table) -> str:
    """One booktabs table that compiles as is (``\\usepackage{booktabs}``); intervals in small type under values."""
    environment = "table*" if _latex_width(table) > ONE_COLUMN_CHARACTERS else "table"
    spec = "".join("l" if c.text else "c" if c.kind in ("estimate", "ci") else "r" for c in table.columns)
    heads = " & ".join(c.latex or latex_escape(c.heading) for c in table.columns)
    lines = [rf"\begin{{{environment}}}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             rf"{heads} \\", r"\midrule"]
    estimates = any(c.kind == "estimate" for c in table.columns)
    label = "".join(ch if ch.isalnum() or ch in "-:" else "-" for ch in table.key)
    for index, row in enumerate(table.rows):
        if index in table.groups:
            if index:
                lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{len(table.columns)}}}{{l}}{{\emph{{{latex_escape(table.groups[index])}}}}}"
                         r" \\")
        cells = list(zip(table.columns, row, strict=True))
        lines.append(" & ".join(_styled_cell(LATEX, c, cell) for c, cell in cells) + r" \\")
        if estimates:
            lines.append(" & ".join(r"{\scriptsize " + latex_number(interval_text(c, cell) or "") + "}"
                                    if c.kind == "estimate" else "" for c, cell in cells) + r" \\")
        if index in table.rules and index < len(table.rows) - 1:
            lines.append(r"\midrule")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(caption_text(table, shows_bold=True))}}}",
              rf"\label{{tab:{label}}}", rf"\end{{{environment}}}"]
    return "\n".join(lines) + "\n"


def latex(tables: Sequence[Table]) -> str:
    return display_text("\n".join(latex_table(table) for table in tables))


def flat_columns(table: Table) -> list[tuple[str, int, str]]:
    """(header, column index, part) of every flat column a table column becomes, the one expansion CSV and
    :func:`learned_metrics.render.table_frame` share: an ``estimate`` column ``k`` is ``k, k_ci_low, k_ci_high`` (and
    ``k_better_than`` where the table names the rows it beats), a ``ci`` column ``k_low, k_high``."""
    out: list[tuple[str, int, str]] = []
    for i, column in enumerate(table.columns):
        if column.kind == "ci":
            out += [(f"{column.key}_low", i, "low"), (f"{column.key}_high", i, "high")]
            continue
        out.append((column.key, i, "value"))
        if column.kind == "estimate":
            out += [(f"{column.key}_ci_low", i, "low"), (f"{column.key}_ci_high", i, "high")]
            if table.mark_names is not None:
                out.append((f"{column.key}_better_than", i, "better_than"))
    return out


def flat_value(table: Table, column: Column, cell: Cell, part: str) -> Any:
    """A flat column's value as CSV and DataFrames share it: text, an int count, a float (a number, an interval's
    end) or None; for ``better_than`` the names of the rows the cell beats."""
    if part == "better_than":
        return ";".join(table.mark_names[int(m) - 1] for m in cell.marks if m.isdigit())  # type: ignore[index]
    if part != "value":
        return None if cell.ci is None else float(cell.ci[1 if part == "high" else 0])
    return None if cell.value is None else {"text": str, "count": int}.get(column.kind, float)(cell.value)


def csv_text(table: Table) -> str:
    """One table as CSV: a header row, then one row per table row (group headings are not rows)."""
    columns = flat_columns(table)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([header for header, _, _ in columns])
    for row in table.rows:
        values = (flat_value(table, table.columns[i], row[i], part) for _, i, part in columns)
        writer.writerow([value if isinstance(value, str) else plain_number(value) for value in values])
    return display_text(buffer.getvalue())


def json_text(payload: dict[str, Any], settings: dict[str, Any] | None = None) -> str:
    """An analysis's JSON with its ``settings`` block (the analysis's own settings first, then the run's)."""
    document = payload if settings is None else {**payload, "settings": {**payload.get("settings", {}), **settings}}
    return dump_json(document) + "\n"
