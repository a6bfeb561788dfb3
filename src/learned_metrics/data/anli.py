"""Phrase-augmented ANLI, the faithfulness metric's training set (docs/nli_data.md says what and why): generated
text wraps claims in dialogue ("I think ...") that plain ANLI models mistake for a change of meaning, so every
instance (R1-R3, all splits, validation too) gets one copy behind a seeded random phrase; rows stream into Arrow.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from learned_metrics import validate
from learned_metrics.data.choices import ANLI_HUB_ID as HUB_ID
from learned_metrics.data.choices import DIALOGUE_PHRASES as DIALOGUE_PHRASES
from learned_metrics.data.choices import PHRASE_LISTS, POSITIONS, AnliSettings
from learned_metrics.data.choices import STATEMENT_PHRASES as STATEMENT_PHRASES
from learned_metrics.data.common import SPLITS as SPLIT_ORDER
from learned_metrics.data.common import drop_repeats, pair_text, save_dataset_with_report, text_key
from learned_metrics.data.sources import CHUNK, Part, SplitWriter, dataset_parts, load_hub
from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows
from learned_metrics.labels import NLI_LABELS, canonical_label
from learned_metrics.outputs import check_outputs, folder_output, scratch_folder
from learned_metrics.settings import takes

OUTPUT_KIND = "anli_augmented"
ROUNDS = ("R1", "R2", "R3")
SPLITS = {"train": "train", "validation": "dev", "test": "test"}  # output split -> file stem and Hub split prefix


def nli_features(by: str) -> datasets.Features:
    """The saved schema, ``by`` naming where a row came from (round, source); ``label`` is a name, never an index,
    so training maps it onto whatever label order the model has."""
    string = datasets.Value("string")
    return datasets.Features({"premise": string, "hypothesis": string, "label": string, by: string, "uid": string,
                              "augmented": datasets.Value("bool"), "phrase": string})


FEATURES = nli_features("round")

_VALID_LETTERS = "e, n, c (or entailment, neutral, contradiction)"


def lower_first(text: str) -> str:
    """``"The cat"`` -> ``"the cat"``: the hypothesis continues the phrase mid-sentence."""
    return text[:1].lower() + text[1:]


def augment_hypothesis(hypothesis: str, phrase: str, position: str = "prepend") -> str:
    """Attach ``phrase`` to ``hypothesis`` with one space: ``prepend`` (the paper's) lower-cases the hypothesis's
    first character, ``append`` (ablation) leaves it unchanged."""
    if validate.one_of(position, POSITIONS, "position") == "prepend":
        return f"{phrase} {lower_first(hypothesis.strip())}"
    return f"{hypothesis.rstrip()} {phrase}"


def select_phrases(kind: str = "dialogue", subset: int | None = None, seed: int = 42) -> list[str]:
    """The phrases to draw from: the whole list of ``kind``, or a seeded subset of ``subset`` of them in list order
    (so it reads the same in every report)."""
    phrases = list(PHRASE_LISTS[validate.one_of(kind, tuple(PHRASE_LISTS), "phrase list")])
    if subset is None:
        return phrases
    if not 1 <= subset <= len(phrases):
        raise UserError(f"--phrase-subset must be between 1 and {len(phrases)} for the '{kind}' list, got {subset}")
    picked = sorted(random.Random(seed).sample(range(len(phrases)), subset))
    return [phrases[i] for i in picked]


def _augment_batch(batch: dict[str, list], indices: list[int], *, phrases: list[str], choice: np.ndarray,
                   position: str) -> dict[str, list]:
    chosen = [phrases[int(choice[i])] for i in indices]
    batch["hypothesis"] = [augment_hypothesis(h, p, position) for h, p in zip(batch["hypothesis"], chosen, strict=True)]
    batch["phrase"] = chosen
    batch["augmented"] = [True] * len(chosen)
    return batch


def augment_split(dataset: datasets.Dataset, split: str, phrases: list[str], position: str = "prepend",
                  seed: int = 42, choice: np.ndarray | None = None) -> datasets.Dataset:
    """Originals followed by one augmented copy of each (row ``i + n`` is the copy of row ``i``); ``choice``: the
    phrase index of each row (default: :func:`draw_phrases`, with no pair of another split to keep out)."""
    choice = draw_phrases(len(dataset), split, len(phrases), seed) if choice is None else choice
    augmented = dataset.map(_augment_batch, batched=True, with_indices=True, features=dataset.features,
                            fn_kwargs={"phrases": phrases, "choice": choice, "position": position},
                            desc=f"Augmenting {split}")
    return datasets.concatenate_datasets([dataset, augmented])


def draw_phrases(rows: int, split: str, phrases: int, seed: int) -> np.ndarray:
    """One phrase index per row, seeded per split (splits do not share a draw sequence), drawn up front so the
    result does not depend on the batch size of ``map``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(split.encode("utf-8"))]))
    return rng.integers(0, phrases, size=rows)


