"""Safe loading of model weights: safetensors, never pickles unless the user says so.

``pytorch_model.bin`` and Lightning checkpoints are Python pickles: loading one
from an untrusted source can run arbitrary code. Training and scoring load
weights from safetensors only; a folder that holds nothing but pickled weights
is refused with a clear message unless ``allow_pickle`` is given. Nothing in
this project enables ``trust_remote_code``.
"""

from __future__ import annotations

import os
from pathlib import Path

from learned_metrics.errors import UserError

PICKLE_WEIGHT_PATTERNS = ("pytorch_model*.bin", "*.pt", "*.pth")


def has_safetensors(model_dir: Path) -> bool:
    return any(model_dir.glob("*.safetensors"))


def has_pickled_weights(model_dir: Path) -> bool:
    return any(any(model_dir.glob(pattern)) for pattern in PICKLE_WEIGHT_PATTERNS)


def check_weights_are_safe(
    name_or_path: str | os.PathLike, allow_pickle: bool = False, flag: str = "--allow-pickle"
) -> None:
    """Refuse a local model folder whose weights exist only as pickles, unless ``allow_pickle``.

    Hub ids are not checked here: they load with ``use_safetensors`` (see
    :func:`safetensors_kwargs`), which fails the same way for pickle-only repos.
    """
    model_dir = Path(name_or_path).expanduser()
    if allow_pickle or not model_dir.is_dir():
        return
    if has_pickled_weights(model_dir) and not has_safetensors(model_dir):
        raise UserError(
            "model weights exist only as a pickle (pytorch_model.bin), which can run arbitrary code when loaded; "
            f"convert them to safetensors, or pass {flag} if you trust their origin",
            path=model_dir,
        )


def safetensors_kwargs(allow_pickle: bool = False) -> dict[str, bool]:
    """``from_pretrained`` keywords: safetensors required unless pickles are allowed."""
    return {} if allow_pickle else {"use_safetensors": True}
