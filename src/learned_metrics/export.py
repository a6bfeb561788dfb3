"""Checkpoint -> a folder that plain ``transformers`` loads, plus ``learned_metric.json``.

The export holds ``config.json`` (with ``id2label``), ``model.safetensors``,
the tokenizer files and the card (:mod:`learned_metrics.card`). Other tools
need nothing but ``AutoModelForSequenceClassification``/``AutoTokenizer``;
our scorer reads the card to reproduce the training preprocessing. Training
runs and ``learned-metrics export`` write exports the same way:
:func:`model_from_checkpoint` then :func:`write_export`.

The tokenizer comes from the run folder (``RUN/tokenizer/``, saved once when
fitting starts); checkpoints of earlier versions carry it base64-encoded
(``tokenizer_files``), which is still read, with every name checked.

Everything read from a checkpoint is checked before it is used: the
checkpoint loads with ``weights_only=True``, its stored config must name an
architecture transformers provides (no custom code), and embedded tokenizer
file names must be plain names (``../x`` would write outside the export).
"""

from __future__ import annotations

import base64
import binascii
import json
import pickle
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from learned_metrics.card import CARD_NAME, complete_card
from learned_metrics.errors import UserError, first_line
from learned_metrics.outputs import atomic_folder, check_outputs, folder_output
from learned_metrics.validate import plain_file_name

EXPORT_KIND = "export"
TOKENIZER_FOLDER = "tokenizer"  # RUN/tokenizer/: saved once per run, beside RUN/checkpoints/


def decode_tokenizer_files(files: Any, where: object) -> dict[str, bytes]:
    """The tokenizer files an older checkpoint carries, each name a plain file name and each body valid base64."""
    if not isinstance(files, Mapping) or not files:
        raise UserError("checkpoint field 'tokenizer_files' must be a non-empty mapping of file names", path=where)
    decoded = {}
    for name, data in files.items():
        plain_file_name(name, what="tokenizer file name in the checkpoint", path=where)
        if not isinstance(data, str):
            raise UserError(f"tokenizer file {name!r}: expected base64 text, got {type(data).__name__}", path=where)
        try:
            decoded[name] = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise UserError(f"tokenizer file {name!r}: not valid base64", path=where) from None
    return decoded


def _write_tokenizer(tokenizer: str | Path | Mapping[str, bytes], folder: Path) -> None:
    """A tokenizer folder (or an older checkpoint's decoded files) into the export."""
    if isinstance(tokenizer, Mapping):
        for name, data in tokenizer.items():
            (folder / name).write_bytes(data)
        return
    from learned_metrics.safety import load_tokenizer

    load_tokenizer(tokenizer).save_pretrained(folder)