def _pairs(dataset: datasets.Dataset):
    for batch in dataset.select_columns(["premise", "hypothesis", "uid"]).iter(batch_size=CHUNK):
        yield from zip(batch["premise"], batch["hypothesis"], batch["uid"], strict=True)


def augment_splits(splits: dict[str, datasets.Dataset], phrases: list[str], position: str, seed: int
                   ) -> tuple[dict[str, datasets.Dataset], dict[str, int]]:
    """Every split with one augmented copy of each row, no pair of one split in another: a copy whose pair
    (whitespace-normalised, as shared pairs are compared) is an original of another split, or a copy already made
    in a higher split (test > validation > train), takes the next phrase of the list after its seeded draw. Returns
    the splits and the copies whose phrase was redrawn, per split; a row that no phrase keeps apart is refused."""
    own = {split: [text_key(pair_text(p, h)) for p, h, _ in _pairs(ds)] for split, ds in splits.items()}
    originals: dict[str, dict[bytes, str]] = {
        split: dict(zip(own[split], ds["uid"], strict=True)) for split, ds in splits.items()}
    copies: dict[bytes, tuple[str, str]] = {}  # the copies of the higher splits, made first
    choices, redrawn = {}, {}  # every phrase chosen before any copy is written
    for split in [name for name in reversed(SPLIT_ORDER) if name in splits]:
        ds, others = splits[split], [(name, keys) for name, keys in originals.items() if name != split]
        choice, moved, made = draw_phrases(len(ds), split, len(phrases), seed), 0, []
        for i, (premise, hypothesis, uid) in enumerate(_pairs(ds)):
            if any(own[split][i] in keys for _, keys in others):
                continue  # its original is in another split too (prep nli refuses that; ANLI's own splits are as
                # released): no phrase keeps its copy apart, so it keeps its seeded draw, as the original's rule says
            clash = None
            for step in range(len(phrases)):
                index = (int(choice[i]) + step) % len(phrases)
                key = text_key(pair_text(premise, augment_hypothesis(hypothesis, phrases[index], position)))
                clash = next(((name, keys[key]) for name, keys in others if key in keys), None) or copies.get(key)
                if clash is None:
                    moved += step > 0
                    choice[i] = index
                    made.append((key, (split, f"the augmented copy of {uid}")))
                    break
            if clash is not None:
                raise UserError(f"every phrase makes the augmented copy of {uid} ({split}) the pair of {clash[1]} "
                                f"({clash[0]}), one pair in two splits; draw from more phrases (a larger "
                                "--phrase-subset) or drop one of the two rows")
        copies.update(made)
        choices[split], redrawn[split] = choice, moved
    return {split: augment_split(ds, split, phrases, position, seed, choices[split]) for split, ds in splits.items()}, \
        {split: redrawn[split] for split in splits}


