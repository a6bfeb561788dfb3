"""Reading score files for meta-evaluation, with errors that name file, row and field.

Human and metric files are ``.jsonl``/``.csv`` rows keyed by a document and a
system field (``doc_id``/``system_id`` by default). A human file may hold one
row per annotator: rows sharing a key are averaged. The official SummEval
release (``model_annotations.aligned.paired.jsonl``) is read directly, averaging
its expert annotators. Metric files must have exactly one row per key.
Faithfulness (AUC) inputs are scored rows with a 0/1 label, or folders of them
(one file per corpus), including the TRUE benchmark files as published
(``grounding``, ``generated_text``, ``label``; see :func:`true_corpus`).

Problems a user must fix (missing key, duplicate metric row, NaN score, keys
in one file only) stop with one line by default; ``on_missing="drop"`` skips
the offending rows/keys and records a note with the count instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows
from learned_metrics.meta_eval.options import check
from learned_metrics.meta_eval.rows import distinct_names, text_digest
from learned_metrics.validate import number, row_key, row_label, row_number_value, row_score

SUMMEVAL_FIELDS = ("coherence", "consistency", "fluency", "relevance")

Key = tuple[str, str]


@dataclass(frozen=True)
class KeyFields:
    """Names of the fields that identify a summary."""

    doc: str = "doc_id"
    system: str = "system_id"


@dataclass
class CellScores:
    """Scores per (document, system) key from one file, and the row each key came from."""

    path: str
    values: dict[Key, float]
    rows: dict[Key, int]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ScoreGrid:
    """Aligned scores: ``human`` and each metric are (documents x systems), NaN where a summary is absent."""

    docs: list[str]
    systems: list[str]
    human: np.ndarray
    metrics: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)


# --- single values ---------------------------------------------------------------------------


def cell_key(row: dict[str, Any], keys: KeyFields, *, path: object, row_number: int) -> Key:
    """The (document, system) key of a row, both fields required."""
    return (
        row_key(row, keys.doc, path=path, row_number=row_number),
        row_key(row, keys.system, path=path, row_number=row_number),
    )


def _nan_error(path: object, row_number: int, name: str) -> UserError:
    return UserError(
        "score is missing or NaN (fix the row, or pass --on-missing drop to skip it)",
        path=path,
        row=row_number,
        field=name,
    )


# --- human and metric files ------------------------------------------------------------------


def read_human_scores(
    path: str | Path,
    score_field: str,
    keys: KeyFields = KeyFields(),
    *,
    fmt: str = "rows",
    on_missing: str = "error",
) -> CellScores:
    """Human scores per key, averaged over annotator rows (``fmt="rows"``) or SummEval experts."""
    check(on_missing=on_missing, human_format=fmt)
    if fmt == "summeval":
        return _read_summeval(path, score_field, on_missing)
    sums: dict[Key, float] = {}
    counts: dict[Key, int] = {}
    rows: dict[Key, int] = {}
    dropped = total = 0
    for row_number, row in iter_rows(path):
        total += 1
        key = cell_key(row, keys, path=path, row_number=row_number)
        value = row_number_value(row, score_field, path=path, row_number=row_number)
        if value is None:
            if on_missing == "error":
                raise _nan_error(path, row_number, score_field)
            dropped += 1
            continue
        sums[key] = sums.get(key, 0.0) + value
        counts[key] = counts.get(key, 0) + 1
        rows.setdefault(key, row_number)
    scores = CellScores(str(path), {key: sums[key] / counts[key] for key in sums}, rows)
    if dropped:
        scores.notes.append(f"human: dropped {dropped} row(s) with a missing/NaN '{score_field}'")
    if counts and max(counts.values()) > 1:
        scores.notes.append(
            f"human: averaged {total - dropped} rows into {len(counts)} (document, system) cells "
            f"({_range_text(counts.values())} rows per cell)"
        )
    return scores


def _range_text(counts: Iterable[int]) -> str:
    counts = list(counts)
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


def _expert_annotations(row: dict[str, Any], *, path: object, row_number: int) -> list[dict[str, Any]]:
    annotations = row.get("expert_annotations")
    if isinstance(annotations, str):  # a CSV export holds the list as JSON text
        try:
            annotations = json.loads(annotations)
        except json.JSONDecodeError:
            annotations = None
    if not isinstance(annotations, list) or not annotations or not all(isinstance(a, dict) for a in annotations):
        raise UserError(
            "expected a non-empty list of annotation objects (SummEval release format)",
            path=path,
            row=row_number,
            field="expert_annotations",
        )
    return annotations


def _annotation_score(annotation: dict[str, Any], name: str, *, path: object, row_number: int) -> float | None:
    if name not in annotation:
        raise UserError(f"an expert annotation lacks '{name}'", path=path, row=row_number, field="expert_annotations")
    return number(annotation[name], path=path, row=row_number, field=f"expert_annotations.{name}")


def _read_summeval(path: str | Path, score_field: str, on_missing: str) -> CellScores:
    """The SummEval release: ``id``, ``model_id``, ``expert_annotations`` (a list of per-expert dicts)."""
    if score_field not in SUMMEVAL_FIELDS:
        raise UserError(
            f"--human-field '{score_field}' is not a SummEval dimension; expected one of: {', '.join(SUMMEVAL_FIELDS)}"
        )
    values: dict[Key, float] = {}
    rows: dict[Key, int] = {}
    dropped = 0
    for row_number, row in iter_rows(path):
        key = (
            row_key(row, "id", path=path, row_number=row_number),
            row_key(row, "model_id", path=path, row_number=row_number),
        )
        if key in rows:
            raise UserError(
                f"duplicate summary (id={key[0]!r}, model_id={key[1]!r}), first at row {rows[key]}",
                path=path,
                row=row_number,
            )
        annotations = _expert_annotations(row, path=path, row_number=row_number)
        scores = [_annotation_score(a, score_field, path=path, row_number=row_number) for a in annotations]
        scores = [value for value in scores if value is not None]
        if len(scores) < len(annotations):
            if on_missing == "error":
                raise _nan_error(path, row_number, f"expert_annotations.{score_field}")
            dropped += 1
            if not scores:
                continue
        values[key] = float(np.mean(scores))
        rows[key] = row_number
    result = CellScores(str(path), values, rows)
    result.notes.append(f"human: SummEval expert '{score_field}', averaged over each summary's expert annotators")
    if dropped:
        result.notes.append(f"human: {dropped} summaries had missing expert scores (averaged over the rest)")
    return result


def read_metric_scores(
    path: str | Path, score_field: str, keys: KeyFields = KeyFields(), *, on_missing: str = "error",
    records: Iterable[tuple[int, dict[str, Any]]] | None = None,
) -> CellScores:
    """One metric score per key; duplicates and NaN scores are errors unless ``on_missing="drop"``.

    ``records``: ``(row number, row)`` pairs checked instead of the file (a DataFrame's records), ``path`` then only
    names them in errors, so in-memory inputs get the same checks and messages as files.
    """
    check(on_missing=on_missing)
    values: dict[Key, float] = {}
    rows: dict[Key, int] = {}
    duplicated: set[Key] = set()
    missing = 0
    for row_number, row in iter_rows(path) if records is None else records:
        key = cell_key(row, keys, path=path, row_number=row_number)
        value = row_number_value(row, score_field, path=path, row_number=row_number)
        if key in rows:
            if on_missing == "error":
                raise UserError(
                    f"duplicate key ({keys.doc}={key[0]!r}, {keys.system}={key[1]!r}), first at row {rows[key]} "
                    "(a metric file needs one row per summary; --on-missing drop skips duplicated keys)",
                    path=path,
                    row=row_number,
                )
            duplicated.add(key)
            continue
        rows[key] = row_number
        if value is None:
            if on_missing == "error":
                raise _nan_error(path, row_number, score_field)
            missing += 1
            continue
        values[key] = value
    for key in duplicated:
        values.pop(key, None)
    scores = CellScores(str(path), values, rows)
    name = Path(path).name
    if missing:
        scores.notes.append(f"{name}: dropped {missing} row(s) with a missing/NaN '{score_field}'")
    if duplicated:
        scores.notes.append(f"{name}: dropped {len(duplicated)} duplicated key(s)")
    return scores


# --- alignment -------------------------------------------------------------------------------


def _first_in_order(keys: Iterable[Key], rows: dict[Key, int]) -> Key:
    return min(keys, key=lambda k: rows.get(k, 0))


def _mismatch_error(human: CellScores, metric: CellScores, keys: KeyFields, only_human: set, only_metric: set):
    if only_human:
        key = _first_in_order(only_human, human.rows)
        source, other, row = human, metric, human.rows.get(key)
    else:
        key = _first_in_order(only_metric, metric.rows)
        source, other, row = metric, human, metric.rows.get(key)
    return UserError(
        f"key ({keys.doc}={key[0]!r}, {keys.system}={key[1]!r}) has no score in {other.path} "
        f"({len(only_human)} human key(s) lack a metric score, {len(only_metric)} metric key(s) lack a human "
        "score; --on-missing drop skips them)",
        path=source.path,
        row=row,
    )


def _ordered_unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def key_grid(values: dict[Key, float], docs: Sequence[str] | None = None,
             systems: Sequence[str] | None = None) -> np.ndarray:
    """(documents x systems) from scores keyed by (document, system), NaN where absent; documents and systems in
    first-seen order unless given (keys outside the given ones are left out)."""
    docs = _ordered_unique(k[0] for k in values) if docs is None else docs
    systems = _ordered_unique(k[1] for k in values) if systems is None else systems
    row, column = {d: i for i, d in enumerate(docs)}, {s: j for j, s in enumerate(systems)}
    grid = np.full((len(docs), len(systems)), np.nan)
    for (doc, system), value in values.items():
        if doc in row and system in column:
            grid[row[doc], column[system]] = value
    return grid


def align(
    human: CellScores,
    metrics: dict[str, CellScores],
    keys: KeyFields = KeyFields(),
    *,
    on_missing: str = "error",
) -> ScoreGrid:
    """Put human and metric scores on one (documents x systems) grid, keeping keys present everywhere."""
    check(on_missing=on_missing)
    shared = set(human.values)
    notes = [*human.notes]
    for name, metric in metrics.items():
        notes.extend(metric.notes)
        only_human = set(human.values) - set(metric.values)
        only_metric = set(metric.values) - set(human.values)
        if (only_human or only_metric) and on_missing == "error":
            raise _mismatch_error(human, metric, keys, only_human, only_metric)
        if only_human or only_metric:
            notes.append(
                f"{name}: dropped {len(only_human)} human key(s) without a metric score and "
                f"{len(only_metric)} metric key(s) without a human score"
            )
        shared &= set(metric.values)
    if not shared:
        raise UserError(f"no ({keys.doc}, {keys.system}) key has both a human and a metric score", path=human.path)
    ordered = sorted(shared, key=lambda k: human.rows.get(k, 0))
    docs = _ordered_unique(k[0] for k in ordered)
    systems = _ordered_unique(k[1] for k in ordered)

    def to_grid(scores: CellScores) -> np.ndarray:
        return key_grid({k: scores.values[k] for k in ordered}, docs, systems)

    if len(shared) < len(docs) * len(systems):
        notes.append(
            f"{len(shared)} of {len(docs)} x {len(systems)} (document, system) cells have scores; "
            "absent cells are left out of every statistic"
        )
    return ScoreGrid(docs, systems, to_grid(human), {name: to_grid(m) for name, m in metrics.items()}, notes)


def metric_names(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[str]:
    """Display names for metric files: given names (in their order: a set is refused), else file stems (made
    unique)."""
    names = distinct_names(names, len(paths), inputs="metric file")
    if names is not None:
        return names
    stems = [Path(p).stem for p in paths]
    return [stem if stems.count(stem) == 1 else f"{stem}#{i + 1}" for i, stem in enumerate(stems)]


def per_metric_fields(metric_fields: Sequence[str], metric_paths: Sequence[str | Path]) -> list[str]:
    """The score field of every metric input: one field for all, or one per input."""
    if len(metric_fields) not in (1, len(metric_paths)):
        raise UserError(
            f"give --metric-field once or once per --metric ({len(metric_paths)}), got {len(metric_fields)}"
        )
    return list(metric_fields) * (len(metric_paths) if len(metric_fields) == 1 else 1)


def load_grid(
    human_path: str | Path,
    metric_paths: Sequence[str | Path],
    *,
    human_field: str = "score",
    metric_fields: Sequence[str] = ("score",),
    keys: KeyFields = KeyFields(),
    human_format: str = "rows",
    on_missing: str = "error",
    names: Sequence[str] | None = None,
) -> ScoreGrid:
    """Read a human file and one or more metric files and align them (what the CLI commands share)."""
    fields = per_metric_fields(metric_fields, metric_paths)
    wanted = metric_names(metric_paths, names)  # before any file is read
    human = read_human_scores(human_path, human_field, keys, fmt=human_format, on_missing=on_missing)
    metrics = {
        name: read_metric_scores(path, score_field, keys, on_missing=on_missing)
        for name, path, score_field in zip(wanted, metric_paths, fields, strict=True)
    }
    return align(human, metrics, keys, on_missing=on_missing)


# --- AUC and shuffle-test files --------------------------------------------------------------


@dataclass(frozen=True)
class LabelledScores:
    """Rows of a faithfulness (AUC) file: score, 0/1 label, group and optional system per row; where each row came
    from, and (read with ``text_fields``) the digests of its grounding and generation, so two metrics' rows are
    paired only when their texts agree (:func:`~.rows.check_paired`)."""

    scores: np.ndarray
    labels: np.ndarray
    groups: list[str]
    systems: list[str] | None
    where: list[tuple[str, int]] | None = None
    text_fields: tuple[str, str] | None = None
    documents: list[bytes] | None = None
    texts: list[bytes] | None = None


def read_labelled_scores(
    path: str | Path,
    score_field: str = "score",
    label_field: str = "label",
    group_field: str | None = None,
    system_field: str | None = None,
    text_fields: tuple[str, str] | None = None,
) -> LabelledScores:
    """Read an AUC input; without a group field every row belongs to one group, ``all``."""
    scores, labels, groups, systems, where, documents, texts = [], [], [], [], [], [], []
    for row_number, row in iter_rows(path):
        scores.append(row_score(row, score_field, path=path, row_number=row_number))
        labels.append(row_label(row, label_field, path=path, row_number=row_number))
        groups.append(row_key(row, group_field, path=path, row_number=row_number) if group_field else "all")
        if system_field:
            systems.append(row_key(row, system_field, path=path, row_number=row_number))
        where.append((str(path), row_number))
        if text_fields:
            documents.append(text_digest(row.get(text_fields[0])))
            texts.append(text_digest(row.get(text_fields[1])))
    return LabelledScores(np.array(scores), np.array(labels), groups, systems if system_field else None, where,
                          text_fields, documents if text_fields else None, texts if text_fields else None)


SCORED_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".parquet", ".pq")
TRUE_TEXT_FIELDS = ("grounding", "generated_text")
TRUE_SPLITS = ("_valid", "_dev", "_test")


def true_corpus(path: str | Path) -> str:
    """The corpus of a TRUE benchmark file, from its name, so the published files need no renaming.

    Rule: the file stem, without a trailing ``_download``, then without one trailing split suffix
    (``_valid``, ``_dev`` or ``_test``); nothing else changes. ``frank_valid_download.csv`` -> ``frank``,
    ``begin_dev_download.csv`` -> ``begin``, ``summeval_download.csv`` -> ``summeval``, ``qags_c.csv`` ->
    ``qags_c``, ``q2_gold.csv`` -> ``q2_gold``.
    """
    stem = Path(path).stem
    name = stem.removesuffix("_download")
    for split in TRUE_SPLITS:
        if name.endswith(split) and len(name) > len(split):
            return name[: -len(split)]
    return name or stem


def scored_files(source: str | Path) -> list[Path]:
    """A scored file, or every .jsonl/.csv/.parquet file of a folder in name order (one file per corpus)."""
    path = Path(source)
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in SCORED_SUFFIXES)
    if not files:
        raise UserError("folder holds no .jsonl, .csv or .parquet files", path=path)
    return files


def check_columns(path: Path, required: Sequence[str], layout: str) -> None:
    """Stop on a file without a required column before anything is read in full (the first row is the header;
    an empty file is an error of :func:`iter_rows`)."""
    rows = iter_rows(path)
    try:
        _, first = next(rows)
    finally:
        rows.close()
    missing = [name for name in required if name not in first]
    if missing:
        raise UserError(f"missing column ({layout} files need {', '.join(required)}; present: "
                        f"{', '.join(map(str, first)) or 'none'})", path=path, field=missing[0])


def _corpus_names(files: list[Path], corpus_of: Callable[[Path], str]) -> list[str]:
    """The corpus of each file; two files of one corpus would silently merge, so they are an error."""
    seen: dict[str, Path] = {}
    for file in files:
        corpus = corpus_of(file)
        if corpus in seen:
            raise UserError(f"{seen[corpus].name} and {file.name} both hold corpus '{corpus}'; keep one file per "
                            "corpus in the folder", path=file.parent)
        seen[corpus] = file
    return list(seen)


def _check_scored_format(fmt: str, group_field: str | None) -> None:
    check(format=fmt)
    if fmt == "true" and group_field:
        raise UserError("--format true takes the corpus from the file name; --group-field is for --format rows")


def read_scored_corpora(sources: Sequence[str | Path], names: Sequence[str] | None = None, *,
                        score_fields: Sequence[str] = ("score",), label_field: str = "label",
                        group_field: str | None = None, system_field: str | None = None,
                        fmt: str = "rows") -> dict[str, LabelledScores]:
    """Labelled scores per metric; a source is a scored file, or a folder of scored corpora (one file per corpus).

    ``fmt="rows"``: the corpus is the file name inside a folder unless ``group_field`` names a column.
    ``fmt="true"``: TRUE benchmark files (``grounding``, ``generated_text``, ``label`` and the score column,
    all checked up front); the corpus is :func:`true_corpus` of the file name, for a single file too.
    """
    _check_scored_format(fmt, group_field)
    scored = {}
    fields = per_metric_fields(score_fields, sources)
    for name, source, field_name in zip(metric_names(sources, names), sources, fields, strict=True):
        files = scored_files(source)
        if fmt == "true":
            for file in files:
                check_columns(file, (*TRUE_TEXT_FIELDS, label_field, field_name), "TRUE")
        by_file = fmt == "true" or (Path(source).is_dir() and group_field is None)
        corpora = _corpus_names(files, true_corpus if fmt == "true" else (lambda f: f.stem)) if by_file else None
        text_fields = TRUE_TEXT_FIELDS if fmt == "true" else None
        parts = [read_labelled_scores(file, field_name, label_field, group_field, system_field, text_fields)
                 for file in files]
        groups = [[corpora[i]] * len(part.scores) if corpora else part.groups for i, part in enumerate(parts)]
        systems = [s for part in parts for s in part.systems] if system_field else None
        scored[name] = LabelledScores(np.concatenate([p.scores for p in parts]),
                                      np.concatenate([p.labels for p in parts]),
                                      [g for part_groups in groups for g in part_groups], systems,
                                      [w for p in parts for w in p.where], text_fields,
                                      [d for p in parts for d in p.documents] if text_fields else None,
                                      [t for p in parts for t in p.texts] if text_fields else None)
    return scored


@dataclass(frozen=True)
class ShuffleRows:
    """Rows of a shuffle-test file: pair id, 1 = original / 0 = shuffled, score, optional length."""

    pair_ids: list[str]
    is_original: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray | None
    rows: list[int]


def read_shuffle_rows(
    path: str | Path,
    *,
    score_field: str = "score",
    label_field: str = "label",
    pair_field: str = "doc_id",
    text_field: str | None = None,
    length_field: str | None = None,
) -> ShuffleRows:
    """Read a shuffle-test file; lengths (characters) come from ``length_field`` or ``len(text_field)``."""
    pair_ids, labels, scores, lengths, rows = [], [], [], [], []
    for row_number, row in iter_rows(path):
        pair_ids.append(row_key(row, pair_field, path=path, row_number=row_number))
        labels.append(row_label(row, label_field, path=path, row_number=row_number))
        scores.append(row_score(row, score_field, path=path, row_number=row_number))
        rows.append(row_number)
        if length_field:
            length = row_number_value(row, length_field, path=path, row_number=row_number)
            if length is None or length < 0:
                raise UserError("expected a non-negative length", path=path, row=row_number, field=length_field)
            lengths.append(length)
        elif text_field:
            text = row.get(text_field)
            if not isinstance(text, str):
                raise UserError("missing text (needed for its length)", path=path, row=row_number, field=text_field)
            lengths.append(len(text))
    return ShuffleRows(
        pair_ids, np.array(labels), np.array(scores), np.array(lengths, dtype=float) if lengths else None, rows
    )
