"""How numbers, intervals, p-values and names are written in every table and every format: one place, so a CI or a
p-value reads the same in every command (meta-eval, the scoring summary, the training table), in the terminal,
Markdown, LaTeX and CSV.
"""

from __future__ import annotations

from collections.abc import Sequence

from learned_metrics.io import shown_text
from learned_metrics.validate import is_missing

MISSING = "—"


def format_number(value: float | None, digits: int = 3) -> str:
    """A table cell's number: fixed digits, an em dash when undefined (None or NaN); never ``-0.00``."""
    return MISSING if is_missing(value) else f"{round(value, digits) + 0.0:.{digits}f}"  # + 0.0: never -0.0


def format_ci(ci: Sequence[float] | None, digits: int = 3) -> str:
    """``[low, high]`` with fixed digits, an em dash when there is no interval."""
    return MISSING if ci is None else f"[{format_number(ci[0], digits)}, {format_number(ci[1], digits)}]"


def format_p(p: float | None) -> str:
    """A p-value, the same in every table: 4 decimals, scientific below 1e-4, an em dash when undefined."""
    return MISSING if is_missing(p) else f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def format_count(value: int | None) -> str:
    return MISSING if value is None else str(int(value))


def plain_number(value: float | None) -> str:
    """A CSV cell: full precision (15 significant digits, every digit a float64 holds, without the noise of a
    percent's x100), empty when undefined."""
    return "" if is_missing(value) else f"{value + 0.0:.15g}" if isinstance(value, float) else str(value)  # never -0


_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                   "<": r"$<$", ">": r"$>$", MISSING: "---"}


def latex_escape(text: str) -> str:
    """Plain text (metric names, captions) safe inside a LaTeX table: specials escaped, control characters as
    :func:`shown_text` shows them (line breaks as spaces)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in shown_text(text))


def latex_number(text: str) -> str:
    """A formatted number or interval in LaTeX: a real minus sign, ``---`` when undefined."""
    return text.replace("-", "$-$").replace(MISSING, "---")


def markdown_escape(text: str) -> str:
    """A name inside a Markdown table cell: ``|`` escaped, control characters as :func:`shown_text` shows them
    (line breaks as spaces), HTML brackets as entities."""
    return shown_text(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
