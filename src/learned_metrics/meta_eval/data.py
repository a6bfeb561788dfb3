"""Reading score files for meta-evaluation (human and metric files keyed by (document, system), the SummEval
release, labelled AUC rows and folders of them, TRUE files, shuffle-test rows), with errors that name file, row and
field. The row-identity rules are :mod:`.rows`'; the formats are in docs/meta_eval.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import data_files, iter_rows
from learned_metrics.meta_eval.options import check
from learned_metrics.meta_eval.rows import (
    CellScores,
    Key,
    KeyFields,
    ScoredRows,
    distinct_names,
    duplicates,
    keyed_cells,
    nan_error,
    numbered_names,
    read_scored,
    shared_keys,
)
from learned_metrics.validate import number, row_number_value

SUMMEVAL_FIELDS = ("coherence", "consistency", "fluency", "relevance")


@dataclass(frozen=True)
class ScoreGrid:
    """Aligned scores: ``human`` and each metric are (documents x systems), NaN where a summary is absent."""

    docs: list[str]
    systems: list[str]
    human: np.ndarray
    metrics: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)


def read_human_scores(path: str | Path, score_field: str, keys: KeyFields = KeyFields(), *, fmt: str = "rows",
                      on_missing: str = "error") -> CellScores:
    """Human scores per key, averaged over annotator rows (``fmt="rows"``) or SummEval experts."""
    check(on_missing=on_missing, human_format=fmt)
    if fmt == "summeval":
        return _read_summeval(path, score_field, on_missing)
    return keyed_cells([(path, iter_rows(path))], score_field, keys, on_missing=on_missing, average=True)


def _read_summeval(path: str | Path, score_field: str, on_missing: str) -> CellScores:
    """The SummEval release: ``id``, ``model_id``, ``expert_annotations`` (a list of per-expert dicts); each
    summary's experts averaged, then read as keyed rows (a summary given twice follows ``on_missing``)."""
    if score_field not in SUMMEVAL_FIELDS:
        raise UserError(f"--human-field '{score_field}' is not a SummEval dimension; expected one of: "
                        f"{', '.join(SUMMEVAL_FIELDS)}")
    partial = 0

    def summaries() -> Iterable[tuple[int, dict[str, Any]]]:
        nonlocal partial
        for row_number, row in iter_rows(path):
            at: dict[str, Any] = {"path": path, "row": row_number}
            annotations = row.get("expert_annotations")
            if isinstance(annotations, str):  # a CSV export holds the list as JSON text (not JSON: refused below)
                with suppress(json.JSONDecodeError):
                    annotations = json.loads(annotations)
            if (not isinstance(annotations, list) or not annotations
                    or not all(isinstance(a, dict) for a in annotations)):
                raise UserError("expected a non-empty list of annotation objects (SummEval release format)", **at,
                                field="expert_annotations")
            scores = []
            for annotation in annotations:
                if score_field not in annotation:
                    raise UserError(f"an expert annotation lacks '{score_field}'", **at, field="expert_annotations")
                scores.append(number(annotation[score_field], **at, field=f"expert_annotations.{score_field}"))
            scores = [value for value in scores if value is not None]
            if len(scores) < len(annotations):
                if on_missing == "error":
                    raise nan_error(path, row_number, f"expert_annotations.{score_field}")
                partial += bool(scores)
            yield row_number, {**row, score_field: float(np.mean(scores)) if scores else None}

    result = keyed_cells([(path, summaries())], score_field, KeyFields("id", "model_id"), on_missing=on_missing)
    result.notes.insert(0, f"human: SummEval expert '{score_field}', averaged over each summary's expert annotators")
    if partial:
        result.notes.append(f"human: {partial} summaries had missing expert scores (averaged over the rest)")
    return result


def read_metric_scores(path: str | Path, score_field: str, keys: KeyFields = KeyFields(), *,
                       on_missing: str = "error") -> CellScores:
    """One metric score per key; duplicates and NaN scores are errors unless ``on_missing="drop"``."""
    return keyed_cells([(path, iter_rows(path))], score_field, keys, on_missing=on_missing)


def key_grid(values: dict[Key, float], docs: Sequence[str] | None = None,
             systems: Sequence[str] | None = None) -> np.ndarray:
    """(documents x systems) from scores keyed by (document, system), NaN where absent; documents and systems in
    first-seen order unless given (keys outside the given ones are left out)."""
    docs = list(dict.fromkeys(k[0] for k in values)) if docs is None else docs
    systems = list(dict.fromkeys(k[1] for k in values)) if systems is None else systems
    row, column = {d: i for i, d in enumerate(docs)}, {s: j for j, s in enumerate(systems)}
    grid = np.full((len(docs), len(systems)), np.nan)
    for (doc, system), value in values.items():
        if doc in row and system in column:
            grid[row[doc], column[system]] = value
    return grid