def parse_source(source: str) -> tuple[str, Path | None]:
    """``"anli"`` -> ``("anli", None)``; ``"jsonl:DIR"`` -> ``("jsonl", DIR)``; anything else is a UserError."""
    kind, _, rest = source.partition(":")
    if source == "anli" or (kind == "jsonl" and rest.strip()):
        return kind, None if source == "anli" else Path(rest).expanduser()
    raise UserError(f"unknown source '{source}', expected 'anli' (the Hugging Face dataset {HUB_ID}) "
                    "or 'jsonl:DIR' (a folder in the official ANLI layout: DIR/R1/train.jsonl, DIR/R1/dev.jsonl, ...)")


def anli_parts(kind: str, root: Path | None) -> list[tuple[str, Part]]:
    """``(round, part)`` for every round and split, read by the shared source reader: the official release's files
    (each must exist) or the Hub splits ``train_r1`` ... (each must exist)."""
    wanted = [(split, rnd, stem) for split, stem in SPLITS.items() for rnd in ROUNDS]
    if kind == "jsonl":
        if not root.is_dir():
            raise UserError("not a folder; expected the official ANLI layout (R1/train.jsonl, R1/dev.jsonl, ...)",
                            path=root)
        files = [(split, rnd, root / rnd / f"{stem}.jsonl") for split, rnd, stem in wanted]
        for _, _, path in files:
            if not path.is_file():
                raise UserError("file not found (the official ANLI layout has R1-R3 x train/dev/test)", path=path)
        return [(rnd, Part(str(path), split, iter_rows(path))) for split, rnd, path in files]
    hub = {part.where.partition(":")[2]: part for part in dataset_parts(
        load_hub(HUB_ID, "use --source jsonl:DIR with the official ANLI release"), HUB_ID, "label")}
    for name in (f"{stem}_{rnd.lower()}" for _, rnd, stem in wanted):
        if name not in hub:
            raise UserError(f"{HUB_ID} has no split '{name}' (splits found: {', '.join(hub)})")
    return [(rnd, hub[f"{stem}_{rnd.lower()}"]) for _, rnd, stem in wanted]


def _label(row: dict[str, Any], part: Part, number: int) -> str | None:
    """A row's label name: ANLI's letters or names, or a Hub integer through its ClassLabel names (never by
    position); None for an unlabelled Hub row (-1)."""
    where = {"path": part.where, "row": number, "field": "label"}
    value = validate.field_value(row, "label", path=part.where, row_number=number)
    if isinstance(value, int) and not isinstance(value, bool):
        if part.names is None:
            raise UserError(f"integer label {value}: integer labels are mapped only through ClassLabel names, never "
                            f"by position; expected {_VALID_LETTERS}", **where)
        if value == -1:
            return None
        value = part.names[value] if 0 <= value < len(part.names) else value
    label = canonical_label(value)
    if label not in NLI_LABELS:
        raise UserError(f"unknown label {value!r}, expected {_VALID_LETTERS}", **where)
    return label


def read_anli(parts: list[tuple[str, Part]], work: Path) -> tuple[datasets.DatasetDict, dict[str, int]]:
    """The rows of ``parts`` in :data:`FEATURES`, R1-R3 merged per split, checked as they are read (a bad row is a
    UserError naming file, row and field) into Arrow files in ``work``; also the unlabelled rows dropped per split."""
    writer, dropped = SplitWriter(work, "anli", FEATURES), dict.fromkeys(SPLITS, 0)
    for round_name, part in parts:
        premise_field = "premise" if part.dataset is not None else "context"  # the Hub's name, the release's name
        for number, row in part.rows:
            label = _label(row, part, number)
            if label is None:
                dropped[part.split] += 1
                continue
            at = {"path": part.where, "row_number": number}
            writer.add(part.split, {"premise": validate.row_text(row, premise_field, **at), "label": label,
                                    "hypothesis": validate.row_text(row, "hypothesis", **at), "round": round_name,
                                    "uid": validate.row_key(row, "uid", **at), "augmented": False, "phrase": None})
    built = writer.close()
    empty = datasets.Dataset.from_dict({column: [] for column in FEATURES}, features=FEATURES)
    return datasets.DatasetDict({split: built.get(split, empty) for split in SPLITS}), dropped


