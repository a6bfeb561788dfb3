"""How numbers, intervals, p-values and names appear in every table (terminal, Markdown, LaTeX, CSV).

One place, so a CI or a p-value reads the same in ``correlations``, ``report``, ``systems``, ``confounders`` and
the terminal tables of :mod:`learned_metrics.cli.tables` (top level, so a CLI import stays light).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MISSING = "—"


def format_number(value: float | None, digits: int = 3) -> str:
    """A table cell's number: fixed digits, an em dash when undefined (None or NaN); never ``-0.00``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{round(value, digits) + 0.0:.{digits}f}"  # + 0.0 turns a rounded -0.0 into 0.0


def format_ci(ci: Sequence[float] | None, digits: int = 3) -> str:
    """``[low, high]`` with fixed digits, an em dash when there is no interval."""
    return MISSING if ci is None else f"[{format_number(ci[0], digits)}, {format_number(ci[1], digits)}]"


def format_p(p: float | None) -> str:
    """A p-value: 4 decimals, scientific below 1e-4, an em dash when undefined."""
    return MISSING if p is None else (f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}")


def plain_number(value: float | None) -> str:
    """A CSV cell: full precision (6 significant digits), empty when undefined."""
    return "" if value is None else f"{value:.6g}"


_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                   "<": r"$<$", ">": r"$>$"}


def latex_escape(text: str) -> str:
    """Plain text (metric names, captions) safe inside a LaTeX table."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)
