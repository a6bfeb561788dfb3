"""The scoring choices, importable without torch so that ``learned-metrics --help`` stays fast."""

from __future__ import annotations

MODES = ("e", "e-c")
PREMISE_STRATEGIES = ("truncate", "chunk")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
DEFAULT_CHUNK_SIZE = 50_000
