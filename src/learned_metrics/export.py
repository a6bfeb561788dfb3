"""Checkpoint -> a folder that plain ``transformers`` loads, plus ``learned_metric.json``.

The export holds ``config.json`` (with ``id2label``), ``model.safetensors``,
the tokenizer files and the card: metric kind, label names, preprocessing
(sentence splitter, joiner, max length), default scoring mode, augmentation
settings, validation results and the resolved training config. Other tools
need nothing but ``AutoModelForSequenceClassification``/``AutoTokenizer``;
our scorer reads the card to reproduce the training preprocessing.

Everything read from a checkpoint or a card is checked before it is used: the
checkpoint loads with ``weights_only=True``, its stored config must name an
architecture transformers provides (no custom code), its tokenizer file names
must be plain names (``../x`` would write outside the export), and the card's
fields must have the types the scorer relies on.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import pickle
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from learned_metrics import __version__
from learned_metrics.errors import UserError, first_line
from learned_metrics.io import read_json_object
from learned_metrics.outputs import atomic_folder, check_outputs, folder_output
from learned_metrics.validate import plain_file_name

CARD_NAME = "learned_metric.json"
CARD_FORMAT_VERSION = 1
EXPORT_KIND = "export"
CARD_KINDS = ("coherence", "faithfulness")
CARD_MODES = ("e", "e-c")


def decode_tokenizer_files(files: Any, where: object) -> dict[str, bytes]:
    """The tokenizer files a checkpoint carries, each name a plain file name and each body valid base64."""
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
    tokenizer_files: Any,
    card: dict[str, Any],
    out_dir: str | Path,
    source_checkpoint: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write model (safetensors), tokenizer and card into ``out_dir`` atomically (:mod:`learned_metrics.outputs`)."""
    out_dir = Path(out_dir)
    files = decode_tokenizer_files(tokenizer_files, source_checkpoint or "tokenizer files")
    full_card = validate_card(build_card(card, model.config.id2label, source_checkpoint), CARD_NAME)
    with atomic_folder(out_dir, EXPORT_KIND, overwrite) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        (tmp / CARD_NAME).write_text(json.dumps(full_card, indent=2, ensure_ascii=False, default=str) + "\n",
                                     encoding="utf-8")
    return out_dir


def export_module(module, out_dir: str | Path, source_checkpoint: str | None = None) -> Path:
    """Export a live :class:`~learned_metrics.models.classifier.SequenceClassifier` into its own run folder.

    A run resumed in place replaces the export an earlier attempt of the same run wrote.
    """
    return write_export(module.model, module.tokenizer_files, module.card, out_dir, source_checkpoint, overwrite=True)


# --- reading checkpoints -----------------------------------------------------------------------


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
    missing = [key for key in ("hf_config", "tokenizer_files", "state_dict") if key not in checkpoint]
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
                      overwrite: bool = False) -> Path:
    """Export any learned-metrics Lightning checkpoint to a transformers folder."""
    check_outputs([folder_output(out_dir, EXPORT_KIND)], inputs=[ckpt_path], overwrite=overwrite)
    checkpoint = load_checkpoint(ckpt_path, allow_pickle)
    model = model_from_checkpoint(checkpoint, ckpt_path)
    decode_tokenizer_files(checkpoint["tokenizer_files"], ckpt_path)  # refuse bad names before writing anything
    return write_export(
        model, checkpoint["tokenizer_files"], checkpoint.get("learned_metric", {}), out_dir, str(ckpt_path),
        overwrite=overwrite,
    )


# --- reading cards -----------------------------------------------------------------------------


_TYPE_NAMES = {str: "text", int: "an integer", dict: "an object", list: "a list"}


def _optional(mapping: dict, key: str, kind: type, path: object, prefix: str = "") -> Any:
    """``mapping[key]`` when it is absent/null or of type ``kind`` (bools are not integers here), else one line."""
    value = mapping.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise UserError(f"card field '{prefix}{key}' must be {_TYPE_NAMES[kind]}, got {value!r}", path=path)
    return value


def validate_card(card: Any, path: object) -> dict[str, Any]:
    """A card whose fields have the types and values the scorer uses (one line for the first that does not)."""
    from learned_metrics.text.sentences import SPLITTERS

    if not isinstance(card, dict):
        raise UserError(f"the card must be a JSON object, got {type(card).__name__}", path=path)
    kind = _optional(card, "kind", str, path)
    if kind is not None and kind not in CARD_KINDS:
        raise UserError(f"card field 'kind' must be one of {', '.join(CARD_KINDS)}, got {kind!r}", path=path)
    preprocessing = _optional(card, "preprocessing", dict, path) or {}
    max_length = _optional(preprocessing, "max_length", int, path, "preprocessing.")
    if max_length is not None and max_length < 1:
        raise UserError(f"card field 'preprocessing.max_length' must be >= 1, got {max_length}", path=path)
    splitter = _optional(preprocessing, "splitter", str, path, "preprocessing.")
    if splitter is not None and splitter not in SPLITTERS:
        raise UserError(f"card field 'preprocessing.splitter' must be one of {', '.join(SPLITTERS)}, got {splitter!r}",
                        path=path)
    _optional(preprocessing, "joiner", str, path, "preprocessing.")
    fields = _optional(preprocessing, "text_fields", list, path, "preprocessing.")
    if fields is not None and not all(isinstance(f, str) for f in fields):
        raise UserError("card field 'preprocessing.text_fields' must be a list of strings", path=path)
    scoring = _optional(card, "scoring", dict, path) or {}
    mode = _optional(scoring, "default_mode", str, path, "scoring.")
    if mode is not None and mode not in CARD_MODES:
        raise UserError(f"card field 'scoring.default_mode' must be one of {', '.join(CARD_MODES)}, got {mode!r}",
                        path=path)
    _optional(card, "id2label", dict, path)
    return card


def read_card(model_dir: str | Path) -> dict[str, Any] | None:
    """The checked ``learned_metric.json`` of an export, or None for a plain transformers folder."""
    path = Path(model_dir) / CARD_NAME
    card = read_json_object(path)
    return None if card is None else validate_card(card, path)
