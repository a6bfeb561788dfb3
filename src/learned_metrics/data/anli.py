"""Phrase-augmented ANLI: the training set of the faithfulness NLI metric.

Generated text often wraps a claim in dialogue ("I think ...", "Sure! Here is what I know: ...") that an NLI model
trained on plain ANLI mistakes for a change of meaning. For every ANLI instance (rounds R1-R3, all splits) one copy
is added whose hypothesis starts with a phrase drawn at random (seeded), followed by the hypothesis with its first
character lower-cased; the label is unchanged and the originals are kept. Validation is augmented too because the
checkpoint is selected on the augmented validation loss.

Two sources map to one schema (:data:`FEATURES`): the Hugging Face dataset ``facebook/anli`` (integer labels named by
its ``ClassLabel``) and a folder in the official release layout (``R1/train.jsonl`` ... with ``e``/``n``/``c``).
Everything runs through ``datasets`` (Arrow on disk, batched ``map``), so the full ANLI (163k training rows) stays far
below 2 GB of RAM.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow as pa

from learned_metrics import validate
from learned_metrics.data.choices import ANLI_HUB_ID as HUB_ID
from learned_metrics.data.choices import DIALOGUE_PHRASES as DIALOGUE_PHRASES
from learned_metrics.data.choices import PHRASE_LISTS, POSITIONS, AnliSettings
from learned_metrics.data.choices import STATEMENT_PHRASES as STATEMENT_PHRASES
from learned_metrics.data.common import check_dataset_output, save_dataset_with_report
from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows
from learned_metrics.labels import NLI_LABELS, canonical_label
from learned_metrics.outputs import scratch_folder

OUTPUT_KIND = "anli_augmented"
ROUNDS = ("R1", "R2", "R3")
# Output split -> (official file stem, Hub split prefix).
SPLITS = {"train": ("train", "train"), "validation": ("dev", "dev"), "test": ("test", "test")}


FEATURES = datasets.Features({
    "premise": datasets.Value("string"), "hypothesis": datasets.Value("string"), "label": datasets.Value("string"),
    "round": datasets.Value("string"), "uid": datasets.Value("string"), "augmented": datasets.Value("bool"),
    "phrase": datasets.Value("string")})
"""The saved schema. ``label`` is a name (entailment/neutral/contradiction), never an index,
so training maps it onto whatever label order the model has."""

_VALID_LETTERS = "e, n, c (or entailment, neutral, contradiction)"
_READ_CHUNK_ROWS = 10_000


# ---------------------------------------------------------------- phrases ---


def lower_first(text: str) -> str:
    """``"The cat"`` -> ``"the cat"``: the hypothesis continues the phrase mid-sentence."""
    return text[:1].lower() + text[1:]


def augment_hypothesis(hypothesis: str, phrase: str, position: str = "prepend") -> str:
    """Attach ``phrase`` to ``hypothesis`` with one space between them.

    ``prepend``: phrase + hypothesis with its first character lower-cased (the paper's setting). ``append``: the
    hypothesis unchanged + phrase (ablation).
    """
    if position == "prepend":
        return f"{phrase} {lower_first(hypothesis.strip())}"
    if position == "append":
        return f"{hypothesis.rstrip()} {phrase}"
    raise UserError(f"unknown position '{position}', expected one of: {', '.join(POSITIONS)}")


def select_phrases(kind: str = "dialogue", subset: int | None = None, seed: int = 42) -> list[str]:
    """The phrases to draw from: the whole list of ``kind``, or a seeded subset of ``subset`` of them.

    The subset keeps the list order, so it reads the same in every report.
    """
    if kind not in PHRASE_LISTS:
        raise UserError(f"unknown phrase list '{kind}', expected one of: {', '.join(PHRASE_LISTS)}")
    phrases = list(PHRASE_LISTS[kind])
    if subset is None:
        return phrases
    if not 1 <= subset <= len(phrases):
        raise UserError(f"--phrase-subset must be between 1 and {len(phrases)} for the '{kind}' list, got {subset}")
    picked = sorted(random.Random(seed).sample(range(len(phrases)), subset))
    return [phrases[i] for i in picked]


def draw_phrase_indices(n_rows: int, n_phrases: int, seed: int, split: str) -> np.ndarray:
    """One phrase index per row, seeded per split so splits do not share a draw sequence.

    Drawn up front (not inside ``map``) so the result does not depend on batch size.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(split.encode("utf-8"))]))
    return rng.integers(0, n_phrases, size=n_rows)