def count_split(dataset: datasets.Dataset, by: str = "round") -> dict[str, Any]:
    """Rows, originals/augmented, and counts per ``by`` (round, or source for ``prep nli``), label and phrase."""
    groups, labels, phrases, augmented = Counter[str](), Counter[str](), Counter[str](), 0
    for batch in dataset.select_columns([by, "label", "augmented", "phrase"]).iter(batch_size=CHUNK):
        groups.update(batch[by])
        labels.update(batch["label"])
        phrases.update(p for p in batch["phrase"] if p is not None)
        augmented += sum(batch["augmented"])
    return {"rows": len(dataset), "original": len(dataset) - augmented, "augmented": augmented,
            f"per_{by}": dict(sorted(groups.items())), "per_label": {label: labels[label] for label in NLI_LABELS},
            "per_phrase": dict(sorted(phrases.items(), key=lambda item: (-item[1], item[0])))}


def save_augmented(splits: dict[str, datasets.Dataset], augmentation: dict[str, Any], s: AnliSettings,
                   output: str | Path, kind: str, head: dict[str, Any], by: str, **after: Any) -> dict[str, Any]:
    """``prep anli`` and ``prep nli``: every split with one phrase-augmented copy of each row when ``s.augment``,
    saved with its report (``head``, the settings and augmentation, the counts per split, ``after``, the schema)."""
    augmented, redrawn = augment_splits(splits, augmentation["phrase_list"], s.position, s.seed) if s.augment \
        else (splits, dict.fromkeys(splits, 0))
    built = datasets.DatasetDict(augmented)
    report = {**head, "seed": s.seed, "settings": s.to_json(), "augmentation": augmentation,
              "splits": {split: count_split(ds, by) for split, ds in built.items()}, **after,
              "redrawn_phrases": redrawn,
              "features": {name: str(feature.dtype) for name, feature in next(iter(built.values())).features.items()}}
    save_dataset_with_report(built, report, output, kind, s.overwrite)
    return report


def augmentation_settings(s: AnliSettings) -> dict[str, Any]:
    """The settings that describe the training data (training copies them into the model card): the fields of
    :class:`AnliSettings` (the phrase fields None without augmentation) and the phrases drawn from."""
    phrase_list = select_phrases(s.phrases, s.phrase_subset, s.seed) if s.augment else []
    return {**s.narrow(AnliSettings).affecting(lambda spec: s.augment or spec.name in ("augment", "seed")),
            "subset": phrase_list if s.phrase_subset is not None else None, "phrase_list": phrase_list}


@takes(AnliSettings)
def build_anli_augmented(source: str, output: str | Path, *, settings: AnliSettings) -> dict[str, Any]:
    """Build the (augmented) ANLI DatasetDict (train/validation/test) in ``output``; return its report. The settings:
    :class:`~learned_metrics.data.choices.AnliSettings`' fields, as keywords or one ``settings=`` object.
    ``output`` is checked before any work and appears only when everything is written, so a bad row leaves no
    half-written folder behind."""
    kind, root = parse_source(source)
    s = settings
    augmentation = augmentation_settings(s)
    check_outputs([folder_output(output, OUTPUT_KIND)], inputs=[root], overwrite=s.overwrite)
    with scratch_folder(output) as work:
        base, dropped = read_anli(anli_parts(kind, root), work)
        head = {"builder": "anli_augmented", "source": source, "dataset": HUB_ID if kind == "anli" else str(root)}
        # ANLI's splits are kept as released: an original pair also in a higher split is counted, not dropped
        columns = ("premise", "hypothesis", "uid")
        _, shared, _ = drop_repeats(base, SPLIT_ORDER, columns, lambda p, h, _uid: pair_text(p, h))
        return save_augmented(base, augmentation, s, output, OUTPUT_KIND, head, "round", dropped_unlabelled=dropped,
                              originals_in_a_higher_split=shared)
