"""Row identity, declared once: how rows of scored inputs are named, paired and deduplicated. Every reader of
scored rows goes through here, so a statistic never pairs rows by where they sit: pandas inputs by label, metric
names distinct, rows of two metrics paired only when their keys and texts agree, duplicates per ``--on-missing``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows
from learned_metrics.meta_eval.options import check
from learned_metrics.validate import binary_label, by_label, field_value, number, ordered, row_key, row_number_value


def distinct(names: list[Any], what: str, why: str) -> None:
    """Names that key results must be distinct: two of one name would overwrite each other."""
    repeated = next((name for name in names if names.count(name) > 1), None)
    if repeated is not None:
        raise UserError(f"{what} must be distinct: {repeated!r} is given twice (got {list(names)}; {why})")


def distinct_names(names: Any, count: int, *, inputs: str = "metric input") -> list[str] | None:
    """``--names``/``names=``: an ordered list of distinct names, one per input (None: not given)."""
    if names is None:
        return None
    names = list(ordered(names, "--names", also="names="))
    if len(names) != count:
        raise UserError(f"--names gives {len(names)} name(s) for {count} {inputs}(s)")
    distinct(names, "--names", "each metric's results are kept under its name")
    return names


def numbered_names(names: Sequence[str]) -> list[str]:
    """Default names made distinct: a name given more than once becomes ``name#i`` (``i`` its position, 1-based),
    or the next free number where an input is already called that (``m#1.csv`` beside two ``m.jsonl``)."""
    taken, out = set(names), []
    for i, name in enumerate(names, start=1):
        if names.count(name) > 1:
            number = i
            while f"{name}#{number}" in taken:
                number += len(names)
            name = f"{name}#{number}"
            taken.add(name)
        out.append(name)
    return out


DOC, SYSTEM = "doc_id", "system_id"


def is_long_frame(obj: Any) -> bool:
    """A long DataFrame: one row per (document, system), keyed by its ``doc_id`` and ``system_id`` columns."""
    return all(name in getattr(obj, "columns", ()) for name in (DOC, SYSTEM))


def by_index(*named: tuple[str, Any]) -> list[Any]:
    """:func:`~learned_metrics.validate.by_label`, a long frame (keyed by its columns, not its index) left as given."""
    return by_label(*named, keyed_by_columns=is_long_frame)


def text_digest(text: Any) -> bytes:
    """A short digest of one text (a grounding or a generation), so rows can be compared without keeping texts."""
    return hashlib.blake2b(str(text).encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class ScoredRows:
    """Rows of one scored input, a column per role: label, group (dataset/corpus), split, system (None: the rows
    name none), the digests of the two ``text_fields``, each score field's values (None = missing), where each row
    came from (file, row number) and notes on rows left out."""

    path: str
    text_fields: tuple[str, str] | None
    labels: list[int | None] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    splits: list[str | None] = field(default_factory=list)
    systems: list[str | None] | None = field(default_factory=list)
    documents: list[bytes] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)
    values: dict[str, list[float | None]] = field(default_factory=dict)
    where: list[tuple[str, int]] = field(default_factory=list)
    roles: tuple[str, str] = ("dataset", "split")  # what the group and the split are called in messages
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def scores(self) -> np.ndarray:
        """The first score field's values: a one-metric input's scores."""
        return np.array(next(iter(self.values.values())), dtype=np.float64)

    def pair_keys(self) -> list[bytes]:
        """One digest per row of its (document, text) pair: the same pair in two splits shares it."""
        pairs = zip(self.documents, self.texts, strict=True)
        return [hashlib.blake2b(d + t, digest_size=16).digest() for d, t in pairs]

    def take(self, keep: np.ndarray) -> ScoredRows:
        """The rows where ``keep`` is true, in order."""
        rows = np.flatnonzero(keep)
        columns = {name: getattr(self, name) for name in ("labels", "groups", "splits", "systems", "documents",
                                                          "texts", "where")}
        return replace(self, **{k: None if c is None else [c[i] for i in rows] for k, c in columns.items()},
                       values={k: [c[i] for i in rows] for k, c in self.values.items()}, notes=list(self.notes))


def read_scored(files: Iterable[tuple[Any, str | None]], score_fields: str | Sequence[str], label_field: str | None,
                *, group_field: str | None = None, system_field: str | None = None,
                text_fields: tuple[str, str] | None = None, roles: tuple[str, str] = ("dataset", "split"),
                on_missing: str | None = None, label: Callable[..., int | None] | None = None,
                extra: Callable[[dict[str, Any], Any, int], None] | None = None,
                records: Iterable[tuple[int, dict[str, Any]]] | None = None) -> ScoredRows:
    """The one reader of scored rows, each value checked naming file, row and field; a row's group is its file's
    corpus, else ``group_field``'s value, else ``all``. ``label`` parses a label (default 0/1), ``extra`` reads what
    one analysis adds; ``records``: an in-memory input's numbered rows (its one ``files`` entry only names it)."""
    fields = [score_fields] if isinstance(score_fields, str) else list(score_fields)
    out = ScoredRows("", text_fields, systems=[] if system_field else None, values={f: [] for f in fields}, roles=roles)
    document, text = text_fields or ("", "")
    for path, corpus in files:
        out.path = out.path or str(path)
        for row_number, row in iter_rows(path) if records is None else records:
            at: dict[str, Any] = {"path": path, "row_number": row_number}
            for name in fields:
                out.values[name].append(_value(row, name, number, "score", on_missing, **at))
            out.labels.append(_value(row, label_field, label or binary_label, "label", on_missing, **at)
                              if label_field else None)
            out.groups.append(corpus if corpus is not None else row_key(row, group_field, **at) if group_field
                              else "all")
            out.splits.append(None)
            if system_field:
                out.systems.append(row_key(row, system_field, **at))
            out.documents.append(text_digest(row.get(document)) if document else b"")
            out.texts.append(text_digest(row.get(text)) if text else b"")
            out.where.append((str(path), row_number))
            if extra:
                extra(row, path, row_number)
    return out


def _value(row: dict[str, Any], name: str, parse: Callable[..., Any], what: str, on_missing: str | None, *,
           path: Any, row_number: int) -> Any:
    """A score or label of a row: without ``on_missing`` the field must be there with a value; with it a missing
    value is refused naming the option (``"error"``) or None (``"drop"``)."""
    raw = field_value(row, name, path=path, row_number=row_number) if on_missing is None else row.get(name)
    value = parse(raw, path=path, row=row_number, field=name)
    if value is None and on_missing != "drop":
        why = "or NaN" if on_missing is None else "(fix the row, or pass --on-missing drop to skip it)"
        raise UserError(f"{what} is missing {why}", path=path, row=row_number, field=name)
    return value


def check_paired(first: Any, other: Any, names: tuple[str, str] | None = None) -> None:
    """Rows of two inputs are paired only when their keys (label, group, split) and, where both carry them, their
    texts agree; ``names`` name them (default: paths)."""
    name_a, name_b = names or (first.path, other.path)
    if len(first.labels) != len(other.labels):
        raise UserError(f"{name_b} has {len(other.labels)} rows and {name_a} {len(first.labels)}: score the same "
                        "files with every metric")
    for i in range(len(first.labels)):
        a, b = (first.labels[i], first.groups[i], first.splits[i]), (other.labels[i], other.groups[i], other.splits[i])
        path, row = other.where[i] if other.where else (None, None)
        at = f"{first.where[i][0]}, row {first.where[i][1]}" if first.where else f"{name_a}, row {i + 1}"
        if a != b:
            raise UserError(f"{name_b} differs from {at} (label, group, split {b} vs {a}): score the same files, in "
                            "the same order, with every metric", path=path, row=row)
        if first.text_fields is None or other.text_fields is None:
            continue
        for name, mine, theirs in zip(other.text_fields, (other.documents, other.texts), (first.documents, first.texts),
                                      strict=True):
            if mine[i] != theirs[i]:
                raise UserError(f"its '{name}' differs from {at} (rows of two metrics are paired only when their keys "
                                "and texts agree): score the same files, in the same order, with every metric",
                                path=path, row=row)


def duplicates(rows: ScoredRows, on_missing: str, advice: str = "--on-missing drop skips duplicated rows"
               ) -> tuple[np.ndarray, list[str]]:
    """Rows to keep and notes: a row present twice (same group, split, system and texts) is refused under
    ``on_missing="error"`` naming both rows (``advice``: what to do); ``"drop"`` leaves out every copy."""
    first_at: dict[tuple[Any, ...], int] = {}
    copies: dict[tuple[Any, ...], list[int]] = {}
    systems = rows.systems or [None] * len(rows)
    for i in range(len(rows)):
        identity = rows.groups[i], rows.splits[i], systems[i], rows.documents[i], rows.texts[i]
        first = first_at.setdefault(identity, i)
        if first != i:
            if on_missing == "error":
                (path, row), (first_path, first_row) = rows.where[i], rows.where[first]
                at = f"row {first_row}" if first_path == path else f"{first_path}, row {first_row}"
                same = " and ".join(f"'{name}'" for name in rows.text_fields or ("document", "text") if name)
                raise UserError(f"duplicate row ({rows.roles[0]} {rows.groups[i]!r}, {rows.roles[1]} "
                                f"{rows.splits[i]!r}, the same {same}), first at {at} (a row is judged once; "
                                f"{advice})", path=path, row=row)
            copies.setdefault(identity, [first]).append(i)
    keep = ~np.isin(np.arange(len(rows)), [i for indices in copies.values() for i in indices])
    notes = [f"dropped {int((~keep).sum())} duplicated row(s) ({len(copies)} row(s) present more than once, every "
             "copy left out)"] if copies else []
    return keep, notes


Key = tuple[str, str]


@dataclass(frozen=True)
class KeyFields:
    """Names of the fields that identify a summary."""

    doc: str = "doc_id"
    system: str = "system_id"


@dataclass
class CellScores:
    """Scores per (document, system) key, and the first row each key came from (every key read, scored or not)."""

    path: str
    values: dict[Key, float]
    rows: dict[Key, int]
    notes: list[str] = field(default_factory=list)


def nan_error(path: object, row_number: int, name: str) -> UserError:
    return UserError("score is missing or NaN (fix the row, or pass --on-missing drop to skip it)", path=path,
                     row=row_number, field=name)


def keyed_cells(sources: Iterable[tuple[object, Iterable[tuple[int, dict[str, Any]]]]], score_field: str,
                keys: KeyFields = KeyFields(), *, on_missing: str = "error", average: bool = False,
                nan_absent: bool = False) -> CellScores:
    """Scores per key from the numbered rows of ``(path or name, rows)`` sources. ``average``: a human input's
    annotator rows sharing a key are averaged; otherwise a key given twice and a missing/NaN score (unless
    ``nan_absent``: a frame's NaN is an absent judgement) follow ``on_missing``, refused naming both rows or dropped."""
    check(on_missing=on_missing)
    scored: dict[Key, list[float]] = {}
    first: dict[Key, tuple[object, int]] = {}
    duplicated: set[Key] = set()
    missing = 0
    path: object = None
    for path, rows in sources:
        for row_number, row in rows:
            key = tuple(row_key(row, name, path=path, row_number=row_number) for name in (keys.doc, keys.system))
            value = row_number_value(row, score_field, path=path, row_number=row_number)
            if key in first and not average:
                if on_missing == "error":
                    first_path, first_row = first[key]
                    at = f"row {first_row}" if first_path == path else f"{first_path} row {first_row}"
                    advice = "" if nan_absent else "; --on-missing drop skips duplicated keys"
                    raise UserError(f"duplicate key ({keys.doc}={key[0]!r}, {keys.system}={key[1]!r}), first at {at}: "
                                    "more than one row for one summary (a metric needs one row per summary; only a "
                                    f"human input's annotator rows are averaged{advice})", path=path, row=row_number)
                duplicated.add(key)
                continue
            first.setdefault(key, (path, row_number))
            if value is None:
                if on_missing == "error" and not nan_absent:
                    raise nan_error(path, row_number, score_field)
                missing += 1
                continue
            scored.setdefault(key, []).append(value)
    values = {key: sum(scores, 0.0) / len(scores) for key, scores in scored.items() if key not in duplicated}
    name = "human" if average else Path(str(path)).name
    cells = CellScores(str(path), values, {key: row for key, (_, row) in first.items()})
    if missing and not nan_absent:
        cells.notes.append(f"{name}: dropped {missing} row(s) with a missing/NaN '{score_field}'")
    if duplicated:
        cells.notes.append(f"{name}: dropped {len(duplicated)} duplicated key(s) (every copy left out)")
    sizes = [len(scores) for scores in scored.values()]
    if average and sizes and max(sizes) > 1:
        low, high = min(sizes), max(sizes)
        cells.notes.append(f"human: averaged {sum(sizes)} rows into {len(sizes)} (document, system) cells "
                           f"({low if low == high else f'{low}-{high}'} rows per cell)")
    return cells


def shared_keys(first: CellScores, others: dict[str, CellScores], keys: KeyFields = KeyFields(), *,
                on_missing: str = "error") -> tuple[list[Key], list[str]]:
    """The keys scored in ``first`` and every other input, in ``first``'s row order, and notes: a key in one input
    only is refused under ``on_missing="error"`` (naming its file and row), left out with a note under ``"drop"``."""
    shared = set(first.values)
    notes = []
    for name, other in others.items():
        only_first, only_other = set(first.values) - set(other.values), set(other.values) - set(first.values)
        if (only_first or only_other) and on_missing == "error":
            source, target, lonely = (first, other, only_first) if only_first else (other, first, only_other)
            key = min(lonely, key=lambda k: source.rows.get(k, 0))
            raise UserError(f"key ({keys.doc}={key[0]!r}, {keys.system}={key[1]!r}) has no score in {target.path} "
                            f"({len(only_first)} human key(s) lack a metric score, {len(only_other)} metric key(s) "
                            "lack a human score; --on-missing drop skips them)", path=source.path,
                            row=source.rows.get(key))
        if only_first or only_other:
            notes.append(f"{name}: dropped {len(only_first)} human key(s) without a metric score and "
                         f"{len(only_other)} metric key(s) without a human score")
        shared &= set(other.values)
    return sorted(shared, key=lambda k: first.rows.get(k, 0)), notes