def write_export(
    model,
    tokenizer: str | Path | Mapping[str, bytes],
    card: dict[str, Any],
    out_dir: str | Path,
    source_checkpoint: str | None = None,
    results: dict[str, dict[str, float]] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write model (safetensors), tokenizer and the completed card into ``out_dir`` atomically.

    ``tokenizer``: a folder holding the tokenizer (a run's ``tokenizer/``, a model folder) or
    :func:`decode_tokenizer_files` of an older checkpoint. ``results``: ``{"validation": {...}, "test": {...}}``.
    """
    out_dir = Path(out_dir)
    full_card = complete_card(card, model.config.id2label, source_checkpoint, results)
    with atomic_folder(out_dir, EXPORT_KIND, overwrite) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        _write_tokenizer(tokenizer, tmp)
        (tmp / CARD_NAME).write_text(json.dumps(full_card, indent=2, ensure_ascii=False, default=str) + "\n",
                                     encoding="utf-8")
    return out_dir


def checkpoint_tokenizer(checkpoint: dict[str, Any], ckpt_path: str | Path,
                         tokenizer_dir: str | Path | None = None) -> str | Path | Mapping[str, bytes]:
    """Where a checkpoint's tokenizer is, first found of: ``tokenizer_dir``; the files an older checkpoint embeds;
    the ``tokenizer/`` folder of its run (``RUN/checkpoints/x.ckpt`` -> ``RUN/tokenizer``); the model the run
    started from (``base_model`` in its card; training never changes the tokenizer)."""
    if tokenizer_dir is not None:
        return Path(tokenizer_dir)
    if "tokenizer_files" in checkpoint:
        return decode_tokenizer_files(checkpoint["tokenizer_files"], ckpt_path)
    run_tokenizer = Path(ckpt_path).resolve().parent.parent / TOKENIZER_FOLDER
    if run_tokenizer.is_dir():
        return run_tokenizer
    base_model = checkpoint.get("learned_metric", {}).get("base_model")
    if isinstance(base_model, str) and base_model:
        return base_model
    raise UserError(f"no tokenizer for this checkpoint: no {TOKENIZER_FOLDER}/ in its run folder and no base model in "
                    "its card; pass --tokenizer DIR (the model's own folder works)", path=ckpt_path)


def load_checkpoint(path: str | Path, allow_pickle: bool = False) -> dict[str, Any]:
    """Load a Lightning checkpoint with ``weights_only=True``; pickled objects need ``allow_pickle``.

    Anything that is not a readable ``torch.save`` archive (empty, text, random bytes,
    truncated) is one line saying so; only a real pickle of Python objects gets the
    ``--allow-pickle`` advice.
    """
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
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except pickle.UnpicklingError as exc:
        if "GLOBAL" not in str(exc):
            raise UserError(f"not a readable checkpoint ({first_line(exc)})", path=path) from None
        if not allow_pickle:
            raise UserError(
                "checkpoint holds pickled Python objects, which can run code when loaded, and was refused; "
                "pass --allow-pickle (model.allow_pickle=true for train.py) only if you trust its origin",
                path=path,
            ) from None
        try:
            checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        except Exception as exc:  # a damaged pickle raises anything
            raise UserError(f"not a readable checkpoint ({first_line(exc)})", path=path) from None
    except Exception as exc:  # torch raises RuntimeError/EOFError/KeyError/... for damaged archives
        raise UserError(f"not a readable checkpoint ({first_line(exc)})", path=path) from None
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
    if not isinstance(state, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise UserError("checkpoint field 'state_dict' must map parameter names to tensors", path=path)
    if not isinstance(checkpoint["hf_config"], dict):
        raise UserError("checkpoint field 'hf_config' must be a mapping", path=path)
    if not isinstance(checkpoint.get("learned_metric", {}), dict):
        raise UserError("checkpoint field 'learned_metric' must be a mapping", path=path)
    return checkpoint


def model_from_checkpoint(checkpoint: dict[str, Any], path: str | Path = "checkpoint"):
    """Rebuild the transformers model from a checkpoint's stored config and weights (no hub access, no custom code)."""
    from learned_metrics.safety import classifier_from_config_dict

    checkpoint = check_checkpoint(checkpoint, path)
    model = classifier_from_config_dict(checkpoint["hf_config"], path)
    prefix = "model."
    state = {k[len(prefix) :]: v for k, v in checkpoint["state_dict"].items() if k.startswith(prefix)}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise UserError(f"checkpoint weights do not match its config ({first_line(exc)})", path=path) from None
    return model.eval()


def export_checkpoint(ckpt_path: str | Path, out_dir: str | Path, allow_pickle: bool = False,
                      overwrite: bool = False, tokenizer: str | Path | None = None) -> Path:
    """Export any learned-metrics Lightning checkpoint to a transformers folder."""
    check_outputs([folder_output(out_dir, EXPORT_KIND)], inputs=[ckpt_path, tokenizer], overwrite=overwrite)
    checkpoint = load_checkpoint(ckpt_path, allow_pickle)
    model = model_from_checkpoint(checkpoint, ckpt_path)
    source = checkpoint_tokenizer(checkpoint, ckpt_path, tokenizer)  # bad names refused before anything is written
    return write_export(model, source, checkpoint.get("learned_metric", {}), out_dir, str(ckpt_path),
                        overwrite=overwrite)
