"""Build the shuffle-task data set for the coherence classifier.

Documents are split into train/validation/test *before* shuffling, so a
document and its shuffles never sit in two splits. Every original becomes a
``coherent`` row and up to N distinct shuffles of it ``incoherent`` rows.
Everything runs through ``datasets`` (Arrow on disk, batched ``map``) so the
full CNN/DM set stays small in memory and is cached.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics import validate
from learned_metrics.data.choices import CNNDM_HUB_ID, SHUFFLE_SET_SOURCES, ShuffleSetSettings
from learned_metrics.data.common import check_dataset_output, datasets_progress_bars_disabled, save_dataset_with_report
from learned_metrics.data.shuffle import distinct_sentence_count, document_rng, shuffled_negatives
from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows
from learned_metrics.labels import COHERENCE_LABELS
from learned_metrics.text.sentences import get_splitter
from learned_metrics.workers import worker_processes

CNNDM_CONFIG = "3.0.0"
SPLITS = ("train", "validation", "test")
OUTPUT_KIND = "shuffle_set"


def parse_source(source: str) -> tuple[str, Path | None]:
    """``"jsonl:docs.jsonl"`` -> ``("jsonl", Path("docs.jsonl"))``; validates the form."""
    if source in ("cnn_dailymail", CNNDM_HUB_ID):
        return "cnn_dailymail", None
    kind, sep, rest = source.partition(":")
    if sep and kind in ("jsonl", "txtdir") and rest:
        path = Path(rest).expanduser()
        if kind == "jsonl" and not path.is_file():
            raise UserError("file not found", path=path)
        if kind == "txtdir" and not path.is_dir():
            raise UserError("directory not found", path=path)
        return kind, path
    raise UserError(f"unknown source '{source}', expected {SHUFFLE_SET_SOURCES}")


# --- reading documents -------------------------------------------------------------------------


def _jsonl_documents(path: str, splitter: str, fingerprint: str) -> Iterator[dict[str, Any]]:
    """Documents of a ``.jsonl`` file: ``sentences`` (list) or ``text``, optional ``id``."""
    split = get_splitter(splitter)
    seen: dict[str, int] = {}
    for row_number, row in iter_rows(path):
        if "sentences" in row:
            sentences = validate.row_sentences(row, "sentences", path=path, row_number=row_number)
        elif "text" in row:
            sentences = split(validate.row_text(row, "text", path=path, row_number=row_number))
        else:
            raise UserError("missing field: expected 'sentences' (list) or 'text'", path=path, row=row_number)
        doc_id = validate.row_key(row, "id", path=path, row_number=row_number) if "id" in row else f"row-{row_number}"
        if doc_id in seen:
            raise UserError(
                f"duplicate id '{doc_id}' (first on row {seen[doc_id]})", path=path, row=row_number, field="id"
            )
        seen[doc_id] = row_number
        yield {"doc_id": doc_id, "sentences": sentences}


def corpus_files(root: Path) -> list[Path]:
    """The ``.txt`` files under ``root``, recursively, sorted; a symlink that leads outside ``root`` is refused.

    Folder symlinks are not descended into (their targets inside the corpus are read anyway), so a
    link to ``/`` or to a sibling corpus cannot pull foreign files into the data set.
    """
    real_root = Path(os.path.realpath(root))
    files = []
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in filenames:
            if not name.endswith(".txt"):
                continue
            file = Path(current) / name
            target = Path(os.path.realpath(file))
            if real_root not in target.parents:
                raise UserError(f"symlink leads outside the corpus folder (to {target}); copy the file into "
                                f"{root} or remove the link", path=file)
            files.append(file)
    return sorted(files)


def _txtdir_documents(path: str, splitter: str, fingerprint: str) -> Iterator[dict[str, Any]]:
    """One document per ``.txt`` file (recursively), id = path relative to the folder."""
    split = get_splitter(splitter)
    root = Path(path)
    for file in corpus_files(root):
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=file) from None
        sentences = split(text)
        if not sentences:
            raise UserError("document is empty", path=file)
        yield {"doc_id": str(file.relative_to(root).with_suffix("")), "sentences": sentences}


def _source_fingerprint(path: Path) -> str:
    """Busts the ``datasets`` generator cache when the input files change."""
    files = [path] if path.is_file() else corpus_files(path)
    return ";".join(f"{f}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)


def _documents_from_generator(kind: str, path: Path, splitter: str):
    import datasets

    generator = _jsonl_documents if kind == "jsonl" else _txtdir_documents
    features = datasets.Features({"doc_id": datasets.Value("string"), "sentences": [datasets.Value("string")]})
    try:
        with datasets_progress_bars_disabled():
            docs = datasets.Dataset.from_generator(
                generator,
                features=features,
                gen_kwargs={"path": str(path), "splitter": splitter, "fingerprint": _source_fingerprint(path)},
            )
    except datasets.exceptions.DatasetGenerationError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, UserError):
            raise cause from None
        raise
    if len(docs) == 0:
        raise UserError("no documents found", path=path)
    return docs


def split_documents(docs, val_fraction: float, test_fraction: float, seed: int):
    """Seeded document-level split; each split keeps the input order."""
    import datasets

    if not (0 < val_fraction < 1 and 0 <= test_fraction < 1 and val_fraction + test_fraction < 1):
        raise UserError("--val-fraction must be in (0, 1), --test-fraction in [0, 1), and they must sum to less than 1")
    validate.int_at_least(seed, 0, "--seed")
    n = len(docs)
    perm = np.random.default_rng(seed).permutation(n)
    n_test, n_val = round(n * test_fraction), round(n * val_fraction)
    parts = {"test": perm[:n_test], "validation": perm[n_test : n_test + n_val], "train": perm[n_test + n_val :]}
    names = [name for name in SPLITS if name != "test" or test_fraction > 0]  # --test-fraction 0: no test split
    return datasets.DatasetDict({name: docs.select(np.sort(parts[name])) for name in names})


def load_cnndm_documents(splitter: str = "newline"):
    """CNN/DM 3.0.0 ``highlights`` (already one sentence per line) with its own splits."""
    import datasets

    try:
        raw = datasets.load_dataset(CNNDM_HUB_ID, CNNDM_CONFIG)
    except Exception as exc:  # offline machines, missing cache
        raise UserError(
            f"cannot load {CNNDM_HUB_ID} ({CNNDM_CONFIG}): {type(exc).__name__}: {str(exc).splitlines()[0]}; "
            "check network access or pre-download it into the HF cache"
        ) from None
    split = get_splitter(splitter)

    def to_documents(batch: dict[str, list]) -> dict[str, list]:
        return {"doc_id": [str(i) for i in batch["id"]], "sentences": [split(h) for h in batch["highlights"]]}

    return datasets.DatasetDict(
        {name: raw[name].map(to_documents, batched=True, remove_columns=raw[name].column_names) for name in SPLITS}
    )


# --- building the shuffle set -----------------------------------------------------------------


def _make_pairs_fn(shuffles_per_doc: int, seed: int, joiner: str):
    coherent, incoherent = COHERENCE_LABELS.index("coherent"), COHERENCE_LABELS.index("incoherent")

    def make_pairs(batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {"doc_id": [], "text": [], "label": []}
        for doc_id, sentences in zip(batch["doc_id"], batch["sentences"], strict=True):
            negatives = shuffled_negatives(sentences, shuffles_per_doc, document_rng(seed, doc_id), joiner)
            if not negatives:
                continue
            out["doc_id"] += [doc_id] * (1 + len(negatives))
            out["text"] += [joiner.join(sentences), *negatives]
            out["label"] += [coherent] + [incoherent] * len(negatives)
        return out

    return make_pairs


def _count_skipped(docs) -> int:
    return sum(distinct_sentence_count(s) < 2 for batch in docs.iter(batch_size=10_000) for s in batch["sentences"])


def build_shuffle_set(source: str, output: str | os.PathLike, **settings: Any) -> dict[str, Any]:
    """Build and save the shuffle set; returns the report written beside it.

    ``settings``: the keywords of :class:`~learned_metrics.data.choices.ShuffleSetSettings` (``shuffles_per_doc``,
    ``seed``, ``val_fraction``, ``test_fraction``, ``splitter``, ``joiner``, ``max_docs_per_split``, ``num_proc``,
    ``overwrite``), parsed and checked there as the command's flags are. ``output`` is checked before any work
    (see :mod:`learned_metrics.outputs`): never the source or a folder holding it, never a folder of files we did
    not write; an earlier shuffle set there is replaced only with ``overwrite``.
    """
    import datasets

    s = ShuffleSetSettings.from_keywords(**settings)
    kind, path = parse_source(source)
    check_dataset_output(output, OUTPUT_KIND, [path], s.overwrite)
    if kind == "cnn_dailymail":
        docs = load_cnndm_documents(s.splitter)
    else:
        docs = split_documents(_documents_from_generator(kind, path, s.splitter), s.val_fraction, s.test_fraction,
                               s.seed)
    if s.max_docs_per_split:
        docs = datasets.DatasetDict({k: v.select(range(min(len(v), s.max_docs_per_split))) for k, v in docs.items()})
    _check_documents_per_split(docs, s.val_fraction, s.test_fraction)

    features = datasets.Features(
        {
            "doc_id": datasets.Value("string"),
            "text": datasets.Value("string"),
            "label": datasets.ClassLabel(names=list(COHERENCE_LABELS)),
        }
    )
    make_pairs = _make_pairs_fn(s.shuffles_per_doc, s.seed, s.joiner)
    with worker_processes():  # num_proc's pool (workers and manager) ends with this process, also on kill -9
        built = datasets.DatasetDict(
            {
                name: split.map(
                    make_pairs,
                    batched=True,
                    remove_columns=split.column_names,
                    features=features,
                    num_proc=s.num_proc,
                    desc=f"shuffling {name}",
                )
                for name, split in docs.items()
            }
        )
    report = _report(source, docs, built, s, kind)
    _check_rows_per_split(report)
    save_dataset_with_report(built, report, output, OUTPUT_KIND, s.overwrite)
    return report


def _check_documents_per_split(docs, val_fraction: float, test_fraction: float) -> None:
    """Every split must get documents; a saved set with an empty split cannot be trained on."""
    total = sum(len(split) for split in docs.values())
    fractions = {"validation": ("--val-fraction", val_fraction), "test": ("--test-fraction", test_fraction)}
    for name, split in docs.items():
        if len(split):
            continue
        if name in fractions:
            option, value = fractions[name]
            why = f"{total} document(s) x {option} {value} rounds to 0; add documents or raise {option}"
        else:
            why = f"the other splits took all {total} document(s); add documents or lower the fractions"
        raise UserError(f"split '{name}' would have no documents: {why}")


def _check_rows_per_split(report: dict[str, Any]) -> None:
    for name, rows in report["rows"].items():
        if rows["total"] == 0:
            documents = report["documents_per_split"][name]
            raise UserError(
                f"split '{name}' would have no rows: none of its {documents} document(s) has 2 or more distinct "
                "sentences, so none can be shuffled (check --splitter: 'newline' needs one sentence per line)"
            )


def _report(source: str, docs, built, s: ShuffleSetSettings, kind: str) -> dict:
    rows = {}
    for name, split in built.items():
        labels = split.data.column("label").to_numpy()  # Arrow column: no Python list of every row
        counts = {label: int((labels == i).sum()) for i, label in enumerate(COHERENCE_LABELS)}
        rows[name] = {**counts, "total": len(split)}
    skipped = {name: _count_skipped(split) for name, split in docs.items()}
    return {
        "kind": "shuffle_set",
        "source": source,
        "settings": {
            "shuffles_per_doc": s.shuffles_per_doc,
            "seed": s.seed,
            "val_fraction": s.val_fraction if kind != "cnn_dailymail" else None,
            "test_fraction": s.test_fraction if kind != "cnn_dailymail" else None,
        },
        "preprocessing": {"splitter": s.splitter, "joiner": s.joiner},
        "documents_read": sum(len(s) for s in docs.values()),
        "documents_per_split": {name: len(split) for name, split in docs.items()},
        "skipped_fewer_than_2_distinct_sentences": {**skipped, "total": sum(skipped.values())},
        "rows": rows,
        "label_names": list(COHERENCE_LABELS),
    }
