"""Finding and loading a scoring model (an export, a plain transformers folder, or a Hub id): everything a user can
get wrong here is a one-line :class:`UserError`, never scores from a randomly initialised head."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from learned_metrics import safety
from learned_metrics.card import CARD_NAME
from learned_metrics.errors import UserError, first_line
from learned_metrics.labels import (
    COHERENCE_LABELS,
    METRIC_KINDS,
    NOT_ENTAILMENT_NAMES,
    ordered_id2label,
    resolve_label_ids,
)

KINDS = tuple(METRIC_KINDS)
DEFAULT_MAX_LENGTH = 512
# Hub files a scorer needs: config, weights, tokenizer and the learned-metrics card.
_HUB_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.tiktoken", "*.vocab", "*.merges"]
# Architectures whose position ids start after the padding index (``max_position_embeddings - 2`` usable).
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "roberta-prelayernorm",
                     "data2vec-text", "xmod", "ibert"}


def resolve_model_dir(name_or_path: str | os.PathLike) -> Path:
    """A local folder as is (:func:`~learned_metrics.safety.check_source` decides what is local); a Hub id downloaded
    (config, safetensors weights, tokenizer, card) to the HF cache."""
    safety.check_source(name_or_path, "model")
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(str(name_or_path), allow_patterns=_HUB_PATTERNS))
        if not any(folder.glob("*.safetensors")):
            folder = Path(snapshot_download(str(name_or_path), allow_patterns=[*_HUB_PATTERNS, "*.bin"]))
    except Exception as exc:  # offline mode, unknown or gated repo, no network: one whole line that says what to do
        raise UserError(hub_failure(str(name_or_path), exc)) from None
    return folder


LOCAL_FOLDER_HINT = ("give --model a local model folder instead (an export of `learned-metrics export` or "
                     "`python train.py`, or a Hub checkpoint downloaded on a machine with network)")


def hub_failure(repo_id: str, exc: BaseException) -> str:
    """Why a Hub id could not be fetched, in one complete sentence that ends with what to do (the library's own
    message is cut to its first line, which can stop mid-sentence, so it only follows in brackets)."""
    from huggingface_hub import errors

    offline = any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
                  for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if offline or isinstance(exc, (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError)):
        why = ("is not a local folder nor in the Hugging Face cache, and Hub downloads are off (HF_HUB_OFFLINE or "
               "TRANSFORMERS_OFFLINE is set)")
        return f"'{repo_id}' {why}: {LOCAL_FOLDER_HINT}, or unset both variables to download it"
    if isinstance(exc, errors.GatedRepoError):
        return (f"'{repo_id}' is a gated model on the Hugging Face Hub: accept its terms on its page and log in "
                f"(`hf auth login` or HF_TOKEN), or {LOCAL_FOLDER_HINT}")
    if isinstance(exc, (errors.RepositoryNotFoundError, errors.RevisionNotFoundError)):
        return (f"'{repo_id}' is neither a local folder nor a model on the Hugging Face Hub (check the name; a "
                f"private model needs `hf auth login` or HF_TOKEN); {LOCAL_FOLDER_HINT}")
    return (f"'{repo_id}' is not a local folder and could not be downloaded from the Hugging Face Hub "
            f"({type(exc).__name__}: is the network reachable?): {LOCAL_FOLDER_HINT} [{first_line(exc, 120)}]")


def decide_kind(card: dict[str, Any] | None, requested: str | None, model_dir: Path) -> str:
    """The card's kind; a plain folder is a faithfulness (NLI) model unless the caller asks for coherence."""
    if requested is not None and requested not in KINDS:
        raise UserError(f"unknown metric kind '{requested}', expected one of {', '.join(KINDS)}")
    card_kind = (card or {}).get("kind")
    if card_kind is not None and card_kind not in KINDS:
        raise UserError(f"{CARD_NAME} has unknown kind '{card_kind}'", path=model_dir)
    if card_kind and requested and card_kind != requested:
        raise UserError(f"this is a {card_kind} model (per {CARD_NAME}); score it with `score {card_kind}`",
                        path=model_dir)
    return card_kind or requested or "faithfulness"


def require_classifier_architecture(config, model_dir: Path) -> None:
    """Refuse a bare encoder (saved with ``AutoModel``) before anything else complains about its labels."""
    architectures = config.architectures or []
    if architectures and not any("ForSequenceClassification" in name for name in architectures):
        raise UserError(f"not a sequence classifier (architectures {architectures}): a bare encoder has no trained "
                        "classification head, and scoring with a random one would be meaningless. Point --model at a "
                        "fine-tuned classifier or an export", path=model_dir)


def resolve_labels(config, kind: str, label_order: Sequence[str] | None = None) -> dict[str, int]:
    """Canonical label -> class id, by name. NLI needs entailment and contradiction; neutral is kept if present.
    ``label_order`` names the classes of a head with generic labels (``LABEL_0``...), in index order."""
    id2label = config.id2label if label_order is None else ordered_id2label(config.id2label, label_order)
    names = {str(name).strip().lower().replace("-", "_") for name in id2label.values()}
    if kind == "faithfulness" and names & NOT_ENTAILMENT_NAMES:
        raise UserError(f"the model's classes {dict(id2label)} are entailment against not entailment: "
                        "not_entailment is not contradiction (it holds neutral too), so the e-c score cannot be "
                        "computed from them and no class is renamed; score with a three-class NLI model (entailment, "
                        "neutral, contradiction)")
    if kind == "coherence":
        return resolve_label_ids(id2label, COHERENCE_LABELS)
    try:  # neutral is kept when the model has it
        ids = resolve_label_ids(id2label, ("entailment", "neutral", "contradiction"))
    except UserError:
        ids = resolve_label_ids(id2label, ("entailment", "contradiction"))
    if len(id2label) != len(ids):
        raise UserError(f"the model has {len(id2label)} classes {dict(id2label)}; only {sorted(ids)} could be named, "
                        "so its probabilities cannot be reported by label")
    return ids


def load_classifier(folder: safety.ModelFolder, config, dtype: torch.dtype, allow_pickle: bool = False):
    """``AutoModelForSequenceClassification`` with every weight present; refuses a missing (random) head. ``folder``
    was checked once by the caller; a pickle-only folder is refused unless ``allow_pickle``."""
    model, info = safety.load_classifier(folder, allow_pickle=allow_pickle, config=config, dtype=dtype,
                                         output_loading_info=True)
    missing = sorted(info.get("missing_keys", []))
    if missing:
        architectures = config.architectures or ["unknown"]
        shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise UserError(f"no trained sequence-classification head (architectures {architectures}; weights missing: "
                        f"{shown}); scoring would use a randomly initialised head. Point --model at a fine-tuned "
                        "classifier or an export", path=folder.given)
    return model.eval()


def model_input_limit(config, tokenizer) -> int:
    """The longest input the model accepts: tokenizer limit and position embeddings, whichever is smaller."""
    limits = []
    if tokenizer.model_max_length and tokenizer.model_max_length < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(config, "max_position_embeddings", None)
    if positions and getattr(config, "position_biased_input", True) is not False:
        offset = (config.pad_token_id or 0) + 1 if config.model_type in _OFFSET_POSITIONS else 0
        limits.append(int(positions) - offset)
    return min(limits) if limits else DEFAULT_MAX_LENGTH


def preprocessing_of(card: dict[str, Any] | None) -> dict[str, Any]:
    return dict((card or {}).get("preprocessing") or {})
