"""Checkpoint -> a folder that plain ``transformers`` loads, plus ``learned_metric.json`` (the scorer reads it to
reproduce the training preprocessing). Training runs and ``learned-metrics export`` write exports the same way;
everything read from a checkpoint is checked before use (``weights_only=True``, no custom code, no tokenizer files).
"""

from __future__ import annotations

import logging
import pickle
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from learned_metrics.card import CARD_NAME, complete_card
from learned_metrics.errors import UserError
from learned_metrics.io import dump_json
from learned_metrics.onnx_export import add_onnx, require_onnxruntime
from learned_metrics.outputs import atomic_folder, check_outputs, folder_output, input_path
from learned_metrics.settings import Settings, setting, takes
from learned_metrics.validate import library_errors

log = logging.getLogger(__name__)

EXPORT_KIND = "export"
TOKENIZER_FOLDER = "tokenizer"  # RUN/tokenizer/: saved once per run, beside RUN/checkpoints/
VALIDATION_METRICS_KEY = "validation_metrics"  # a checkpoint's val/ metrics when saved right after a validation


@dataclass(frozen=True)
class ExportSettings(Settings):
    """Every flag of ``learned-metrics export`` and keyword of :func:`export_checkpoint`."""

    tokenizer: str | None = setting(None, "folder with the tokenizer (default: the run's tokenizer/ beside "
                                    "checkpoints/, else the model the run started from)", metavar="DIR")
    overwrite: bool = setting(False, "replace an earlier export in OUTPUT atomically (a folder holding anything else "
                              "is never touched)", flag=True, scores=False)
    allow_pickle: bool = setting(False, "allow loading pickled objects from the checkpoint (only for trusted files)",
                                 flag=True, scores=False)
    onnx: bool = setting(False, "also write model.onnx beside the safetensors (ONNX Runtime; `score --engine onnx`)",
                         flag=True, scores=False)
    onnx_int8: bool = setting(False, "also write model.onnx and its int8 copy model.int8.onnx (dynamic quantization)",
                              flag=True, scores=False)
    onnx_from: str | None = setting(None, "add model.onnx (with --onnx-int8 also model.int8.onnx) to this existing "
                                    "export folder, in place; give no CHECKPOINT OUTPUT", metavar="EXPORT_DIR",
                                    scores=False, argparse={"type": input_path})


def write_export(model, tokenizer: str | Path, card: dict[str, Any], out_dir: str | Path,
                 source_checkpoint: str | None = None, results: dict[str, dict[str, float]] | None = None,
                 overwrite: bool = False) -> Path:
    """Write model (safetensors), tokenizer (a folder or hub id) and the completed card into ``out_dir`` atomically;
    what can be refused (the card, the tokenizer) is checked before the first byte is written."""
    from learned_metrics.safety import load_tokenizer, quiet_transformers

    out_dir = Path(out_dir)
    _check_finite_weights(model, source_checkpoint)
    _label2id_from_id2label(model.config)
    full_card = complete_card(card, model.config.id2label, source_checkpoint, results)
    loaded_tokenizer = load_tokenizer(tokenizer)
    with atomic_folder(out_dir, EXPORT_KIND, overwrite) as tmp, quiet_transformers():
        model.save_pretrained(tmp, safe_serialization=True)
        loaded_tokenizer.save_pretrained(tmp)
        (tmp / CARD_NAME).write_text(dump_json(full_card) + "\n", encoding="utf-8")
    return out_dir


def _check_finite_weights(model: Any, source: str | Path | None) -> None:
    """Weights with NaN or infinities (a diverged run) score NaN for every row: refused before anything is written."""
    import torch

    bad = [name for name, tensor in model.state_dict().items()
           if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())]
    if bad:
        raise UserError(f"{len(bad)} weight tensor(s) hold NaN or infinite values (first: {bad[0]}): training "
                        "diverged, nothing exported; train again with a lower model.lr, or export an earlier "
                        "checkpoint", path=source)


def _label2id_from_id2label(config: Any) -> None:
    """``config.label2id`` as the inverse of ``config.id2label``, the mapping training used (it maps every label by
    id2label's names): a base model's stale label2id would send a plain ``transformers`` user who reads
    ``label2id["entailment"]`` to another class's column. Names given twice (no inverse) are left as they are."""
    id2label = {int(i): str(name) for i, name in config.id2label.items()}
    inverse = {name: i for i, name in id2label.items()}
    current = {str(name): int(i) for name, i in (config.label2id or {}).items()}
    if len(inverse) == len(id2label) and current != inverse:
        log.warning("config.json: label2id %s disagreed with id2label %s (the mapping training used); the export "
                    "writes label2id %s", current, id2label, inverse)
        config.label2id = inverse


def checkpoint_tokenizer(checkpoint: dict[str, Any], ckpt_path: str | Path,
                         tokenizer_dir: str | Path | None = None) -> str | Path:
    """Where a checkpoint's tokenizer is, first found of: ``tokenizer_dir``; its run's ``tokenizer/`` folder; the model
    the run started from (``base_model`` in its card; training never changes the tokenizer)."""
    if tokenizer_dir is not None:
        return tokenizer_dir  # as typed: ./tok is a path, org/name a Hub id (safety.check_source)
    run_tokenizer = Path(ckpt_path).resolve().parent.parent / TOKENIZER_FOLDER
    if run_tokenizer.is_dir():
        return run_tokenizer
    base_model = checkpoint.get("learned_metric", {}).get("base_model")
    if isinstance(base_model, str) and base_model:
        return base_model
    raise UserError(f"no tokenizer for this checkpoint: no {TOKENIZER_FOLDER}/ in its run folder and no base model in "
                    "its card; pass --tokenizer DIR (the model's own folder works)", path=ckpt_path)


