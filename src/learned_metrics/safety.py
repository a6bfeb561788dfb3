"""The one place that loads transformers configs, tokenizers and models: no code from a model ever runs.

Every rule is checked before transformers reads anything, so no ``[y/N]`` prompt can appear and every refusal is one
:class:`~learned_metrics.errors.UserError` line (docs/safety.md "Models and checkpoints")."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import read_json_object
from learned_metrics.validate import library_errors

PICKLE_WEIGHT_PATTERNS = ("pytorch_model*.bin", "*.pt", "*.pth")
# Any of these makes a folder's tokenizer loadable (fast tokenizer, BPE/WordPiece vocabularies, sentencepiece).
TOKENIZER_FILE_PATTERNS = ("tokenizer.json", "vocab.json", "vocab.txt", "merges.txt", "*.model", "*.tiktoken",
                           "vocab.bpe")
REMOTE_CODE_FILES = ("config.json", "tokenizer_config.json", "preprocessor_config.json")
NO_REMOTE_CODE = {"trust_remote_code": False}


def looks_local(name_or_path: str | os.PathLike) -> bool:
    """Meant as a local path, never a Hub id: a PathLike, ``./x``, ``/x``, ``~/x``, ``a/b/c``, ``a\\b``, or ``a/b``
    beside a folder ``a``; ``name`` and ``org/name`` stay Hub ids (a missing local path is never retried online)."""
    name = os.fspath(name_or_path)
    parent = os.path.dirname(name)
    return (isinstance(name_or_path, os.PathLike) or name.startswith((".", "/", "~")) or name.count("/") > 1
            or "\\" in name or bool(parent) and os.path.isdir(parent))


def check_source(name_or_path: str | os.PathLike, what: str = "model") -> str | os.PathLike:
    """Before any loading: a local-looking source must be an existing folder; a Hub id passes unchanged. Returns
    what to hand to transformers: the folder with ``~`` expanded (else taken for a Hub id), or the Hub id."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path if isinstance(name_or_path, os.PathLike) else str(path)
    if path.exists():
        raise UserError(f"expected a {what} folder (config.json, weights, tokenizer), got a file", path=name_or_path)
    if looks_local(name_or_path):
        raise UserError(f"{what} folder not found (a local path, so not looked up on the Hugging Face Hub)",
                        path=name_or_path)
    return name_or_path


def check_weights_are_safe(name_or_path: str | os.PathLike, allow_pickle: bool = False,
                           flag: str = "--allow-pickle") -> None:
    """Refuse a local folder whose weights exist only as pickles, unless ``allow_pickle`` (Hub ids: use_safetensors)."""
    model_dir = Path(name_or_path).expanduser()
    pickled = not allow_pickle and any(any(model_dir.glob(pattern)) for pattern in PICKLE_WEIGHT_PATTERNS)
    if pickled and not any(model_dir.glob("*.safetensors")):
        raise UserError("model weights exist only as a pickle (pytorch_model.bin), which can run arbitrary code when "
                        f"loaded; convert them to safetensors, or pass {flag} if you trust their origin",
                        path=model_dir)


def check_config_dict(config: Any, where: object) -> dict[str, Any]:
    """A config (``config.json`` or a checkpoint's ``hf_config``) that transformers builds without custom code."""
    from transformers import CONFIG_MAPPING

    if not isinstance(config, dict):
        raise UserError(f"model config is a {type(config).__name__}, expected a JSON object", path=where)
    if "auto_map" in config:
        raise UserError("the model asks to run its own Python code (auto_map); learned-metrics never executes code "
                        "shipped with a model. Use a model whose architecture transformers provides", path=where)
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise UserError("model config has no model_type", path=where)
    if model_type not in CONFIG_MAPPING:
        raise UserError(f"unknown model_type {model_type!r}: not an architecture of the installed transformers "
                        "(custom code is never run)", path=where)
    return config


@dataclass(frozen=True)
class ModelFolder:
    """A model source checked once (:func:`check_model_folder`): the loaders take it without a second look."""

    source: str | os.PathLike  # what transformers loads: the folder (``~`` expanded) or a Hub id
    given: str | os.PathLike  # as the caller named it: the path error messages show
    tokenizer: bool  # its tokenizer files were required
    config: bool  # its config.json was required


