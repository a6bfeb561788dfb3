"""The metric card, ``learned_metric.json``: how to use an export the way it was trained. Training builds it
(:func:`training_card`), the export completes it (:func:`complete_card`), the scorer reads it (:func:`read_card`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from learned_metrics import __version__
from learned_metrics.errors import UserError
from learned_metrics.io import read_json_object
from learned_metrics.labels import METRIC_KINDS, SCORE_MODES
from learned_metrics.provenance import now

CARD_NAME = "learned_metric.json"
CARD_FORMAT_VERSION = 1


def training_card(*, kind: str, experiment: str, base_model: str, text_fields: list[str], max_length: int,
                  report: dict[str, Any] | None, training_config: dict[str, Any]) -> dict[str, Any]:
    """What a run knows about its metric when fitting starts; every checkpoint of the run carries it."""
    report = report or {}
    pair = len(text_fields) == 2
    preprocessing = {"splitter": None, "joiner": None, **report.get("preprocessing", {}), "max_length": max_length,
                     "text_fields": list(text_fields), "truncation": "premise_only" if pair else "end"}
    return {"kind": kind, "experiment": experiment, "base_model": base_model,
            "label_names": list(METRIC_KINDS[kind]), "preprocessing": preprocessing,
            "scoring": {"default_mode": "e-c"} if kind == "faithfulness" else {"score": "P(coherent)"},
            "augmentation": report.get("augmentation"), "data_report": report or None,
            "training_config": training_config}


def complete_card(card: dict[str, Any], id2label: dict[int, str], source_checkpoint: str | None,
                  results: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The exported card: the training card plus the model's labels, results (validation, test) and provenance."""
    full = {"format_version": CARD_FORMAT_VERSION, **card, **(results or {}),
            "id2label": {str(k): v for k, v in id2label.items()}, "source_checkpoint": source_checkpoint,
            "learned_metrics_version": __version__, "exported_at": now()}
    return validate_card(full, CARD_NAME)


_TYPE_NAMES = {str: "text", int: "an integer", dict: "an object", list: "a list"}


def _optional(mapping: dict, key: str, kind: type, path: object, prefix: str = "",
              choices: tuple[str, ...] | None = None) -> Any:
    """``mapping[key]`` when it is absent/null or of type ``kind`` (bools are not integers here) and one of
    ``choices`` when given, else one line."""
    value = mapping.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise UserError(f"card field '{prefix}{key}' must be {_TYPE_NAMES[kind]}, got {value!r}", path=path)
    if value is not None and choices is not None and value not in choices:
        raise UserError(f"card field '{prefix}{key}' must be one of {', '.join(choices)}, got {value!r}", path=path)
    return value


def validate_card(card: Any, path: object) -> dict[str, Any]:
    """A card whose fields have the types and values the scorer uses (one line for the first that does not)."""
    from learned_metrics.text.sentences import SPLITTERS

    if not isinstance(card, dict):
        raise UserError(f"the card must be a JSON object, got {type(card).__name__}", path=path)
    _optional(card, "kind", str, path, choices=tuple(METRIC_KINDS))
    preprocessing = _optional(card, "preprocessing", dict, path) or {}
    max_length = _optional(preprocessing, "max_length", int, path, "preprocessing.")
    if max_length is not None and max_length < 1:
        raise UserError(f"card field 'preprocessing.max_length' must be >= 1, got {max_length}", path=path)
    _optional(preprocessing, "splitter", str, path, "preprocessing.", SPLITTERS)
    _optional(preprocessing, "joiner", str, path, "preprocessing.")
    fields = _optional(preprocessing, "text_fields", list, path, "preprocessing.")
    if fields is not None and not all(isinstance(f, str) for f in fields):
        raise UserError("card field 'preprocessing.text_fields' must be a list of strings", path=path)
    scoring = _optional(card, "scoring", dict, path) or {}
    _optional(scoring, "default_mode", str, path, "scoring.", SCORE_MODES)
    _optional(card, "id2label", dict, path)
    return card


def read_card(model_dir: str | Path) -> dict[str, Any] | None:
    """The checked ``learned_metric.json`` of an export, or None for a plain transformers folder."""
    path = Path(model_dir) / CARD_NAME
    card = read_json_object(path)
    return None if card is None else validate_card(card, path)
