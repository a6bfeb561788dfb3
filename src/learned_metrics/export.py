"""Checkpoint -> a folder that plain ``transformers`` loads, plus ``learned_metric.json``.

The export holds ``config.json`` (with ``id2label``), ``model.safetensors``,
the tokenizer files and the card: metric kind, label names, preprocessing
(sentence splitter, joiner, max length), default scoring mode, augmentation
settings, validation results and the resolved training config. Other tools
need nothing but ``AutoModelForSequenceClassification``/``AutoTokenizer``;
our scorer reads the card to reproduce the training preprocessing.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import pickle
from pathlib import Path
from typing import Any

from learned_metrics import __version__
from learned_metrics.errors import UserError
from learned_metrics.io import atomic_dir

CARD_NAME = "learned_metric.json"
CARD_FORMAT_VERSION = 1


def _write_tokenizer_files(files: dict[str, str], out_dir: Path) -> None:
    for name, data in files.items():
        target = out_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))


def build_card(card: dict[str, Any], id2label: dict[int, str], source_checkpoint: str | None) -> dict[str, Any]:
    """The full card: what training recorded plus the labels and provenance."""
    return {
        "format_version": CARD_FORMAT_VERSION,
        **card,
        "id2label": {str(k): v for k, v in id2label.items()},
        "source_checkpoint": source_checkpoint,
        "learned_metrics_version": __version__,
        "exported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def write_export(
    model,
    tokenizer_files: dict[str, str],
    card: dict[str, Any],
    out_dir: str | Path,
    source_checkpoint: str | None = None,
) -> Path:
    """Write model (safetensors), tokenizer and card into ``out_dir`` atomically."""
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        _write_tokenizer_files(tokenizer_files, tmp)
        full_card = build_card(card, model.config.id2label, source_checkpoint)
        (tmp / CARD_NAME).write_text(json.dumps(full_card, indent=2, ensure_ascii=False, default=str) + "\n")
    return out_dir


def export_module(module, out_dir: str | Path, source_checkpoint: str | None = None) -> Path:
    """Export a live :class:`~learned_metrics.models.classifier.SequenceClassifier`."""
    return write_export(module.model, module.tokenizer_files, module.card, out_dir, source_checkpoint)


def load_checkpoint(path: str | Path, allow_pickle: bool = False) -> dict[str, Any]:
    """Load a Lightning checkpoint with ``weights_only=True``; pickled objects need ``allow_pickle``."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise UserError("checkpoint file not found", path=path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if not allow_pickle:
            raise UserError(
                "checkpoint holds pickled Python objects and was refused (weights_only load failed: "
                f"{str(exc).splitlines()[0][:160]}); pass --allow-pickle only if you trust its origin",
                path=path,
            ) from None
        return torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, EOFError) as exc:
        raise UserError(f"not a readable checkpoint ({str(exc).splitlines()[0][:160]})", path=path) from None


def model_from_checkpoint(checkpoint: dict[str, Any], path: str | Path = "checkpoint"):
    """Rebuild the transformers model from a checkpoint's stored config and weights (no hub access)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    missing = [key for key in ("hf_config", "tokenizer_files", "state_dict") if key not in checkpoint]
    if missing:
        raise UserError(f"not a learned-metrics checkpoint (missing {missing})", path=path)
    hf_config = dict(checkpoint["hf_config"])
    config = AutoConfig.for_model(hf_config.pop("model_type"), **hf_config)
    model = AutoModelForSequenceClassification.from_config(config)
    prefix = "model."
    state = {k[len(prefix) :]: v for k, v in checkpoint["state_dict"].items() if k.startswith(prefix)}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise UserError(
            f"checkpoint weights do not match its config ({str(exc).splitlines()[0][:200]})", path=path
        ) from None
    return model.eval()


def export_checkpoint(ckpt_path: str | Path, out_dir: str | Path, allow_pickle: bool = False) -> Path:
    """Export any learned-metrics Lightning checkpoint to a transformers folder."""
    checkpoint = load_checkpoint(ckpt_path, allow_pickle)
    model = model_from_checkpoint(checkpoint, ckpt_path)
    return write_export(
        model, checkpoint["tokenizer_files"], checkpoint.get("learned_metric", {}), out_dir, str(ckpt_path)
    )


def read_card(model_dir: str | Path) -> dict[str, Any] | None:
    """The ``learned_metric.json`` of an export, or None for a plain transformers folder."""
    path = Path(model_dir) / CARD_NAME
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON ({exc.msg})", path=path, row=exc.lineno) from None


# --- command line ------------------------------------------------------------------------------


def _run_export(args: argparse.Namespace) -> int:
    out = export_checkpoint(args.checkpoint, args.output, allow_pickle=args.allow_pickle)
    print(f"exported {args.checkpoint} -> {out}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a Lightning checkpoint to a plain transformers folder",
        description="Rebuild a transformers folder (safetensors, tokenizer, id2label) plus learned_metric.json "
        "from any learned-metrics Lightning checkpoint, offline. Training runs already do this for the "
        "best checkpoint (checkpoints/<experiment>/<run>/export/).",
    )
    parser.add_argument(
        "checkpoint", help="path to a .ckpt file (e.g. checkpoints/ccl_cnndm/<run>/checkpoints/last.ckpt)"
    )
    parser.add_argument("output", help="folder to write (replaced atomically if it exists)")
    parser.add_argument(
        "--allow-pickle",
        action="store_true",
        help="allow loading pickled objects from the checkpoint (only for trusted files)",
    )
    parser.set_defaults(func=_run_export)
