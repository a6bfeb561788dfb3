"""Device and numeric precision for scoring: ``auto`` is the (process's own) GPU when there is one, with bf16 where
supported, else fp32 on CPU; fp16 is refused on CPU, where half-precision kernels are missing or slower."""

from __future__ import annotations

import torch

from learned_metrics.errors import UserError
from learned_metrics.scoring.options import DEVICES

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_device(name: str | torch.device = "auto", default: torch.device | None = None) -> torch.device:
    """``auto`` -> ``default`` (e.g. the accelerate process device), else CUDA if present, else CPU."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        return default if default is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise UserError(f"unknown device '{name}', expected one of {', '.join(DEVICES)} (or cuda:N)") from None
    if device.type not in ("cpu", "cuda"):
        raise UserError(f"unsupported device '{name}', expected one of {', '.join(DEVICES)} (or cuda:N)")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UserError(f"--device {name}: no CUDA GPU is available to this process (use --device cpu)")
    if device.type == "cuda" and default is not None and default.type == "cuda" and device.index is None:
        return default  # under accelerate each process keeps its own GPU
    return device


def resolve_dtype(precision: str, device: torch.device) -> torch.dtype:
    """``auto`` = bf16 on GPUs that support it, fp32 otherwise; fp16 needs a GPU."""
    if precision == "auto":  # any other value was checked against PRECISIONS by ScoringOptions
        return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    if precision == "fp16" and device.type == "cpu":
        raise UserError("--precision fp16 needs a GPU; use fp32 (or bf16) on CPU")
    if precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise UserError("this GPU does not support bf16; use --precision fp16 or fp32")
    return _DTYPES[precision]
