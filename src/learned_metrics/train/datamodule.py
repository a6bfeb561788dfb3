"""One LightningDataModule for text (coherence) or text pairs (NLI) from a saved ``DatasetDict``: label *names* map
to the model's class ids (never by position), tokenized once (cached; truncated rows counted in a warning), batched
by similar length with dynamic padding."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import lightning as L
import torch
from omegaconf import OmegaConf
from torch.utils.data import DataLoader

from learned_metrics import compat
from learned_metrics.errors import UserError
from learned_metrics.io import dump_json, files_stamp, read_json_object
from learned_metrics.labels import canonical_label, class_names_of
from learned_metrics.outputs import read_marker, write_marker
from learned_metrics.text.encoding import check_max_length, tokenize
from learned_metrics.train.sampler import LengthGroupedBatchSampler
from learned_metrics.validate import library_errors

log = logging.getLogger(__name__)
BUILT_WITH = "data_builder.json"  # beside a set data.builder built on first use: the request it was built for

TOKEN_COLUMNS = ("input_ids", "attention_mask", "token_type_ids")
REQUIRED_SPLITS = ("train", "validation")  # every run fits and validates; test only with test=true
_ENCODING_VERSION = 1  # part of the tokenized splits' cache key: raise it when encode() below changes


def _local_inputs(value: Any) -> list[Path]:
    """The local files and folders a builder's keywords name (a source ``[NAME=][FORM:]PATH`` as ``prep`` takes it,
    in a string, list or mapping), for the stamp of what a set was built from; Hub names are no local path."""
    if isinstance(value, dict):
        return [path for item in value.values() for path in _local_inputs(item)]
    if isinstance(value, (list, tuple)):
        return [path for item in value for path in _local_inputs(item)]
    if not isinstance(value, str) or not value:
        return []
    candidates = [value]
    for text in list(candidates):
        name, equals, rest = text.partition("=")
        if equals and "/" not in name:
            candidates.append(rest)
    for text in list(candidates):
        form, colon, rest = text.partition(":")
        if colon and len(form) > 1 and form.isalpha():
            candidates.append(rest)
    return [Path(text).expanduser() for text in dict.fromkeys(candidates) if Path(text).expanduser().exists()][:1]

class ResumableDataLoader(DataLoader):
    """A train DataLoader that reports its position inside the epoch (Lightning's ``_Stateful``). Lightning issue
    #20550 never restores it when ``configure_optimizers`` reads ``estimated_stepping_batches`` (our warm-up does):
    the datamodule's ``load_state_dict`` restores the position, and this one applies the same if a fixed one calls."""

    def __init__(self, *args: Any, position: Callable[[], dict[str, int]], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._position = position

    def state_dict(self) -> dict[str, int]:
        return self._position()

    def load_state_dict(self, state_dict: dict[str, int]) -> None:
        self.batch_sampler.resume(state_dict["epoch"], state_dict["batches_done"])


class TextClassificationDataModule(L.LightningDataModule):
    """Tokenized, length-grouped batches from a saved ``DatasetDict``."""

    def __init__(self, path: str, tokenizer: str, text_fields: Sequence[str] = ("text",), label_field: str = "label",
                 batch_size: int = 16, eval_batch_size: int | None = None, max_length: int = 512, num_workers: int = 0,
                 pad_to_multiple_of: int | None = None, length_grouped: bool = True, seed: int = 42,
                 builder: Callable[..., Any] | None = None, max_train_rows: int | None = None,
                 max_eval_rows: int | None = None):
        super().__init__()
        if len(text_fields) not in (1, 2):
            raise UserError(f"data.text_fields must name one field or a pair, got {list(text_fields)}")
        self.path = Path(path)
        self.tokenizer_name = tokenizer
        self.text_fields = list(text_fields)
        self.label_field = label_field
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size or batch_size
        self.max_length = max_length
        self.num_workers = num_workers
        self.pad_to_multiple_of = pad_to_multiple_of
        self.length_grouped = length_grouped
        self.seed = seed
        self.builder = builder
        self.max_train_rows = max_train_rows
        self.max_eval_rows = max_eval_rows
        self.label2id: dict[str, int] | None = None
        self.splits: dict[str, Any] = {}
        self.truncated: dict[str, int] = {}
        self.needed_splits: tuple[str, ...] | None = None  # set by check_data; else train, validation (+ test if any)
        self._resume_position: dict[str, int] | None = None

    def set_label_ids(self, label2id: dict[str, int]) -> None:
        """Canonical label name -> model class id, from the model's own ``id2label``."""
        self.label2id = dict(label2id)

    @cached_property
    def tokenizer(self):
        from learned_metrics.safety import load_tokenizer

        return load_tokenizer(self.tokenizer_name)

    def prepare_data(self) -> None:
        """Build the set on first use, once under a file lock for parallel runs (no builder: :meth:`setup` refuses)."""
        self._check_built_with_builder()
        if self.path.exists() or self.builder is None:
            return
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            if not self.path.exists():  # another process may have built it while this one waited
                log.info("building data set into %s", self.path)
                try:
                    self.builder(output=str(self.path))
                except UserError as error:  # its words are prep's: name the config keys train.py takes
                    raise UserError(self._as_config_keys(error.detail), path=error.path, row=error.row,
                                    field=error.field) from None
                (self.path / BUILT_WITH).write_text(dump_json(self._builder_request()) + "\n", encoding="utf-8")
                marker = read_marker(self.path)
                if marker is not None:  # the request file is ours too: a later --overwrite may replace it
                    write_marker(self.path, marker["kind"])

    def check_data(self, test: bool = False) -> None:
        """Every split the run needs (``test`` with ``test=true``) exists, has rows and the columns the task reads:
        before the trainer is built (a set still to be built: in :meth:`setup`), so nothing is written first."""
        self.needed_splits = (*REQUIRED_SPLITS, "test") if test else REQUIRED_SPLITS
        self._check_built_with_builder()
        if self.path.exists() or self.builder is None:
            self._checked_splits()

    def _builder_request(self) -> dict[str, Any]:
        """What ``data.builder`` asks for, as JSON: its function, its source and every setting that changes the data
        (resolved through the builder's settings class; ``overwrite`` and the like left out)."""
        keywords = {k: OmegaConf.to_container(v, resolve=True) if OmegaConf.is_config(v) else v
                    for k, v in (getattr(self.builder, "keywords", None) or {}).items()}
        function = getattr(self.builder, "func", self.builder)
        cls = getattr(function, "settings_class", None)
        if cls is not None:  # settings resolved (defaults filled in), those that cannot change the data left out
            names = {spec.name for spec in dataclasses.fields(cls)}
            settings = cls.from_keywords(**{k: v for k, v in keywords.items() if k in names}).affecting()
            keywords = {**{k: v for k, v in keywords.items() if k not in names}, **settings}
        name = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"
        inputs = {str(path): files_stamp(path, recursive=True) for path in _local_inputs(keywords)}
        return json.loads(dump_json({"builder": name, "keywords": keywords, "inputs": inputs}, indent=None))

    def _as_config_keys(self, message: str) -> str:
        """A builder's message with its flags (``--label-order``) as the ``data.builder.*`` keys that set them here."""
        cls = getattr(getattr(self.builder, "func", self.builder), "settings_class", None)
        names = {spec.name for spec in dataclasses.fields(cls)} if cls is not None else set()
        return re.sub(r"--([a-z][a-z0-9-]*)", lambda match: f"data.builder.{match[1].replace('-', '_')}"
                      if match[1].replace("-", "_") in names else match[0], message)

    def _check_built_with_builder(self) -> None:
        """A set that ``data.builder`` built on first use is reused only for the same request: another source or
        setting is one line, never a run on the old data under the new config. A set prepared otherwise (data_prep,
        ``learned-metrics prep``) and named by ``data.path`` is taken as it is."""
        recorded = None if self.builder is None else read_json_object(self.path / BUILT_WITH)
        if recorded is None:
            return
        now = self._builder_request()
        then_keywords, now_keywords = recorded.get("keywords") or {}, now["keywords"]
        differ = [f"{key} {then_keywords.get(key)!r} then, {now_keywords.get(key)!r} now"
                  for key in sorted(set(then_keywords) | set(now_keywords))
                  if then_keywords.get(key) != now_keywords.get(key)]
        if recorded.get("builder") != now["builder"]:
            differ.insert(0, f"builder {recorded.get('builder')} then, {now['builder']} now")
        changed = [path for path, stamp in (recorded.get("inputs") or {}).items() if now["inputs"].get(path) != stamp]
        if changed and not differ:
            raise UserError(f"this data set was built from {changed[0]}, which has changed since (its files, sizes "
                            "or times): delete this folder to build it again from the source as it is now, or give "
                            "data.path a new folder", path=self.path)
        if differ:
            raise UserError(f"this data set was built by another data.builder ({'; '.join(differ[:3])}): give "
                            "data.path a new folder to build it there, or delete this one to build it again",
                            path=self.path)

    def _checked_splits(self) -> dict[str, Any]:
        """The splits the run needs, each loaded on its own and checked: ``datasets`` cannot load a ``DatasetDict``
        holding an empty split (saved without data files: an IndexError), recognised here from its ``state.json``."""
        import datasets

        if not self.path.exists():
            raise UserError("data set not found; build it with data_prep/*.py and pass data.path=DIR", path=self.path)
        listing = read_json_object(self.path / "dataset_dict.json")
        if listing is None:
            raise UserError("not a saved DatasetDict (no dataset_dict.json); build it with data_prep/*.py",
                            path=self.path)
        available = listing.get("splits")
        if not isinstance(available, list):
            raise UserError("dataset_dict.json has no list of splits", path=self.path)
        needed = self.needed_splits or ((*REQUIRED_SPLITS, "test") if "test" in available else REQUIRED_SPLITS)
        columns = [*self.text_fields, self.label_field]
        loaded = {}
        for split in needed:
            if split not in available:
                why = " (the run tests: test=true)" if split == "test" else ""
                raise UserError(f"split '{split}' missing{why}; the set has {', '.join(map(str, available)) or 'none'}",
                                path=self.path)
            empty = (read_json_object(self.path / split / "state.json") or {}).get("_data_files") == []
            with library_errors(f"split '{split}' is not readable", path=self.path):  # a damaged folder: any type
                ds = None if empty else datasets.load_from_disk(str(self.path / split))
            if ds is None or len(ds) == 0:
                raise UserError(f"split '{split}' has no rows", path=self.path)
            missing = [c for c in columns if c not in ds.column_names]
            if missing:
                raise UserError(f"split '{split}' lacks column(s) {missing} (has {ds.column_names})", path=self.path)
            loaded[split] = ds
        return loaded

    def setup(self, stage: str | None = None) -> None:
        """Tokenize the splits the run needs; labels map onto the class ids of the model being trained."""
        if self.splits:
            return
        if self.label2id is None and self.trainer is not None:
            self.set_label_ids(self.trainer.lightning_module.label_ids)
        raw = self._checked_splits()  # again: a set built on first use (prepare_data) is checked here
        check_max_length(self.max_length, self.tokenizer, pair=len(self.text_fields) == 2, what="data.max_length")
        for name, ds in raw.items():
            limit = self.max_train_rows if name == "train" else self.max_eval_rows
            if limit is not None and len(ds) > limit:
                ds = ds.shuffle(seed=self.seed).select(range(limit))
            self.splits[name] = self._encode(name, ds)

    def _encode(self, split: str, ds):
        if self.label2id is None:
            raise RuntimeError("no label ids: fit with a LightningModule that has label_ids, or call set_label_ids()")
        class_names = class_names_of(ds, self.label_field)
        fields, label2id = self.text_fields, self.label2id

        def encode(batch: dict[str, list]) -> dict[str, list]:
            second = batch[fields[1]] if len(fields) == 2 else None
            encoded = tokenize(self.tokenizer, batch[fields[0]], second, self.max_length)
            labels = []
            for value in batch[self.label_field]:
                name = class_names[value] if class_names is not None else value
                if (canon := canonical_label(name)) not in label2id:
                    raise UserError(f"label '{name}' is not one of the model's labels {sorted(label2id)}",
                                    path=self.path, field=self.label_field)
                labels.append(label2id[canon])
            return {**encoded.columns, "labels": labels, "length": [len(ids) for ids in encoded.columns["input_ids"]],
                    "truncated": encoded.truncated, "hypothesis_truncated": encoded.second_truncated}

        encoded = ds.map(encode, batched=True, remove_columns=ds.column_names, desc=f"tokenizing {split}",
                         new_fingerprint=self._encoding_fingerprint(ds, class_names))
        self.truncated[split] = n_truncated = int(sum(encoded["truncated"]))
        if n_truncated:
            how = "premise only" if len(fields) == 2 else "end of text"
            both = int(sum(encoded["hypothesis_truncated"]))
            if both:
                how += f"; in {both} the hypothesis alone was too long and was cut as well"
            log.warning("%s: %d of %d rows longer than max_length=%d were truncated (%s)", split, n_truncated,
                        len(encoded), self.max_length, how)
        columns = [c for c in (*TOKEN_COLUMNS, "labels") if c in encoded.column_names]
        encoded.set_format("torch", columns=columns, output_all_columns=False)
        return encoded

    def _encoding_fingerprint(self, ds, class_names: list[str] | None) -> str:
        """The tokenized split's cache key, from what decides its content (rows, serialized tokenizer, fields, length,
        label ids); else ``datasets`` dill-hashes the closure and tokenizer: seconds at every start."""
        import hashlib

        from datasets.fingerprint import Hasher

        tokenizer = self.tokenizer
        backend = getattr(tokenizer, "backend_tokenizer", None)
        identity = (hashlib.sha256(backend.to_str().encode()).hexdigest() if backend is not None
                    else Hasher.hash(tokenizer))  # a slow tokenizer: datasets' own hash of it
        special = sorted((str(k), str(v)) for k, v in tokenizer.special_tokens_map.items())
        return Hasher.hash((_ENCODING_VERSION, ds._fingerprint, type(tokenizer).__name__, identity, special,
                            tokenizer.padding_side, tokenizer.truncation_side, self.text_fields, self.label_field,
                            self.max_length, sorted(self.label2id.items()), class_names))

    def _train_position(self) -> dict[str, int]:
        """Epoch and batches whose training step finished in it (Lightning's own count)."""
        return {"epoch": int(self.trainer.current_epoch), "batches_done": compat.batches_done_this_epoch(self.trainer)}

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        from transformers import DataCollatorWithPadding

        if split not in self.splits:
            raise UserError(f"split '{split}' missing", path=self.path)
        ds = self.splits[split]
        lengths = ds.with_format(None)["length"] if self.length_grouped else [0] * len(ds)
        sampler = LengthGroupedBatchSampler(lengths, self.batch_size if shuffle else self.eval_batch_size,
                                            shuffle=shuffle, seed=self.seed)
        collate = DataCollatorWithPadding(self.tokenizer, pad_to_multiple_of=self.pad_to_multiple_of)
        # own generator: creating iterators must not draw from the global RNG (dropout), or a
        # resumed run would see different dropout masks than an uninterrupted one
        kwargs: dict[str, Any] = {"batch_sampler": sampler, "collate_fn": collate, "num_workers": self.num_workers,
                                  "persistent_workers": self.num_workers > 0,
                                  "generator": torch.Generator().manual_seed(self.seed)}
        if shuffle and self.trainer is not None:
            if self._resume_position is not None:
                sampler.resume(self._resume_position["epoch"], self._resume_position["batches_done"])
            return ResumableDataLoader(ds, position=self._train_position, **kwargs)
        return DataLoader(ds, **kwargs)

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("validation", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", shuffle=False)

    def state_dict(self) -> dict[str, Any]:
        """Saved in every checkpoint: the train position lets a killed run resume mid-epoch."""
        state: dict[str, Any] = {"label2id": self.label2id, "truncated": self.truncated}
        if self.trainer is not None and self.trainer.training:
            state["train_position"] = self._train_position()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._resume_position = state_dict.get("train_position")
