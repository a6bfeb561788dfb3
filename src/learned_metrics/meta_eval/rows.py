"""Row identity, declared once: how rows of scored inputs are named, paired and deduplicated.

Every reader of scored rows goes through here, so a statistic never pairs rows by where they sit:

- a pandas input (Series or wide DataFrame) is aligned by its labels to the first pandas input of the call
  (:func:`by_index`); different label sets or a duplicate label are refused, never paired by position;
- metric names are distinct (:func:`distinct_names`): two metrics of one name would overwrite each other;
- rows of two metrics are paired only when their keys and their texts agree (:func:`check_paired`): a row keeps
  a digest of its grounding (document) and of its generation (claim/summary), so files of the same keys but other
  texts are refused, naming both files, the row and the text that differs;
- a row present twice follows ``--on-missing`` (:func:`duplicates`): ``error`` (default) refuses it naming both
  rows, ``drop`` leaves out every copy and says how many, as duplicated metric keys are.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.validate import ordered


def distinct_names(names: Any, count: int, *, inputs: str = "metric input") -> list[str] | None:
    """``--names``/``names=``: an ordered list of distinct names, one per input (None: not given)."""
    if names is None:
        return None
    names = list(ordered(names, "--names", also="names="))
    if len(names) != count:
        raise UserError(f"--names gives {len(names)} name(s) for {count} {inputs}(s)")
    if len(set(names)) != len(names):
        raise UserError(f"--names must be distinct, got {names} (each metric's results are kept under its name)")
    return names


# --- pandas inputs ---------------------------------------------------------------------------------------------------


DOC, SYSTEM = "doc_id", "system_id"


def is_long_frame(obj: Any) -> bool:
    """A long DataFrame: one row per (document, system), keyed by its ``doc_id`` and ``system_id`` columns."""
    columns = getattr(obj, "columns", None)
    return columns is not None and DOC in columns and SYSTEM in columns


def _labelled(value: Any) -> bool:
    """A pandas Series or wide DataFrame (a long frame is keyed by its doc_id/system_id columns instead)."""
    return hasattr(value, "index") and hasattr(value, "reindex") and not is_long_frame(value)


def _axes(value: Any) -> list[tuple[str, Any]]:
    return [("index", value.index), *([("columns", value.columns)] if getattr(value, "ndim", 1) == 2 else [])]


def by_index(*named: tuple[str, Any]) -> list[Any]:
    """The values, pandas ones aligned to the first pandas one by their index (and columns, for two DataFrames).

    Two Series of the same labels in other orders describe the same rows; pairing them by position would compare
    different rows with exit 0. Refused: a duplicate label, or label sets that differ (naming both arguments)."""
    values = [value for _, value in named]
    labelled = [i for i, value in enumerate(values) if value is not None and _labelled(value)]
    for i in labelled:
        for axis, labels in _axes(values[i]):
            if not labels.is_unique:
                label = labels[labels.duplicated()][0]
                raise UserError(f"{named[i][0]}: duplicate {axis} label {label!r}; pandas inputs are paired by their "
                                f"labels, so each needs a distinct one")
    if not labelled:
        return values
    first = labelled[0]
    reference = dict(_axes(values[first]))
    for i in labelled[1:]:
        wanted = {}
        for axis, labels in _axes(values[i]):
            if axis not in reference:
                continue
            if set(labels) != set(reference[axis]):
                extra = [v for v in labels if v not in set(reference[axis])] or \
                    [v for v in reference[axis] if v not in set(labels)]
                raise UserError(f"{named[first][0]} and {named[i][0]}: their pandas {axis} hold different labels "
                                f"({extra[0]!r} is in one only); pandas inputs are paired by label, never by "
                                "position: give both the same labels")
            wanted[axis] = reference[axis]
        values[i] = values[i].reindex(**wanted)
    return values


# --- rows read from files --------------------------------------------------------------------------------------------


def text_digest(text: Any) -> bytes:
    """A short digest of one text (a grounding or a generation), so rows can be compared without keeping texts."""
    return hashlib.blake2b(str(text).encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class ScoredRows:
    """Rows of one scored input, a column per role: label (None = missing), group (dataset/corpus), split, system
    (model), the digests of the document and of the generated text (named by ``text_fields``), the scores per field
    (None = missing) and where each row came from (file, row number)."""

    path: str
    text_fields: tuple[str, str] | None
    labels: list[int | None] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    splits: list[str | None] = field(default_factory=list)
    systems: list[str | None] = field(default_factory=list)
    documents: list[bytes] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)
    scores: dict[str, list[float | None]] = field(default_factory=dict)
    where: list[tuple[str, int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def identity(self, i: int) -> tuple[Any, ...]:
        """What makes row ``i`` the row it is: its group, split, system and texts."""
        return self.groups[i], self.splits[i], self.systems[i], self.documents[i], self.texts[i]

    def pair_keys(self) -> list[bytes]:
        """One digest per row of its (document, text) pair: the same pair in two splits shares it."""
        return [hashlib.blake2b(d + t, digest_size=16).digest() for d, t in zip(self.documents, self.texts,
                                                                                 strict=True)]


def check_paired(first: Any, other: Any, names: tuple[str, str] | None = None) -> None:
    """Rows of two inputs (:class:`ScoredRows` or :class:`~.data.LabelledScores`) are paired only when their keys
    (label, group, split) and, where both carry them, their texts agree; ``names`` name them (default: paths)."""
    name_a, name_b = names or (first.path, other.path)
    if len(first.labels) != len(other.labels):
        raise UserError(f"{name_b} has {len(other.labels)} rows and {name_a} {len(first.labels)}: score the same "
                        "files with every metric")
    splits_a, splits_b = getattr(first, "splits", None), getattr(other, "splits", None)
    texts = first.text_fields is not None and other.text_fields is not None
    for i in range(len(first.labels)):
        a = (first.labels[i], first.groups[i], splits_a[i] if splits_a else None)
        b = (other.labels[i], other.groups[i], splits_b[i] if splits_b else None)
        path, row = other.where[i] if other.where else (None, None)
        at = f"{first.where[i][0]}, row {first.where[i][1]}" if first.where else f"{name_a}, row {i + 1}"
        if a != b:
            raise UserError(f"{name_b} differs from {at} (label, group, split {b} vs {a}): score the same files, in "
                            "the same order, with every metric", path=path, row=row)
        if not texts:
            continue
        for name, mine, theirs in zip(other.text_fields, (other.documents, other.texts), (first.documents, first.texts),
                                      strict=True):
            if mine[i] != theirs[i]:
                raise UserError(f"its '{name}' text differs from {at} (rows of two metrics are paired only when their "
                                "keys and texts agree): score the same files, in the same order, with every metric",
                                path=path, row=row)


def duplicates(rows: ScoredRows, on_missing: str) -> tuple[np.ndarray, list[str]]:
    """Rows to keep and notes: a row present twice (same group, split, system and texts) is refused under
    ``on_missing="error"`` naming both rows; ``"drop"`` leaves out every copy, as duplicated metric keys are."""
    first_at: dict[tuple[Any, ...], int] = {}
    copies: dict[tuple[Any, ...], list[int]] = {}
    for i in range(len(rows)):
        identity = rows.identity(i)
        if identity in first_at:
            if on_missing == "error":
                (path, row), (first_path, first_row) = rows.where[i], rows.where[first_at[identity]]
                at = f"row {first_row}" if first_path == path else f"{first_path}, row {first_row}"
                document, text = rows.text_fields or ("document", "text")
                raise UserError(f"duplicate row (dataset {rows.groups[i]!r}, split {rows.splits[i]!r}, the same "
                                f"'{document}' and '{text}'), first at {at} (a benchmark row is "
                                "judged once; --on-missing drop skips duplicated rows)", path=path, row=row)
            copies.setdefault(identity, [first_at[identity]]).append(i)
        else:
            first_at[identity] = i
    keep = np.ones(len(rows), dtype=bool)
    for indices in copies.values():
        keep[indices] = False
    notes = [f"dropped {int((~keep).sum())} duplicated row(s) ({len(copies)} row(s) present more than once, every "
             "copy left out)"] if copies else []
    return keep, notes