def load_checkpoint(path: str | Path, allow_pickle: bool = False) -> dict[str, Any]:
    """Load a Lightning checkpoint with ``weights_only=True``; pickled objects need ``allow_pickle``. Anything not a
    readable ``torch.save`` archive is one line saying so; only a real pickle gets the ``--allow-pickle`` advice."""
    import torch

    path = Path(path)
    if not path.exists():
        raise UserError("checkpoint file not found", path=path)
    if not path.is_file():
        raise UserError("is a folder, expected a .ckpt file", path=path)
    if path.stat().st_size == 0:
        raise UserError("file is empty, not a checkpoint", path=path)
    if not zipfile.is_zipfile(path):
        raise UserError("not a PyTorch checkpoint (torch.save writes a zip archive; this file is not one, or is "
                        "truncated)", path=path)
    # torch raises RuntimeError/EOFError/KeyError/... for damaged archives, and a damaged pickle anything
    with library_errors("not a readable checkpoint", path=path):
        try:
            checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except pickle.UnpicklingError as exc:
            if "GLOBAL" not in str(exc):
                raise
            if not allow_pickle:
                raise UserError("checkpoint holds pickled Python objects, which can run code when loaded, and was "
                                "refused; pass --allow-pickle (model.allow_pickle=true for train.py) only if you trust "
                                "its origin", path=path) from None
            checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    return check_checkpoint(checkpoint, path)


def check_checkpoint(checkpoint: Any, path: object) -> dict[str, Any]:
    """The fields a learned-metrics checkpoint must have, with the types everything downstream relies on."""
    import torch

    if not isinstance(checkpoint, dict):
        raise UserError(f"not a learned-metrics checkpoint (holds a {type(checkpoint).__name__})", path=path)
    missing = [key for key in ("hf_config", "state_dict") if key not in checkpoint]
    if missing:
        raise UserError(f"not a learned-metrics checkpoint (missing {missing})", path=path)
    state = checkpoint["state_dict"]
    if not isinstance(state, Mapping) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                  for k, v in state.items()):
        raise UserError("checkpoint field 'state_dict' must map parameter names to tensors", path=path)
    if not isinstance(checkpoint["hf_config"], dict):
        raise UserError("checkpoint field 'hf_config' must be a mapping", path=path)
    if not isinstance(checkpoint.get("learned_metric", {}), dict):
        raise UserError("checkpoint field 'learned_metric' must be a mapping", path=path)
    if "tokenizer_files" in checkpoint:  # embedded by unreleased development versions only; never read
        raise UserError("checkpoint embeds tokenizer files ('tokenizer_files', written only by unreleased development "
                        "versions), which are no longer read; delete that key (the tokenizer is read from "
                        "RUN/tokenizer/, --tokenizer DIR or the base model)", path=path)
    return checkpoint


def model_from_checkpoint(checkpoint: dict[str, Any], path: str | Path = "checkpoint"):
    """Rebuild the transformers model from a checkpoint's stored config and weights (no hub access, no custom code)."""
    from learned_metrics.safety import classifier_from_config_dict

    model = classifier_from_config_dict(checkpoint["hf_config"], path)  # checked by load_checkpoint
    state = {k.removeprefix("model."): v for k, v in checkpoint["state_dict"].items() if k.startswith("model.")}
    with library_errors("checkpoint weights do not match its config", path=path, kinds=RuntimeError):
        model.load_state_dict(state, strict=True)
    return model.eval()


@takes(ExportSettings)
def export_checkpoint(ckpt_path: str | Path, out_dir: str | Path, *, settings: ExportSettings) -> Path:
    """Export any learned-metrics Lightning checkpoint to a transformers folder; every check comes before writing.
    The settings: :class:`ExportSettings`' fields (``tokenizer``, ``overwrite``, ``allow_pickle`` ...), as keywords
    or one ``settings=`` object."""
    from learned_metrics.safety import check_model_folder

    s = settings
    check_outputs([folder_output(out_dir, EXPORT_KIND)], inputs=[ckpt_path, s.tokenizer], overwrite=s.overwrite)
    if s.tokenizer is not None:  # at once: a missing or custom-code --tokenizer before the checkpoint is read
        check_model_folder(s.tokenizer, need_config=False, what="tokenizer")
    if s.onnx_from is not None:
        raise UserError("--onnx-from adds the graph to an existing export folder: give it without CHECKPOINT OUTPUT")
    if s.onnx or s.onnx_int8:  # before the checkpoint is read: no onnxruntime is one line, and nothing written
        require_onnxruntime()
    checkpoint = load_checkpoint(ckpt_path, s.allow_pickle)
    model = model_from_checkpoint(checkpoint, ckpt_path)
    source = checkpoint_tokenizer(checkpoint, ckpt_path, s.tokenizer)
    saved = checkpoint.get(VALIDATION_METRICS_KEY)  # a checkpoint saved right after a validation carries them
    card = {**checkpoint.get("learned_metric", {}), "selection": {
        "monitor": None, "mode": None, "best_value": None, "step": checkpoint.get("global_step"),
        "note": f"chosen by hand: learned-metrics export of {Path(ckpt_path).name}"}}
    out = write_export(model, source, card, out_dir, str(ckpt_path), overwrite=s.overwrite,
                       results={"validation": dict(saved)} if isinstance(saved, dict) and saved else None)
    if s.onnx or s.onnx_int8:
        add_onnx(out, int8=s.onnx_int8)
    return out