def _augment_batch(batch: dict[str, list], indices: list[int], *, phrases: list[str], choice: np.ndarray,
                   position: str) -> dict[str, list]:
    chosen = [phrases[int(choice[i])] for i in indices]
    batch["hypothesis"] = [augment_hypothesis(h, p, position) for h, p in zip(batch["hypothesis"], chosen, strict=True)]
    batch["phrase"] = chosen
    batch["augmented"] = [True] * len(chosen)
    return batch


def augment_split(dataset: datasets.Dataset, split: str, phrases: list[str], position: str = "prepend",
                  seed: int = 42) -> datasets.Dataset:
    """Originals followed by one augmented copy of each (row ``i + n`` is the copy of row ``i``)."""
    choice = draw_phrase_indices(len(dataset), len(phrases), seed, split)
    # features: ANLI's schema, or any NLI source's (learned_metrics.data.nli)
    augmented = dataset.map(_augment_batch, batched=True, with_indices=True, features=dataset.features,
                            fn_kwargs={"phrases": phrases, "choice": choice, "position": position},
                            desc=f"Augmenting {split}")
    return datasets.concatenate_datasets([dataset, augmented])


# ---------------------------------------------------------------- sources ---


def parse_source(source: str) -> tuple[str, Path | None]:
    """``"anli"`` -> ``("anli", None)``; ``"jsonl:DIR"`` -> ``("jsonl", DIR)``; anything else is a UserError."""
    if source == "anli":
        return "anli", None
    if source.startswith("jsonl:") and source[len("jsonl:") :].strip():
        return "jsonl", Path(source[len("jsonl:") :]).expanduser()
    raise UserError(f"unknown source '{source}', expected 'anli' (the Hugging Face dataset {HUB_ID}) "
                    "or 'jsonl:DIR' (a folder in the official ANLI layout: DIR/R1/train.jsonl, DIR/R1/dev.jsonl, ...)")


def _jsonl_record(row: dict[str, Any], *, path: Path, row_number: int, round_name: str) -> dict[str, Any]:
    uid = validate.row_key(row, "uid", path=path, row_number=row_number)
    premise = validate.row_text(row, "context", path=path, row_number=row_number)
    hypothesis = validate.row_text(row, "hypothesis", path=path, row_number=row_number)
    if "label" not in row:
        raise UserError(f"missing field (expected {_VALID_LETTERS})", path=path, row=row_number, field="label")
    label = canonical_label(row["label"])
    if label not in NLI_LABELS:
        raise UserError(f"unknown label {row['label']!r}, expected {_VALID_LETTERS}", path=path, row=row_number,
                        field="label")
    return {"premise": premise, "hypothesis": hypothesis, "label": label, "round": round_name, "uid": uid,
            "augmented": False, "phrase": None}


def _write_jsonl_split_arrow(files: list[tuple[str, Path]], arrow_path: Path) -> None:
    """Validate rows and stream them into one Arrow file, ``_READ_CHUNK_ROWS`` at a time."""
    schema = FEATURES.arrow_schema
    with pa.OSFile(str(arrow_path), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        chunk: list[dict[str, Any]] = []
        for round_name, path in files:
            for row_number, row in iter_rows(path):
                chunk.append(_jsonl_record(row, path=path, row_number=row_number, round_name=round_name))
                if len(chunk) >= _READ_CHUNK_ROWS:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                    chunk = []
        if chunk:
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))


def official_layout_files(root: Path) -> dict[str, list[tuple[str, Path]]]:
    """``{"train": [("R1", root/R1/train.jsonl), ...], ...}``; every file must exist."""
    if not root.is_dir():
        raise UserError("not a folder; expected the official ANLI layout (R1/train.jsonl, R1/dev.jsonl, ...)",
                        path=root)
    files = {split: [(rnd, root / rnd / f"{stem}.jsonl") for rnd in ROUNDS] for split, (stem, _) in SPLITS.items()}
    for entries in files.values():
        for _, path in entries:
            if not path.is_file():
                raise UserError("file not found (the official ANLI layout has R1-R3 x train/dev/test)", path=path)
    return files


