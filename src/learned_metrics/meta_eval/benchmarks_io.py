"""Faithfulness benchmarks read as released: LLM-AggreFact, AggreFact, the SummaC benchmark and TRUE (layouts in
:data:`learned_metrics.layouts.LAYOUTS`). A scored file keeps every column of the benchmark and adds ``score``, so
the file ``score faithfulness`` read is the file read here; docs/benchmarks.md lists the layouts and label words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.layouts import LAYOUTS, Layout, recognize
from learned_metrics.meta_eval.data import _corpus_names, check_columns, per_metric_fields, scored_files, true_corpus
from learned_metrics.meta_eval.options import check
from learned_metrics.meta_eval.rows import (
    ScoredRows,
    check_paired,
    distinct_names,
    duplicates,
    numbered_names,
    read_scored,
)
from learned_metrics.validate import binary_label, is_missing, key

# AggreFact's SOTA subset, as its utils.py defines it.
AGGREFACT_SOTA = ("BART", "PegasusDynamic", "T5", "Pegasus")

SPLIT_WORDS = ("dev", "val", "valid", "validation", "test", "train")
TUNE_SPLITS = ("val", "dev", "valid", "validation")

POSITIVE_WORDS = frozenset({"supported", "consistent", "faithful", "grounded", "correct"})
NEGATIVE_WORDS = frozenset({"unsupported", "not supported", "inconsistent", "unfaithful", "ungrounded", "incorrect"})
LABEL_WORDS = "1/0, true/false, yes/no, supported/unsupported, consistent/inconsistent, correct/incorrect"


def benchmark_label(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> int | None:
    """A 0/1 label from a number, a boolean or a word (None when missing: null, NaN or empty)."""
    word = re.sub(r"[\s_-]+", " ", value.strip().lower()) if isinstance(value, str) else None
    if is_missing(value) or word == "":
        return None
    if word in POSITIVE_WORDS or word in NEGATIVE_WORDS:
        return int(word in POSITIVE_WORDS)
    try:
        return binary_label(value, path=path, row=row, field=field)
    except UserError:
        raise UserError(f"expected a label ({LABEL_WORDS}), got {str(value)[:40]!r}", path=path, row=row,
                        field=field) from None


def split_of_name(path: str | Path) -> str | None:
    """The split a file name says (a word of its stem: dev, val, valid, validation, test, train), else None."""
    found = [w for w in re.split(r"[^a-z0-9]+", Path(path).stem.lower()) if w in SPLIT_WORDS]
    return found[-1] if found else None


@dataclass
class BenchmarkRows:
    """Rows of a benchmark scored by one or more metrics: the same rows, in the same order, for every metric."""

    layout: Layout
    labels: np.ndarray  # 0/1
    datasets: list[str]
    splits: list[str | None]
    keys: list[bytes]  # digest of each row's (grounding, generation) pair
    scores: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)


def read_source(source: str | Path, fields: Sequence[str], *, layout: str, group_field: str | None,
                on_missing: str, published: bool) -> tuple[ScoredRows, list[str], Layout]:
    """One --metric path (a file, or a folder read in name order): its rows, the fields read (with ``published`` also
    every ``<Metric>_score`` column of its first file) and the layout."""
    files = scored_files(source)
    columns = list(check_columns(files[0], (), "benchmark"))  # the header, for the layout
    found = recognize(columns) if layout == "auto" else LAYOUTS[layout]
    if found is None:
        expected = "; ".join(f"{known.name} ({', '.join(known.columns)})" for known in LAYOUTS.values())
        raise UserError(f"not a known benchmark layout (columns: {', '.join(map(str, columns)) or 'none'}); "
                        f"expected {expected}", path=files[0])
    fields = list(dict.fromkeys(fields))
    if published:
        if found.key != "aggrefact":
            raise UserError(f"--published-scores reads AggreFact's <Metric>_score columns; this is {found.name}",
                            path=files[0])
        extra = [c for c in columns if str(c).endswith("_score") and len(str(c)) > 6 and c not in fields]
        if not extra:
            raise UserError("no <Metric>_score columns to read (--published-scores)", path=files[0])
        fields = [f for f in fields if f in columns] + extra
    dataset_field = group_field or found.dataset_field
    for file in files:
        check_columns(file, list(dict.fromkeys([*found.columns, *([dataset_field] if dataset_field else []),
                                                *fields])), found.name)
    corpora = _corpus_names(files, true_corpus) if dataset_field is None else [None] * len(files)
    splits: list[str | None] = []
    models: list[str | None] = []

    def split_and_model(row: dict[str, Any], path: str | Path, row_number: int) -> None:
        named = [key(row[n], path=path, row=row_number, field=n) for n in ("cut", "split")
                 if n in row and not is_missing(row[n]) and str(row[n]).strip()]
        splits.append(None if not found.has_splits else named[0] if named else split_of_name(path))
        models.append(None if is_missing(row.get("model_name")) else str(row["model_name"]))

    out = read_scored(zip(files, corpora, strict=True), fields, "label", group_field=dataset_field,
                      text_fields=(found.premise, found.hypothesis), on_missing=on_missing, label=benchmark_label,
                      extra=split_and_model)
    table_names = dict(found.dataset_names) if group_field is None else {}  # AggreFact's origin: its tables' names
    out.path, out.splits, out.systems = str(source), splits, models
    out.groups = [table_names.get(group, group) for group in out.groups]
    return out, fields, found


def _default_names(paths: Sequence[str | Path], fields: Sequence[str]) -> list[str]:
    """File stems, or the folder above one named after a benchmark (``out/nli/llm_aggrefact`` -> ``nli``: the
    folder layout the docs recommend names the metric one level up); where names repeat, ``folder/stem`` for
    different paths and ``stem:field`` for one file read for several fields."""
    known = {re.sub(r"[^a-z0-9]", "", n.lower()) for layout in LAYOUTS.values() for n in (layout.key, layout.name)}
    bare = [re.sub(r"[^a-z0-9]", "", Path(p).stem.lower()) for p in paths]  # llm_aggrefact, aggre_fact_final, true
    stems = [Path(p).parent.name if (b in known or b.startswith("aggrefact")) and Path(p).parent.name else Path(p).stem
             for p, b in zip(paths, bare, strict=True)]
    names = []
    for path, stem, name in zip(paths, stems, fields, strict=True):
        same = [i for i, s in enumerate(stems) if s == stem]
        label = f"{Path(path).parent.name}/{stem}" if len({str(paths[i]) for i in same}) > 1 else stem
        names.append(label if len({fields[i] for i in same}) == 1 else f"{label}:{name}")
    return numbered_names(names)


def read_benchmark(metrics: Sequence[str | Path], names: Sequence[str] | None = None, *,
                   score_fields: Sequence[str] = ("score",), layout: str = "auto", group_field: str | None = None,
                   on_missing: str = "error", sota: bool = False, published_scores: bool = False) -> BenchmarkRows:
    """Scored benchmark files, one path (file or folder) per metric, all holding the same rows in the same order.
    ``published_scores`` adds every ``<Metric>_score`` column of the first path (AggreFact) as a metric named
    ``<Metric>``; ``sota`` keeps AggreFact's SOTA subset."""
    check(on_missing=on_missing, layout=layout, sota=sota, published_scores=published_scores)
    if not metrics:
        raise UserError("give at least one --metric")
    fields = per_metric_fields(score_fields, metrics)
    wanted = distinct_names(names, len(metrics)) or _default_names(metrics, fields)
    paths = [str(path) for path in metrics]  # each path is read once, for all the fields asked of it
    sources = {path: read_source(path, [f for p, f in zip(paths, fields, strict=True) if p == path], layout=layout,
                                 group_field=group_field, on_missing=on_missing,
                                 published=published_scores and path == paths[0]) for path in dict.fromkeys(paths)}
    first, _, found = sources[paths[0]]
    for source, _, other in sources.values():
        if other != found:
            raise UserError(f"{source.path} is {other.name} but {first.path} is {found.name}")
        check_paired(first, source)
    columns = {name: sources[path][0].values[f] for name, path, f in zip(wanted, paths, fields, strict=True)
               if f in sources[path][0].values}
    keep, notes = duplicates(first, on_missing)
    if published_scores:
        dropped = [name for name in wanted if name not in columns]
        if dropped:
            notes.append(f"{', '.join(dropped)}: no '{fields[0]}' column; judging the published scores only")
        for score_field in [f for f in first.values if f not in fields]:
            name = score_field.removesuffix("_score")
            if name in columns:
                raise UserError(f"published metric '{name}' has the name of a --metric; rename it with --names")
            columns[name] = first.values[score_field]
    labelled = np.array([label is not None for label in first.labels], dtype=bool)
    missing = [] if labelled.all() else [f"dropped {int((~labelled).sum())} row(s) without a label"]
    keep &= labelled
    for name, values in columns.items():
        absent = np.array([value is None for value in values], dtype=bool)
        if (absent & keep).any():
            missing.append(f"dropped {int((absent & keep).sum())} row(s) without a score for {name}")
        keep &= ~absent
    if sota:
        if found.key != "aggrefact":
            raise UserError(f"--sota is AggreFact's SOTA subset; these files are {found.name}")
        sota_rows = np.array([model in AGGREFACT_SOTA for model in first.systems], dtype=bool)
        notes.append(f"AggreFact SOTA subset: {int((sota_rows & keep).sum())} of {int(keep.sum())} rows (model_name "
                     f"in {', '.join(AGGREFACT_SOTA)})")
        keep &= sota_rows
    notes += missing
    if not keep.any():
        raise UserError("no row left to judge (every row lacks a label or a score, or none is in the SOTA subset)",
                        path=first.path)
    kept = first.take(keep)
    return BenchmarkRows(found, np.array(kept.labels, dtype=np.int64), kept.groups, kept.splits, kept.pair_keys(),
                         {name: np.array(values, dtype=np.float64)[keep] for name, values in columns.items()}, notes)
