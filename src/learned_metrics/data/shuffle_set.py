"""Build the shuffle-task data set for the coherence classifier: every original a ``coherent`` row, up to N distinct
shuffles of it ``incoherent`` rows. Documents are split *before* shuffling, so a document and its shuffles never sit
in two splits; everything runs through ``datasets`` (Arrow on disk, batched ``map``), so CNN/DM stays small in memory.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from learned_metrics import __version__, validate
from learned_metrics.data.choices import CNNDM_HUB_ID, SHUFFLE_SET_SOURCES, ShuffleSetSettings
from learned_metrics.data.common import SPLITS, drop_repeats, normalised, save_dataset_with_report
from learned_metrics.data.shuffle import document_rng, shuffled_negatives
from learned_metrics.data.sources import Part, SplitWriter, check_named_splits, load_hub, location_parts, missing_fields
from learned_metrics.errors import UserError
from learned_metrics.io import display_text, dump_json, is_hidden, iter_rows
from learned_metrics.labels import COHERENCE_LABELS
from learned_metrics.outputs import check_outputs, folder_output, scratch_folder
from learned_metrics.provenance import sha256_of
from learned_metrics.settings import takes
from learned_metrics.text.sentences import get_splitter
from learned_metrics.workers import worker_processes

CNNDM_CONFIG = "3.0.0"
OUTPUT_KIND = "shuffle_set"
DOCUMENT_FEATURES = datasets.Features({"doc_id": datasets.Value("string"), "sentences": [datasets.Value("string")]})


def parse_source(source: str) -> tuple[str, Path | None]:
    """``"jsonl:docs.jsonl"`` -> ``("jsonl", Path("docs.jsonl"))``, ``"txtdir:DIR"`` -> ``("txtdir", DIR)``; the
    forms :func:`read_documents` reads (``hf:``, ``disk:``, a file or folder) -> ``("parts", local path or None)``."""
    if source in ("cnn_dailymail", CNNDM_HUB_ID):
        return "cnn_dailymail", None
    kind, sep, rest = source.partition(":")
    if sep and kind in ("jsonl", "txtdir") and rest:
        path = Path(rest).expanduser()
        if not (path.is_file() if kind == "jsonl" else path.is_dir()):
            raise UserError("file not found" if kind == "jsonl" else "directory not found", path=path)
        return kind, path
    if sep and kind in ("hf", "disk") and rest:
        return "parts", None if kind == "hf" else Path(rest).expanduser()
    path = Path(source).expanduser()
    if path.is_file() or path.is_dir():
        return "parts", path
    raise UserError(f"unknown source '{source}': it is not a file or folder here; expected {SHUFFLE_SET_SOURCES}")


def _check_columns(part: Part, s: ShuffleSetSettings) -> None:
    """A file's first row (or a Hub split's columns) holds every field asked for, and without --text-field or
    --sentences-field a 'text' or 'sentences' field; else one line naming the file, its fields and the option."""
    options = ("text_field", "sentences_field", "id_field")
    missing_fields(part, [(getattr(s, option), option) for option in options if getattr(s, option) is not None])
    if s.text_field is None and s.sentences_field is None and not {"text", "sentences"} & set(part.columns or []):
        raise UserError(f"no field 'text' or 'sentences' (fields: {', '.join(map(str, part.columns or [])) or 'none'})"
                        "; pass --text-field NAME or --sentences-field NAME", path=part.where)


def _document(row: dict[str, Any], number: int, where: str, s: ShuffleSetSettings, split: Any,
              tag: str | None) -> dict[str, Any]:
    """One row as ``{doc_id, sentences}``: the sentences field as given, or the text field through the splitter;
    without either option a row's 'sentences' (list) or else its 'text', as ``jsonl:PATH`` always read. Without an
    id field the id is ``row-N``, or ``TAG:row-N`` when several files or splits are read."""
    text, sentences_field, id_field = s.text_field, s.sentences_field, s.id_field
    if sentences_field is not None or (text is None and "sentences" in row):
        sentences = validate.row_sentences(row, sentences_field or "sentences", path=where, row_number=number)
    elif text is not None or "text" in row:
        sentences = split(validate.row_text(row, text or "text", path=where, row_number=number))
    else:
        raise UserError("missing field: expected 'sentences' (list) or 'text'", path=where, row=number)
    id_field = id_field or ("id" if "id" in row else None)
    default_id = f"{tag}:row-{number}" if tag else f"row-{number}"
    doc_id = validate.row_key(row, id_field, path=where, row_number=number) if id_field else default_id
    return {"doc_id": doc_id, "sentences": sentences}


def corpus_files(root: Path) -> list[Path]:
    """The ``.txt`` files under ``root``, recursively, sorted; a symlink that leads outside ``root`` is refused and
    folder symlinks are not descended into, so a link to ``/`` or a sibling corpus cannot pull in foreign files."""
    real_root = Path(os.path.realpath(root))
    files = []
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(name for name in dirnames if not is_hidden(Path(name)))  # as io.data_files
        for name in (name for name in filenames if name.endswith(".txt") and not is_hidden(Path(name))):
            file = Path(current) / name
            target = Path(os.path.realpath(file))
            if real_root not in target.parents:
                raise UserError(f"symlink leads outside the corpus folder (to {target}); copy the file into "
                                f"{root} or remove the link", path=file)
            files.append(file)
    return sorted(files)


def _txtdir_documents(root: Path, files: list[Path], splitter: str, work: Path) -> dict[str, Any]:
    """One document per ``.txt`` file of :func:`corpus_files`, id = path relative to the folder, streamed into the
    split ``all`` of Arrow files in ``work``."""
    split, writer = get_splitter(splitter), SplitWriter(work, "txtdir", DOCUMENT_FEATURES)
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=file) from None
        sentences = split(text)
        if not sentences:
            raise UserError("document is empty", path=file)
        # a name that is not UTF-8 is written as every output writes it (\xNN): Arrow takes UTF-8 only
        writer.add("all", {"doc_id": display_text(str(file.relative_to(root).with_suffix(""))), "sentences": sentences})
    return writer.close()


def _identity(where: str, dataset: datasets.Dataset | None = None) -> list:
    """What a source part is, for the document cache: a dataset's own fingerprint, else the file's path as named
    (ids come from it), its target and the SHA-256 of its bytes: an edited file is read again, also one whose size
    and modification time were kept (``cp -p``, ``rsync -a``, ``touch -r``). Hashing reads the bytes once, far
    cheaper than the sentence splitting the cache saves."""
    if dataset is not None:
        return [where, dataset._fingerprint]
    return [where, os.path.realpath(where), sha256_of([Path(where)])]


def cached_documents(identity: list, s: ShuffleSetSettings, read: Callable[[], dict[str, Any]],
                     work: Path) -> dict[str, Any]:
    """The documents ``read()`` returns (split name -> Dataset), kept in the datasets cache under the sources'
    identity and the reading settings: splitting every text into sentences is the slow part of a build (pysbd:
    minutes on a large corpus), and a rebuild with another --seed, fraction or shuffle count reads the same. A hit
    is copied into ``work`` first, so what ``datasets`` derives from it (map caches) goes with the scratch folder."""
    library = importlib.metadata.version("pysbd") if s.splitter == "pysbd" else None  # another pysbd, other splits
    fields = [s.splitter, library, s.text_field, s.sentences_field, s.id_field, __version__]
    key = hashlib.sha256(dump_json([identity, fields], compact=True).encode()).hexdigest()[:32]
    folder = Path(datasets.config.HF_DATASETS_CACHE) / "learned_metrics_documents" / key
    if (folder / "dataset_dict.json").is_file():
        copy = work / f"documents-{key}"
        try:
            shutil.copytree(folder, copy)
            return dict(datasets.load_from_disk(str(copy)))
        except Exception:  # noqa: BLE001 - a damaged (or concurrently replaced) entry is read again from the sources
            shutil.rmtree(copy, ignore_errors=True)
    documents = read()
    if not documents:
        return documents
    partial = folder.with_name(f".{key}.{os.getpid()}.partial")
    quiet = datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # a cache write, not a step of the build worth a bar
    try:
        datasets.DatasetDict(documents).save_to_disk(str(partial))
        if folder.exists():  # a damaged entry of ours (the key names only what we write)
            shutil.rmtree(folder)
        os.replace(partial, folder)
    except OSError:  # a read-only cache, a full disk or a concurrent build: the documents are still good
        shutil.rmtree(partial, ignore_errors=True)
    finally:
        if not quiet:
            datasets.utils.enable_progress_bars()
    return documents


def read_documents(location: str, s: ShuffleSetSettings, work: Path,
                   parts: list[Part] | None = None) -> tuple[Any, str, set[str]]:
    """The documents of a file, folder, ``disk:`` or ``hf:`` source (or of ``parts``) per split, streamed into Arrow
    files in ``work``, where the splits came from: ``names`` (split names), ``seed`` (none named: the seeded
    document split) or ``names+seed`` (no validation named: drawn from the named train split by the seed), and the
    splits the seed drew from one set of documents."""
    split = get_splitter(s.splitter)
    parts = location_parts(location, SHUFFLE_SET_SOURCES) if parts is None else parts
    check_named_splits(parts, "this source", "rename it, or put the files in one folder per split")
    root = Path(location.removeprefix("disk:")).expanduser()

    def read() -> dict[str, Any]:
        writer, seen = SplitWriter(work, "documents", DOCUMENT_FEATURES), {}
        for part in parts:
            tag = None if len(parts) == 1 else (part.where.rsplit(":", 1)[-1] if part.dataset is not None
                                                else display_text(str(Path(part.where).relative_to(root))))
            for i, (number, row) in enumerate(part.rows):
                if i == 0:  # the first row names the fields of a file; a Hub split's columns are known
                    part.columns = part.columns or list(row)
                    _check_columns(part, s)
                doc = _document(row, number, part.where, s, split, tag)
                if part.dataset is None:  # a file's ids are unique in its split
                    first = seen.setdefault(part.split, {}).setdefault(doc["doc_id"], (part.where, number))
                    if first != (part.where, number):
                        at = f"row {first[1]}" if first[0] == part.where else f"{first[0]} row {first[1]}"
                        raise UserError(f"duplicate id '{doc['doc_id']}' (first on {at})", path=part.where,
                                        row=number, field=s.id_field or "id")
                writer.add(part.split or "unsplit", doc)
        return writer.close()

    identity = [[part.split, *_identity(part.where, part.dataset)] for part in parts]
    written = cached_documents([location, identity], s, read, work)
    empty = next((p for p in parts if (p.split or "unsplit") not in written), None)
    if empty is not None:
        raise UserError("no documents found", path=empty.where)
    docs = {None if name == "unsplit" else name: found for name, found in written.items()}
    if None in docs:
        drawn = split_documents(docs[None], s.val_fraction, s.test_fraction, s.seed)
        return drawn, "seed", set(drawn)
    if "train" not in docs:
        raise UserError(f"no train split in {location} (it names {', '.join(sorted(docs))}); name a train file, "
                        "folder or split")
    if "validation" in docs:
        return datasets.DatasetDict({name: docs[name] for name in SPLITS if name in docs}), "names", set()
    drawn = split_documents(docs["train"], s.val_fraction, 0.0 if "test" in docs else s.test_fraction, s.seed)
    merged = {**drawn, **{name: split for name, split in docs.items() if name != "train"}}
    return datasets.DatasetDict({name: merged[name] for name in SPLITS if name in merged}), "names+seed", set(drawn)


def _sentence_multiset(sentences: list[str], *_: Any) -> str:
    """A document as its sentences in any order (each whitespace-normalised): a reordered copy of a document is one
    of its shuffles, so for the split rule it is the same document."""
    return "\x00".join(sorted(map(normalised, sentences)))


def shared_documents(docs, drawn: set[str], where: str) -> tuple[Any, dict[str, int]]:
    """Documents in two splits: the same text (the sentences, whitespace-normalised) or the same sentences in
    another order (one's original is the other's shuffle). Between splits the seed drew from one set of documents
    (``drawn``) they are that set's duplicates: dropped from the lower split (train < validation < test) and counted.
    Any other is refused in one line naming the splits, how many documents and ``where``: a document in two splits
    leaks its shuffles into evaluation."""
    columns = ("sentences", "doc_id")
    kept, dropped, repeats = drop_repeats(docs, SPLITS, columns, lambda sentences, _: normalised(" ".join(sentences)))
    kept, reordered, more = drop_repeats(kept, SPLITS, columns, _sentence_multiset)
    dropped = {split: n + reordered.get(split, 0) for split, n in dropped.items()}
    shared = [repeat for repeat in repeats + more if not {repeat[0], repeat[2]} <= drawn]
    if shared:
        counts = ", ".join(f"{n} document(s) of {low} also in {high}"
                           for (low, high), n in Counter((split, other) for split, _, other, _ in shared).items())
        split, doc_id, other, other_id = shared[0]
        raise UserError(f"the same document in two splits: {counts} (same sentences, whitespace aside; e.g. "
                        f"'{doc_id}' ({split}) and '{other_id}' ({other})); remove the duplicates from one split",
                        path=where)
    return datasets.DatasetDict(kept), dropped


def _multiset_key(sentences: list[str]) -> str:
    return hashlib.blake2b(_sentence_multiset(sentences).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def reordered_originals(split, joiner: str) -> dict[str, frozenset[str]]:
    """The originals (joined, whitespace-normalised) of the documents of one split that another document of it holds
    in another order, by :func:`_multiset_key`: no shuffle may be one of them, or the split holds that text under
    both labels. Usually empty."""
    first: dict[str, str] = {}
    texts: dict[str, set[str]] = {}
    for batch in split.iter(batch_size=10_000):
        for sentences in batch["sentences"]:
            key, text = _multiset_key(sentences), normalised(joiner.join(sentences))
            seen = first.setdefault(key, text)
            if seen != text:
                texts.setdefault(key, {seen}).add(text)
    return {key: frozenset(group) for key, group in texts.items()}


def split_documents(docs, val_fraction: float, test_fraction: float, seed: int):
    """Seeded document-level split; each split keeps the input order."""
    if not (0 < val_fraction < 1 and 0 <= test_fraction < 1 and val_fraction + test_fraction < 1):
        raise UserError("--val-fraction must be in (0, 1), --test-fraction in [0, 1), and they must sum to less than 1")
    validate.int_at_least(seed, 0, "--seed")
    perm = np.random.default_rng(seed).permutation(len(docs))
    n_test, n_val = round(len(docs) * test_fraction), round(len(docs) * val_fraction)
    parts = {"test": perm[:n_test], "validation": perm[n_test : n_test + n_val], "train": perm[n_test + n_val :]}
    names = [name for name in SPLITS if name != "test" or test_fraction > 0]  # --test-fraction 0: no test split
    return datasets.DatasetDict({name: docs.select(np.sort(parts[name])) for name in names})


def load_cnndm_documents(splitter: str = "newline"):
    """CNN/DM 3.0.0 ``highlights`` (already one sentence per line) with its own splits."""
    raw = load_hub(f"{CNNDM_HUB_ID}:{CNNDM_CONFIG}")
    split = get_splitter(splitter)

    def to_documents(batch: dict[str, list]) -> dict[str, list]:
        return {"doc_id": [str(i) for i in batch["id"]], "sentences": [split(h) for h in batch["highlights"]]}

    return datasets.DatasetDict({name: raw[name].map(to_documents, batched=True, remove_columns=raw[name].column_names)
                                 for name in SPLITS})


def _make_pairs(batch: dict[str, list], shuffles_per_doc: int, seed: int, joiner: str,
                avoid: dict[str, frozenset[str]] | None = None) -> dict[str, list]:
    """Each document with 2+ distinct sentences as a coherent row followed by its shuffles as incoherent rows; no
    shuffle is one of the split's originals that another of its documents holds in another order (``avoid``, from
    :func:`reordered_originals`)."""
    coherent, incoherent = COHERENCE_LABELS.index("coherent"), COHERENCE_LABELS.index("incoherent")
    out: dict[str, list] = {"doc_id": [], "text": [], "label": []}
    for doc_id, sentences in zip(batch["doc_id"], batch["sentences"], strict=True):
        others = avoid.get(_multiset_key(sentences), frozenset()) if avoid else frozenset()
        negatives = shuffled_negatives(sentences, shuffles_per_doc, document_rng(seed, doc_id), joiner, others)
        if not negatives:
            continue
        out["doc_id"] += [doc_id] * (1 + len(negatives))
        out["text"] += [joiner.join(sentences), *negatives]
        out["label"] += [coherent] + [incoherent] * len(negatives)
    return out


@takes(ShuffleSetSettings)
def build_shuffle_set(source: str, output: str | os.PathLike, *, settings: ShuffleSetSettings) -> dict[str, Any]:
    """Build and save the shuffle set; returns the report written beside it. The settings are the fields of
    :class:`~learned_metrics.data.choices.ShuffleSetSettings`, as keywords or one ``settings=`` object; ``output``
    is checked before any work."""
    s = settings
    kind, path = parse_source(source)
    check_outputs([folder_output(output, OUTPUT_KIND)], inputs=[path], overwrite=s.overwrite)
    with scratch_folder(output) as work:
        if kind == "cnn_dailymail":
            docs, splits_from = load_cnndm_documents(s.splitter), "names"
            drawn = set(SPLITS)  # a published set's own splits: its shared documents are dropped, not refused
        elif kind == "txtdir":
            files = corpus_files(path)  # walked once: the cache key and the reading
            identity = [str(path), [_identity(str(file)) for file in files]]
            read = functools.partial(_txtdir_documents, path, files, s.splitter, work)
            if not (written := cached_documents(identity, s, read, work)):
                raise UserError("no documents found", path=path)
            docs, splits_from = split_documents(written["all"], s.val_fraction, s.test_fraction, s.seed), "seed"
            drawn = set(docs)
        elif kind == "jsonl":  # one file whose name decides no split
            docs, splits_from, drawn = read_documents(str(path), s, work, [Part(str(path), None, iter_rows(path))])
        else:
            docs, splits_from, drawn = read_documents(source, s, work)
            if source.startswith("hf:"):  # a Hub set cannot be edited: its shared documents are dropped
                drawn = set(SPLITS)
        docs, dropped = shared_documents(docs, drawn, display_text(str(path or source)))
        if s.max_docs_per_split:
            docs = datasets.DatasetDict({k: v.select(range(min(len(v), s.max_docs_per_split)))
                                         for k, v in docs.items()})
        empty = next((name for name, split in docs.items() if len(split) == 0), None)
        if empty is not None:  # a saved set with an empty split cannot be trained on
            total = sum(len(split) for split in docs.values())
            option, value = {"validation": ("--val-fraction", s.val_fraction),
                             "test": ("--test-fraction", s.test_fraction)}.get(empty, (None, None))
            why = (f"{total} document(s) x {option} {value} rounds to 0; add documents or raise {option}" if option else
                   f"the other splits took all {total} document(s); add documents or lower the fractions")
            raise UserError(f"split '{empty}' would have no documents: {why}")
        features = datasets.Features({"doc_id": datasets.Value("string"), "text": datasets.Value("string"),
                                      "label": datasets.ClassLabel(names=list(COHERENCE_LABELS))})
        shuffling = {"shuffles_per_doc": s.shuffles_per_doc, "seed": s.seed, "joiner": s.joiner}
        with worker_processes():  # num_proc's pool (workers and manager) ends with this process, also on kill -9
            built = datasets.DatasetDict({
                name: split.map(_make_pairs, batched=True, remove_columns=split.column_names, features=features,
                                num_proc=s.num_proc, desc=f"shuffling {name}",
                                fn_kwargs={**shuffling, "avoid": reordered_originals(split, s.joiner)})
                for name, split in docs.items()})
        report = _report(source, docs, built, s, splits_from, dropped)
        for name, rows in report["rows"].items():
            if rows["total"] == 0:
                raise UserError(f"split '{name}' would have no rows: none of its "
                                f"{report['documents_per_split'][name]} document(s) has 2 or more distinct sentences, "
                                "so none can be shuffled (check --splitter: 'newline' needs one sentence per line)")
        save_dataset_with_report(built, report, output, OUTPUT_KIND, s.overwrite)
        return report


def _report(source: str, docs, built, s: ShuffleSetSettings, splits_from: str, dropped: dict[str, int]) -> dict:
    rows = {}
    for name, split in built.items():
        labels = split.data.column("label").to_numpy()  # Arrow column: no Python list of every row
        counts = {label: int((labels == i).sum()) for i, label in enumerate(COHERENCE_LABELS)}
        rows[name] = {**counts, "total": len(split)}
    skipped = {name: sum(len(set(sentences)) < 2 for batch in split.iter(batch_size=10_000)
                         for sentences in batch["sentences"]) for name, split in docs.items()}
    unshuffled = {name: len(split) - skipped[name] - rows[name]["coherent"] for name, split in docs.items()}
    return {"kind": "shuffle_set", "source": source,
            "settings": s.affecting(lambda spec: splits_from != "names" or not spec.name.endswith("_fraction")),
            "splits_from": splits_from, "preprocessing": {"splitter": s.splitter, "joiner": s.joiner},
            "documents_read": sum(len(split) for split in docs.values()) + sum(dropped.values()),  # before drops
            "documents_per_split": {name: len(split) for name, split in docs.items()},
            "skipped_fewer_than_2_distinct_sentences": {**skipped, "total": sum(skipped.values())},
            # 2+ distinct sentences, yet every ordering is the original's text or another document's original
            "skipped_no_distinct_shuffle": {**unshuffled, "total": sum(unshuffled.values())},
            "dropped_shared_documents": {**dropped, "total": sum(dropped.values())},
            "rows": rows, "label_names": list(COHERENCE_LABELS)}