def read_anli_jsonl(root: str | Path, work_dir: str | Path) -> datasets.DatasetDict:
    """Read the official ANLI release folder into :data:`FEATURES`, R1-R3 merged per split.

    Rows are validated as they are read (a bad row raises a UserError naming file, row and field) and written to
    Arrow files in ``work_dir``, which must outlive the returned datasets.
    """
    files = official_layout_files(Path(root))
    splits = {}
    for split, entries in files.items():
        arrow_path = Path(work_dir) / f"anli-{split}.arrow"
        _write_jsonl_split_arrow(entries, arrow_path)
        splits[split] = datasets.Dataset.from_file(str(arrow_path), info=datasets.DatasetInfo(features=FEATURES))
    return datasets.DatasetDict(splits)


def _label_names_of(feature: Any, where: str) -> list[str] | None:
    """Canonical names for integer labels from a ``ClassLabel``; None when labels are already strings."""
    if isinstance(feature, datasets.ClassLabel):
        names = [canonical_label(name) for name in feature.names]
        if sorted(n for n in names if n in NLI_LABELS) != sorted(NLI_LABELS):
            raise UserError(f"{where}: label names {feature.names} do not name entailment/neutral/contradiction")
        return names
    if isinstance(feature, datasets.Value) and feature.dtype in ("string", "large_string"):
        return None
    raise UserError(f"{where}: the 'label' feature is {feature!r} without class names; "
                    "integer labels are mapped only through ClassLabel names, never by position")


def _hub_batch_to_schema(batch: dict[str, list], indices: list[int], *, names: list[str] | None, round_name: str,
                         where: str) -> dict[str, list]:
    out: dict[str, list] = {column: [] for column in FEATURES}
    for i, premise, hypothesis, label, uid in zip(indices, batch["premise"], batch["hypothesis"], batch["label"],
                                                  batch["uid"], strict=True):
        if names is not None:
            if label == -1:  # unlabelled rows are dropped and counted
                continue
            name = names[label] if 0 <= label < len(names) else None
        else:
            name = canonical_label(label)
        if name not in NLI_LABELS:
            raise UserError(f"unknown label {label!r}", path=where, row=i + 1, field="label")
        # in FEATURES order: premise, hypothesis, label, round, uid, augmented, phrase
        for column, value in zip(out, (premise, hypothesis, name, round_name, uid, False, None), strict=True):
            out[column].append(value)
    return out


def load_hub_anli() -> datasets.DatasetDict:
    """Download (or reuse the cached) ``facebook/anli``; failures become a UserError with the alternative."""
    try:
        return datasets.load_dataset(HUB_ID)
    except Exception as exc:  # any hub/network/cache failure is something the user must fix
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"cannot load the Hugging Face dataset {HUB_ID} ({type(exc).__name__}: {message}); "
                        "check the network/HF cache or use --source jsonl:DIR with the official ANLI release") from None


def read_anli_hub() -> tuple[datasets.DatasetDict, dict[str, int]]:
    """``facebook/anli`` in :data:`FEATURES`, R1-R3 merged per split; also rows dropped for label -1 per split."""
    raw = load_hub_anli()
    splits, dropped = {}, {}
    for split, (_, prefix) in SPLITS.items():
        parts = []
        for round_name in ROUNDS:
            name = f"{prefix}_{round_name.lower()}"
            if name not in raw:
                raise UserError(f"{HUB_ID} has no split '{name}' (splits found: {', '.join(raw)})")
            part = raw[name]
            where = f"{HUB_ID}:{name}"
            for column in ("premise", "hypothesis", "label", "uid"):
                if column not in part.column_names:
                    raise UserError(f"{where}: missing column (columns: {', '.join(part.column_names)})", field=column)
            names = _label_names_of(part.features["label"], where)
            parts.append(part.map(_hub_batch_to_schema, batched=True, with_indices=True,
                                  remove_columns=part.column_names, features=FEATURES, desc=f"Reading {name}",
                                  fn_kwargs={"names": names, "round_name": round_name, "where": where}))
            dropped[split] = dropped.get(split, 0) + len(part) - len(parts[-1])
        splits[split] = datasets.concatenate_datasets(parts)
    return datasets.DatasetDict(splits), dropped