def align(human: CellScores, metrics: dict[str, CellScores], keys: KeyFields = KeyFields(), *,
          on_missing: str = "error") -> ScoreGrid:
    """Put human and metric scores on one (documents x systems) grid, keeping keys present everywhere."""
    check(on_missing=on_missing)
    ordered, notes = shared_keys(human, metrics, keys, on_missing=on_missing)
    notes = [*human.notes, *(note for metric in metrics.values() for note in metric.notes), *notes]
    if not ordered:
        raise UserError(f"no ({keys.doc}, {keys.system}) key has both a human and a metric score", path=human.path)
    docs, systems = list(dict.fromkeys(k[0] for k in ordered)), list(dict.fromkeys(k[1] for k in ordered))
    if len(ordered) < len(docs) * len(systems):
        notes.append(f"{len(ordered)} of {len(docs)} x {len(systems)} (document, system) cells have scores; "
                     "absent cells are left out of every statistic")
    grids = [key_grid({k: cells.values[k] for k in ordered}, docs, systems) for cells in (human, *metrics.values())]
    return ScoreGrid(docs, systems, grids[0], dict(zip(metrics, grids[1:], strict=True)), notes)


def metric_names(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[str]:
    """Display names for metric files: given names (in their order: a set is refused), else unique file stems."""
    return distinct_names(names, len(paths), inputs="metric file") or numbered_names([Path(p).stem for p in paths])


def per_metric_fields(metric_fields: Sequence[str], metric_paths: Sequence[str | Path]) -> list[str]:
    """The score field of every metric input: one field for all, or one per input."""
    if len(metric_fields) not in (1, len(metric_paths)):
        raise UserError(f"give --metric-field once or once per --metric ({len(metric_paths)}), got "
                        f"{len(metric_fields)}")
    return list(metric_fields) * (len(metric_paths) if len(metric_fields) == 1 else 1)


def load_grid(human_path: str | Path, metric_paths: Sequence[str | Path], *, human_field: str = "score",
              metric_fields: Sequence[str] = ("score",), keys: KeyFields = KeyFields(), human_format: str = "rows",
              on_missing: str = "error", names: Sequence[str] | None = None) -> ScoreGrid:
    """Read a human file and one or more metric files and align them (what the CLI commands share)."""
    fields = per_metric_fields(metric_fields, metric_paths)
    wanted = metric_names(metric_paths, names)  # before any file is read
    human = read_human_scores(human_path, human_field, keys, fmt=human_format, on_missing=on_missing)
    metrics = {name: read_metric_scores(path, score_field, keys, on_missing=on_missing)
               for name, path, score_field in zip(wanted, metric_paths, fields, strict=True)}
    return align(human, metrics, keys, on_missing=on_missing)


def read_labelled_scores(path: str | Path, score_field: str = "score", label_field: str = "label",
                         group_field: str | None = None, system_field: str | None = None,
                         text_fields: tuple[str, str] | None = None) -> ScoredRows:
    """Read an AUC input; without a group field every row belongs to one group, ``all``."""
    return read_scored([(path, None)], score_field, label_field, group_field=group_field, system_field=system_field,
                       text_fields=text_fields)


TRUE_TEXT_FIELDS = ("grounding", "generated_text")
TRUE_SPLITS = ("_valid", "_dev", "_test")


def true_corpus(path: str | Path) -> str:
    """The corpus of a TRUE file, so the published files need no renaming: the stem less ``_download``, then less one
    trailing ``_valid``/``_dev``/``_test`` (``frank_valid_download.csv`` -> ``frank``, ``qags_c.csv`` -> ``qags_c``)."""
    stem = Path(path).stem
    name = stem.removesuffix("_download")
    return next((name[: -len(s)] for s in TRUE_SPLITS if name.endswith(s) and len(name) > len(s)), name or stem)


def scored_files(source: str | Path) -> list[Path]:
    """A scored file, or every .jsonl/.csv/.parquet file of a folder in name order (one file per corpus)."""
    path = Path(source)
    if not path.is_dir():
        return [path]
    files = data_files(path, recursive=False)
    if not files:
        raise UserError("folder holds no .jsonl, .csv or .parquet files", path=path)
    return files


def check_columns(path: Path, required: Sequence[str], layout: str) -> dict[str, Any]:
    """Stop on a file without a required column before anything is read in full; returns the first row (the
    header; an empty file is an error of :func:`iter_rows`)."""
    with closing(iter_rows(path)) as rows:
        _, first = next(rows)
    missing = [name for name in required if name not in first]
    if missing:
        raise UserError(f"missing column ({layout} files need {', '.join(required)}; present: "
                        f"{', '.join(map(str, first)) or 'none'})", path=path, field=missing[0])
    return first


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


def _row_keys(file: Path, id_fields: Sequence[str]) -> tuple[tuple[str, str] | None, bool]:
    """What rows of two metric files are paired by, read from the first row, and whether it is their texts (the
    faithfulness pair, a benchmark layout's pair, a coherence ``text``: then a row present twice is a duplicate).
    Rows without texts are paired by the first of ``id_fields`` they carry (``--doc-field``, ``id``); with neither
    (None), labels and corpora alone are compared (:func:`~learned_metrics.meta_eval.rows.check_paired`)."""
    from learned_metrics.layouts import text_layout

    with closing(iter_rows(file)) as rows:
        first = next(rows)[1]
    layout = None if "grounding" in first and "generation" in first else text_layout(first)
    texts = (layout.premise, layout.hypothesis) if layout is not None else ("grounding", "generation") if \
        "generation" in first else ("", "text") if "text" in first else None
    if texts is not None:
        return texts, True
    return next(((name, "") for name in id_fields if name in first), None), False


def read_scored_corpora(sources: Sequence[str | Path], names: Sequence[str] | None = None, *,
                        score_fields: Sequence[str] = ("score",), label_field: str = "label",
                        group_field: str | None = None, system_field: str | None = None,
                        fmt: str = "rows", on_missing: str = "error", doc_field: str = "doc_id"
                        ) -> dict[str, ScoredRows]:
    """Labelled scores per metric from scored files or folders of them (one file per corpus, the corpus its name
    unless ``group_field`` names a column). ``fmt="true"``: TRUE files, the corpus :func:`true_corpus` of the file
    name even for one file. Rows that carry texts are paired across metrics by them, and a row present twice follows
    ``on_missing``; rows without texts are paired by ``doc_field`` (else ``id``) where they carry one."""
    check(format=fmt, on_missing=on_missing)
    if fmt == "true" and group_field:
        raise UserError("--format true takes the corpus from the file name; --group-field is for --format rows")
    scored = {}
    fields = per_metric_fields(score_fields, sources)
    for name, source, field_name in zip(metric_names(sources, names), sources, fields, strict=True):
        files = scored_files(source)
        if fmt == "true":
            for file in files:
                check_columns(file, (*TRUE_TEXT_FIELDS, label_field, field_name), "TRUE")
        by_file = fmt == "true" or (Path(source).is_dir() and group_field is None)
        corpora = _corpus_names(files, true_corpus if fmt == "true" else (lambda f: f.stem)) if by_file else None
        keys, texts = (TRUE_TEXT_FIELDS, True) if fmt == "true" else _row_keys(files[0], (doc_field, "id"))
        rows = read_scored(list(zip(files, corpora or [None] * len(files), strict=True)), field_name, label_field,
                           group_field=group_field, system_field=system_field, text_fields=keys)
        if texts:
            keep, notes = duplicates(rows, on_missing)
            rows = rows.take(keep)
            rows.notes += notes
        scored[name] = rows
    return scored


@dataclass(frozen=True)
class ShuffleRows:
    """Rows of a shuffle-test file: pair id, 1 = original / 0 = shuffled, score, optional length."""

    pair_ids: list[str]
    is_original: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray | None
    rows: list[int]


def _no_shuffle_is_its_original(rows: Any, pair_field: str, text_name: str) -> None:
    """A row labelled shuffled whose text is its original's is no negative: the metric must score both alike, and
    the tie would count as half a correct comparison. Refused naming the row (a shuffle set built by ``prep
    shuffle-set`` never holds one)."""
    originals = {group: text for group, split, text in zip(rows.groups, rows.splits, rows.texts, strict=True)
                 if split == "original"}
    for index, (group, split, text) in enumerate(zip(rows.groups, rows.splits, rows.texts, strict=True)):
        if split == "shuffled" and originals.get(group) == text:
            path, row = rows.where[index]
            raise UserError(f"this shuffled row's {text_name} is its original's ({pair_field} {group!r}): it is no "
                            "negative, and its tie would count as half a correct comparison; remove it or shuffle "
                            "it again", path=path, row=row, field=text_name)


def read_shuffle_rows(path: str | Path, *, score_field: str = "score", label_field: str = "label",
                      pair_field: str = "doc_id", text_field: str | None = None,
                      length_field: str | None = None) -> ShuffleRows:
    """A shuffle-test file; lengths (characters) from ``length_field`` or ``len(text_field)``. A row present twice (same
    pair id, kind and ``text_field``, default ``text``) is refused naming both rows: comparisons would count twice."""
    text_name = text_field or "text"
    lengths: list[float] = []
    texts = True

    def length(row: dict[str, Any], path: str | Path, row_number: int) -> None:
        nonlocal texts
        texts = texts and isinstance(row.get(text_name), str)
        if length_field:
            value = row_number_value(row, length_field, path=path, row_number=row_number)
            if value is None or value < 0:
                raise UserError("expected a non-negative length", path=path, row=row_number, field=length_field)
            lengths.append(value)
        elif text_field:
            if not isinstance(row.get(text_field), str):
                raise UserError("missing text (needed for its length)", path=path, row=row_number, field=text_field)
            lengths.append(len(row[text_field]))

    rows = read_scored([(path, None)], score_field, label_field, group_field=pair_field, text_fields=("", text_name),
                       roles=(pair_field, "kind"), extra=length)
    rows.splits = ["original" if label == 1 else "shuffled" for label in rows.labels]
    if texts:  # without the texts, two shuffles of one document are not known to be the same row
        duplicates(rows, "error", advice="remove one copy: every comparison would count twice")
        _no_shuffle_is_its_original(rows, pair_field, text_name)
    return ShuffleRows(rows.groups, np.array(rows.labels), rows.scores,
                       np.array(lengths, dtype=float) if lengths else None, [row for _, row in rows.where])
