"""Rendering for every command: one console factory and the small table shapes the commands share."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from learned_metrics.formatting import format_ci, format_number
from learned_metrics.formatting import format_p as fmt_p  # noqa: F401  (the commands' name for it)

PIPE_WIDTH = 120  # files, pipes and SLURM logs: wide enough that tables are not squeezed to 80 columns


def console(*, stderr: bool = False, width: int | None = None):
    """A rich console on stdout (or stderr): ``width`` columns, or the terminal's, or 120 when piped."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if width is None and not stream.isatty():
        width = PIPE_WIDTH
    return Console(file=stream, highlight=False, width=width, soft_wrap=False)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, left: Sequence[str] = (),
          **options: Any):
    """A rich table: ``left`` columns left-aligned, the others (numbers) right-aligned."""
    from rich.table import Table

    rendered = Table(title=title, show_header=True, **options)
    for name in columns:
        rendered.add_column(name, justify="left" if name in left else "right")
    for row in rows:
        rendered.add_row(*(str(cell) for cell in row))
    return rendered


def key_value_table(title: str, items: Mapping[str, Any]):
    """Two columns, item and value (floats to 4 decimals): the end-of-run summaries."""
    from rich.table import Table

    rendered = Table(title=title, show_header=True)
    rendered.add_column("item")
    rendered.add_column("value", overflow="fold")
    for key, value in items.items():
        rendered.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    return rendered


def fmt(value: float | None, digits: int = 4) -> str:
    """Terminal tables show 4 decimals (papers 3, see :mod:`learned_metrics.formatting`)."""
    return format_number(value, digits)


def fmt_ci(ci: Sequence[float] | None) -> str:
    return format_ci(ci, 4)
