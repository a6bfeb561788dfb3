"""Pieces every data-prep builder shares: atomic saving with a report, reading that report back, and the one way
texts are compared across splits."""

from __future__ import annotations

import functools
import hashlib
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from learned_metrics.io import dump_json, read_json_object
from learned_metrics.outputs import atomic_folder

REPORT_NAME = "report.json"
SPLITS = ("train", "validation", "test")  # the splits a builder writes, lowest first (drop_repeats' order)


def save_dataset_with_report(dataset_dict: Any, report: dict[str, Any], output: str | Path, kind: str,
                             overwrite: bool = False) -> None:
    """Save a ``datasets.DatasetDict`` and its ``report.json`` into ``output`` atomically: an interrupted build never
    leaves a half-written set that a later training run would load."""
    with atomic_folder(Path(output), kind, overwrite) as tmp:
        dataset_dict.save_to_disk(str(tmp))
        (tmp / REPORT_NAME).write_text(dump_json(report) + "\n", encoding="utf-8")


def normalised(text: str) -> str:
    """A text as the builders compare texts across splits: invisible format characters (zero-width space and joiners,
    soft hyphen, byte-order mark: Unicode category Cf) left out, runs of whitespace as one space, none at the ends
    ("A person\u200b rests." is the pair "A person rests." of another split, not a new one)."""
    return " ".join(text.translate(_format_characters()).split())


@functools.cache
def _format_characters() -> dict[int, None]:
    """Every code point of category Cf, for ``str.translate`` (built once: about 0.1 s)."""
    return {code: None for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"}


def pair_text(premise: str, hypothesis: str) -> str:
    """An NLI pair as the builders compare pairs across splits (``prep nli``'s shared pairs, ``prep anli``/``prep
    nli``'s augmented copies): premise and hypothesis whitespace-normalised."""
    return f"{normalised(premise)}\x00{normalised(hypothesis)}"


def text_key(text: str) -> bytes:
    """A compared text's fixed-size key (what drop_repeats and the augmentation keep per row, not the text)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def drop_repeats(splits: Mapping[str, Any], order: Sequence[str], columns: Sequence[str], text: Callable[..., str]
                 ) -> tuple[dict[str, Any], dict[str, int], list[tuple[str, str, str, str]]]:
    """``splits`` (in ``order``, lowest first) without the rows whose ``text(*columns)`` a higher split holds (the
    last column is the row's id; repeats inside one split stay), the rows dropped per split, and each one dropped as
    ``(split, id, first split, first id)``, for the caller to refuse."""
    seen: dict[bytes, tuple[str, str]] = {}
    kept, dropped, repeats = {}, {}, []
    for split in reversed(order):
        if split not in splits:
            continue
        ds, keep = splits[split], []
        rows = (row for batch in ds.iter(batch_size=10_000) for row in zip(*map(batch.get, columns), strict=True))
        for i, row in enumerate(rows):
            key = text_key(text(*row))
            first = seen.setdefault(key, (split, row[-1]))
            if first[0] == split:
                keep.append(i)
            else:
                repeats.append((split, row[-1], *first))
        dropped[split] = len(ds) - len(keep)
        kept[split] = ds if len(keep) == len(ds) else ds.select(keep)
    return {split: kept[split] for split in order if split in kept}, dropped, repeats


def load_report(data_dir: str | Path) -> dict[str, Any] | None:
    """The ``report.json`` a builder wrote beside a data set, if any (one line if it is not a JSON object)."""
    return read_json_object(Path(data_dir) / REPORT_NAME)

