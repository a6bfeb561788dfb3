"""The scoring choices, importable without torch so that ``learned-metrics --help`` stays fast."""

from __future__ import annotations

from collections.abc import Sequence

from learned_metrics.errors import UserError

MODES = ("e", "e-c")
PREMISE_STRATEGIES = ("truncate", "chunk")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
DEFAULT_CHUNK_SIZE = 50_000


def one_of(value: str, choices: Sequence[str], what: str) -> str:
    """``value`` if it is one of ``choices``, else a one-line error naming ``what`` and the choices."""
    if value not in choices:
        raise UserError(f"unknown {what} '{value}', expected one of {', '.join(choices)}")
    return value