def check_model_folder(model_dir: str | os.PathLike | ModelFolder, *, need_tokenizer: bool = True,
                       need_config: bool = True, what: str = "model") -> ModelFolder:
    """Refuse, before transformers reads it, a missing local folder, or one that would run code or has no tokenizer
    (``need_config=False``: a run's ``tokenizer/``); a Hub id passes. One already checked for as much is returned."""
    if isinstance(model_dir, ModelFolder):
        if (model_dir.tokenizer or not need_tokenizer) and (model_dir.config or not need_config):
            return model_dir
        model_dir = model_dir.given
    folder = ModelFolder(check_source(model_dir, what), model_dir, need_tokenizer, need_config)
    model_dir = Path(model_dir).expanduser()
    if not model_dir.is_dir():
        return folder
    config = read_json_object(model_dir / "config.json")
    if config is None and need_config:
        raise UserError("not a transformers model folder (no config.json)", path=model_dir)
    if config is not None:
        check_config_dict(config, model_dir / "config.json")
    for name in REMOTE_CODE_FILES[1:]:
        if "auto_map" in (read_json_object(model_dir / name) or {}):
            raise UserError("asks to run its own Python code (auto_map); learned-metrics never executes code "
                            "shipped with a model", path=model_dir / name)
    if need_tokenizer and not any(any(model_dir.glob(p)) for p in TOKENIZER_FILE_PATTERNS):
        raise UserError("no tokenizer files (tokenizer.json, vocab.json, vocab.txt, *.model ...); without them "
                        "transformers would invent a fallback tokenizer and every score would be meaningless",
                        path=model_dir)
    return folder


def load_config(name_or_path: str | os.PathLike | ModelFolder, **kwargs: Any):
    from transformers import AutoConfig

    folder = check_model_folder(name_or_path, need_tokenizer=False)
    with library_errors("cannot load the model config", path=folder.given,
                        kinds=(OSError, ValueError, KeyError, TypeError)):
        return AutoConfig.from_pretrained(folder.source, **kwargs, **NO_REMOTE_CODE)


def load_tokenizer(name_or_path: str | os.PathLike | ModelFolder, **kwargs: Any):
    from transformers import AutoTokenizer

    folder = check_model_folder(name_or_path, need_config=False, what="tokenizer")
    # OSError, ValueError ...; tokenizers raises plain Exceptions for a corrupt tokenizer.json
    with library_errors("cannot load the tokenizer", path=folder.given):
        tokenizer = AutoTokenizer.from_pretrained(folder.source, **kwargs, **NO_REMOTE_CODE)
        if hasattr(tokenizer, "deprecation_warnings"):
            # "Token indices sequence length is longer than the specified maximum ...": we count whole texts on
            # purpose and truncate ourselves (text.encoding); marked as shown so transformers never prints it.
            tokenizer.deprecation_warnings["sequence-length-is-longer-than-the-specified-maximum"] = True
        return tokenizer


@contextlib.contextmanager
def quiet_transformers(errors_only: bool = False) -> Iterator[None]:
    """Quiets transformers until the block ends: its progress bars (we report our own), and with ``errors_only`` its
    log below ERROR (we report what a user must act on in one line). Python warnings stay: ours matter."""
    from transformers.utils import logging as hf_logging

    was_enabled, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    if errors_only:
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if was_enabled:
            with warnings.catch_warnings():  # huggingface_hub warns when HF_HUB_DISABLE_PROGRESS_BARS=1 keeps
                warnings.simplefilter("ignore")  # them off; the user asked for that, so it is no news
                hf_logging.enable_progress_bar()


def load_classifier(name_or_path: str | os.PathLike | ModelFolder, *, allow_pickle: bool = False,
                    flag: str = "--allow-pickle", **kwargs: Any):
    """``AutoModelForSequenceClassification.from_pretrained`` under every rule above."""
    from transformers import AutoModelForSequenceClassification

    folder = check_model_folder(name_or_path, need_tokenizer=False)
    check_weights_are_safe(folder.given, allow_pickle, flag)
    with library_errors("cannot load the model weights", path=folder.given), quiet_transformers():
        return AutoModelForSequenceClassification.from_pretrained(
            folder.source, **kwargs, **({} if allow_pickle else {"use_safetensors": True}), **NO_REMOTE_CODE)


def classifier_from_config_dict(config: dict[str, Any], where: object):
    """A sequence classifier built from a stored config dict (a checkpoint's ``hf_config``), no hub access."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = dict(check_config_dict(config, where))
    model_type = config.pop("model_type")
    with library_errors("cannot build the model from its stored config", path=where,
                        kinds=(ValueError, TypeError, KeyError, AttributeError)):
        built = AutoConfig.for_model(model_type, **config)
        return AutoModelForSequenceClassification.from_config(built, **NO_REMOTE_CODE)