# ----------------------------------------------------------------- report ---


def count_split(dataset: datasets.Dataset, by: str = "round") -> dict[str, Any]:
    """Rows, originals/augmented, and counts per ``by`` (round, or source for ``prep nli``), label and phrase."""
    groups: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    phrases: Counter[str] = Counter()
    augmented = 0
    for batch in dataset.select_columns([by, "label", "augmented", "phrase"]).iter(batch_size=_READ_CHUNK_ROWS):
        groups.update(batch[by])
        labels.update(batch["label"])
        phrases.update(p for p in batch["phrase"] if p is not None)
        augmented += sum(batch["augmented"])
    return {"rows": len(dataset), "original": len(dataset) - augmented, "augmented": augmented,
            f"per_{by}": dict(sorted(groups.items())),
            "per_label": {label: labels.get(label, 0) for label in NLI_LABELS},
            "per_phrase": dict(sorted(phrases.items(), key=lambda item: (-item[1], item[0])))}


def augment_splits(splits: dict[str, datasets.Dataset], augmentation: dict[str, Any],
                   s: AnliSettings) -> datasets.DatasetDict:
    """Every split, with one phrase-augmented copy of each row when ``s.augment`` (ANLI and ``prep nli``)."""
    return datasets.DatasetDict({
        split: augment_split(ds, split, augmentation["phrase_list"], s.position, s.seed) if s.augment else ds
        for split, ds in splits.items()})


def augmentation_settings(s: AnliSettings) -> dict[str, Any]:
    """The settings that describe the training data; training copies them into the model card."""
    if not s.augment:
        return {"augment": False, "phrases": None, "position": None, "phrase_subset": None, "subset": None,
                "phrase_list": [], "seed": s.seed}
    phrase_list = select_phrases(s.phrases, s.phrase_subset, s.seed)
    return {"augment": True, "phrases": s.phrases, "position": s.position, "phrase_subset": s.phrase_subset,
            "subset": phrase_list if s.phrase_subset is not None else None, "phrase_list": phrase_list,
            "seed": s.seed}


# ------------------------------------------------------------------ build ---


def build_anli_augmented(source: str, output: str | Path, **settings: Any) -> dict[str, Any]:
    """Build the (augmented) ANLI DatasetDict (train/validation/test) in ``output``; return its report.

    ``settings``: the keywords of :class:`~learned_metrics.data.choices.AnliSettings` (``phrases``, ``position``,
    ``phrase_subset``, ``seed``, ``augment``, ``overwrite``), parsed and checked there as the command's flags are.
    ``output`` is checked before any work (never the source folder or one holding it, never a folder of files we did
    not write; an earlier build is replaced only with ``overwrite``) and appears only when everything is written, so
    a bad row leaves no half-written folder behind.
    """
    kind, root = parse_source(source)
    s = AnliSettings.from_keywords(**settings)
    augmentation = augmentation_settings(s)
    check_dataset_output(output, OUTPUT_KIND, [root], s.overwrite)
    output = Path(output)
    with scratch_folder(output) as work:
        if kind == "jsonl":
            base, dropped = read_anli_jsonl(root, work), {split: 0 for split in SPLITS}
        else:
            base, dropped = read_anli_hub()
        built = augment_splits(base, augmentation, s)
        report = {
            "builder": "anli_augmented",
            "source": source,
            "dataset": HUB_ID if kind == "anli" else str(root),
            "seed": s.seed,
            "augmentation": augmentation,
            "splits": {split: count_split(ds) for split, ds in built.items()},
            "dropped_unlabelled": dropped,
            "features": {name: str(feature.dtype) for name, feature in FEATURES.items()},
        }
        save_dataset_with_report(built, report, output, OUTPUT_KIND, s.overwrite)
    return report
