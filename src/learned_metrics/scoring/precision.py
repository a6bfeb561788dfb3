"""Device and numeric precision for scoring.

``auto`` picks what is both fast and safe: the GPU when there is one (under
``accelerate launch`` the process's own GPU), bf16 weights on GPUs that support
it, fp32 everywhere else. fp16 is offered for older GPUs but refused on CPU,
where half-precision kernels are missing or slower than fp32.
"""

from __future__ import annotations

import torch

from learned_metrics.errors import UserError
from learned_metrics.scoring.options import DEVICES, PRECISIONS
from learned_metrics.validate import one_of

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_device(name: str | torch.device = "auto", default: torch.device | None = None) -> torch.device:
    """``auto`` -> ``default`` (e.g. the accelerate process device), else CUDA if present, else CPU."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        if default is not None:
            return default
        return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
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
    if precision == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    one_of(precision, PRECISIONS, "precision")
    if precision == "fp16" and device.type == "cpu":
        raise UserError("--precision fp16 needs a GPU; use fp32 (or bf16) on CPU")
    if precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise UserError("this GPU does not support bf16; use --precision fp16 or fp32")
    return _DTYPES[precision]
