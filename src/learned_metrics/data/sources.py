"""The one source reader of ``prep nli``, ``prep shuffle-set`` and ``prep anli``: ``.jsonl``/``.csv``/``.parquet``
files or folders of them, ``save_to_disk`` folders (``disk:DIR``), Hugging Face datasets through the local cache
(``hf:NAME[:CONFIG]``); all name splits, stream rows into Arrow and refuse a layout that does not fit the same way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa

from learned_metrics.errors import UserError, first_line
from learned_metrics.io import data_files, iter_rows, plain_value
from learned_metrics.labels import class_names_of
from learned_metrics.validate import library_errors

SPLIT_WORDS = {"train": "train", "training": "train", "dev": "validation", "val": "validation",
               "valid": "validation", "validation": "validation", "test": "test"}
CHUNK = 10_000


def split_of_name(text: str, where: object) -> str | None:
    """``"multinli_dev_matched"`` -> ``"validation"``, ``"R1/train.jsonl"`` -> ``"train"``; None when no word of
    ``text`` names a split; refused when two do."""
    found = {SPLIT_WORDS[word] for word in re.split(r"[^a-z0-9]+", str(text).lower()) if word in SPLIT_WORDS}
    if len(found) > 1:
        raise UserError(f"the name {text!r} names splits {sorted(found)}; rename it or pass --split-field",
                        path=where)
    return found.pop() if found else None


@dataclasses.dataclass
class Part:
    """Rows of one file or Hub split: where they are, the split they name (or None), the columns when known
    (a Hub split's; a file's from its first row) and ClassLabel names of the field asked about."""

    where: str
    split: str | None
    rows: Iterator[tuple[int, dict[str, Any]]]
    columns: list[str] | None = None
    names: list[str] | None = None
    dataset: datasets.Dataset | None = None


def dataset_rows(ds: datasets.Dataset) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row_number, row)`` of a Dataset, read ``CHUNK`` rows at a time, values as plain Python."""
    rows = (dict(zip(batch, map(plain_value, values), strict=True))
            for batch in ds.iter(batch_size=CHUNK) for values in zip(*batch.values(), strict=True))
    yield from enumerate(rows, start=1)


def dataset_parts(loaded: Any, where: str, field: str | None = None) -> list[Part]:
    """One part per split of a DatasetDict (named ``WHERE:SPLIT``), or one unnamed part of a Dataset."""
    splits = {None: loaded} if isinstance(loaded, datasets.Dataset) else loaded
    return [Part(where if split is None else f"{where}:{split}", None if split is None else split_of_name(split, where),
                 dataset_rows(ds), ds.column_names, class_names_of(ds, field), ds) for split, ds in splits.items()]


def load_hub(location: str, instead: str = "save it with save_to_disk and pass disk:DIR, or export it to files") -> Any:
    """``NAME[:CONFIG]`` through ``datasets.load_dataset`` (the local cache when offline); a failure is one line
    ending with what to use ``instead``."""
    name, _, config = location.partition(":")
    try:
        return datasets.load_dataset(name, config or None)
    except Exception as exc:  # any hub/network/cache failure is something the user must fix
        raise UserError(f"cannot load the Hugging Face dataset {name!r} ({type(exc).__name__}: {first_line(exc)}); "
                        f"it must be in the local cache (HF_DATASETS_OFFLINE), or {instead}") from None


def location_parts(location: str, forms: str, field: str | None = None, name: str | None = None) -> list[Part]:
    """The parts of a source by its form (``hf:``, ``disk:``, a saved folder, a file or a folder of files); a
    location that is none of them is one line listing ``forms``."""
    if location.startswith("hf:"):
        return dataset_parts(load_hub(location[3:]), location, field)
    path = Path(location.removeprefix("disk:")).expanduser()
    if location.startswith("disk:") or any((path / name).is_file() for name in ("dataset_dict.json", "state.json")):
        with library_errors("not a datasets save_to_disk folder", path=path):  # datasets raises many types
            loaded = datasets.load_from_disk(str(path))
        return dataset_parts(loaded, str(path), field)
    if path.is_file():
        return [Part(str(path), split_of_name(path.name, path), iter_rows(path))]
    if path.is_dir():  # the data files under it, recursively, sorted, each named by its own path
        files = data_files(path)
        if not files:
            raise UserError("no .jsonl, .csv or .parquet files in this folder", path=path)
        return [Part(str(p), split_of_name(str(p.relative_to(path)), p), iter_rows(p)) for p in files]
    raise UserError(f"{f'source {name!r}: ' if name else ''}{location!r} is not a file or folder here; "
                    f"expected {forms}")


def check_named_splits(parts: list[Part], what: str, fix: str) -> None:
    """All parts name a split or none does: a file naming none beside named ones is one line with ``fix``."""
    unnamed = [p for p in parts if p.split is None]
    if unnamed and len(unnamed) < len(parts):
        raise UserError(f"names no split (train, dev/validation, test) while other files of {what} do; {fix}",
                        path=unnamed[0].where)


def missing_fields(part: Part, fields: Iterable[tuple[str, str]]) -> None:
    """``fields``: (field, option) pairs; the first field the part lacks is one line naming the file, the fields it
    has and the option to pass."""
    have = part.columns or []
    for field, option in fields:
        if field not in have:
            raise UserError(f"no field '{field}' (fields: {', '.join(map(str, have)) or 'none'}); pass --"
                            f"{option.replace('_', '-')} NAME", path=part.where)


class SplitWriter:
    """One Arrow file per split in ``work``, written ``CHUNK`` rows at a time, so a large source stays out of
    memory; the files must outlive the datasets :meth:`close` returns."""

    def __init__(self, work: Path, tag: str, features: datasets.Features):
        self.work, self.tag, self.features = work, tag, features
        self.chunks: dict[str, list[dict[str, Any]]] = {}
        self.writers: dict[str, Any] = {}

    def path(self, split: str) -> Path:
        return self.work / f"{self.tag}-{split}.arrow"

    def add(self, split: str, record: dict[str, Any]) -> None:
        chunk = self.chunks.setdefault(split, [])
        chunk.append(record)
        if len(chunk) >= CHUNK:
            self._flush(split)

    def _flush(self, split: str) -> None:
        schema = self.features.arrow_schema
        if split not in self.writers:
            self.writers[split] = pa.ipc.new_stream(str(self.path(split)), schema)
        self.writers[split].write_table(pa.Table.from_pylist(self.chunks[split], schema=schema))
        self.chunks[split] = []

    def close(self) -> dict[str, datasets.Dataset]:
        for split, chunk in self.chunks.items():
            if chunk:
                self._flush(split)
        for writer in self.writers.values():
            writer.close()
        info = datasets.DatasetInfo(features=self.features)
        return {split: datasets.Dataset.from_file(str(self.path(split)), info=info) for split in self.writers}
