"""What the data-prep commands offer, declared once: source forms, hub ids, ANLI phrase lists and positions, and
the settings object of each build, whose fields are the CLI flags, the API keywords and the checks. No ``datasets``
or numpy: the ``prep`` parsers read these to build their ``--help`` at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.labels import NOT_ENTAILMENT_NAMES, canonical_label, parse_label_order
from learned_metrics.settings import Settings, setting
from learned_metrics.text.sentences import DEFAULT_JOINER, SPLITTERS, parse_joiner

FILE_SOURCES = ("a .jsonl/.csv/.parquet file or a folder of them, disk:DIR (a datasets save_to_disk folder), "
                "hf:NAME[:CONFIG] (a Hugging Face dataset through the local cache)")  # data.sources reads these
SHUFFLE_SET_SOURCES = f"{FILE_SOURCES}, 'cnn_dailymail', 'jsonl:PATH' or 'txtdir:PATH' (a folder of .txt files)"
CNNDM_HUB_ID = "abisee/cnn_dailymail"
ANLI_HUB_ID = "facebook/anli"

INTRODUCTION_PHRASES = ("Here is what I know:", "yep. Also", "Sure! Here is what I know:")
HEDGING_PHRASES = ("I am not sure, but", "I am not sure but I do know that", "I do not have information on this but",
                   "I think", "I believe")
SENTIMENT_PHRASES = ("I love that!", "I like that!")
DIALOGUE_PHRASES = INTRODUCTION_PHRASES + HEDGING_PHRASES + SENTIMENT_PHRASES

STATEMENT_PHRASES = ("The woman is hungry.", "Canada is in North America.", "The cellar is below the house.",
                     "The sky is blue.", "The train leaves at noon.", "The cat is sleeping on the sofa.",
                     "Paris is the capital of France.", "The book is on the table.", "The river flows into the sea.",
                     "The shop opens at nine.")
"""Neutral statements for the ablation that replaces dialogue phrases: the paper quotes the first three; seven of
the same kind make 10 like :data:`DIALOGUE_PHRASES`, so the two ablations differ only in the kind of phrase."""

PHRASE_LISTS: dict[str, tuple[str, ...]] = {"dialogue": DIALOGUE_PHRASES, "statements": STATEMENT_PHRASES}
POSITIONS = ("prepend", "append")


def _joiner(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise UserError("--joiner must be a non-empty string")
    return value


@dataclass(frozen=True)
class ShuffleSetSettings(Settings):
    """How ``prep shuffle-set`` (:func:`~learned_metrics.data.shuffle_set.build_shuffle_set`) builds the coherence
    shuffle task: every keyword of the builder and every flag of the command."""

    shuffles_per_doc: int = setting(1, "distinct negatives per document (paper: 1 for CNN/DM, 20 for WSJ)", minimum=1)
    seed: int = setting(42, "seed of the split and the shuffles (same seed, same data)", minimum=0)
    val_fraction: float = setting(0.1, "share of documents for validation when the source names no validation "
                                  "split", kind="share")
    test_fraction: float = setting(0.1, "share of documents for test when the source names no test or validation "
                                   "split (0 = no test split)", kind="share")
    splitter: str = setting("newline", "how 'text' fields and .txt files are split into sentences", choices=SPLITTERS)
    joiner: str = setting(DEFAULT_JOINER, "string joining sentences into the model input: backslash escapes (\\n, "
                          "\\t, \\u2014) or any text such as ' — ' (default newline, as in the paper); recorded in "
                          "the model card", check=_joiner, from_text=parse_joiner)
    max_docs_per_split: int | None = setting(None, "use only the first N documents of each split (quick runs)",
                                             minimum=1)
    num_proc: int | None = setting(None, "processes for datasets.map", minimum=1, scores=False)
    overwrite: bool = setting(False, "replace an earlier shuffle set in --output atomically (a folder holding "
                              "anything else is never touched)", flag=True, scores=False)
    text_field: str | None = setting(None, "field holding each document's text, split into sentences by --splitter "
                                     "(default: 'text' where a row has no 'sentences')")
    sentences_field: str | None = setting(None, "field holding each document's sentences as a list (default: "
                                          "'sentences' where a row has it)")
    id_field: str | None = setting(None, "field holding a document id (default: 'id' where a row has it, else the "
                                   "row number)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.text_field is not None and self.sentences_field is not None:
            raise UserError(f"--text-field {self.text_field} and --sentences-field {self.sentences_field}: a "
                            "document is read from one field; pass --text-field or --sentences-field, not both")


@dataclass(frozen=True)
class AnliSettings(Settings):
    """How ``prep anli`` (:func:`~learned_metrics.data.anli.build_anli_augmented`) builds ANLI and its
    phrase-augmented copy: every keyword of the builder and every flag of the command."""

    phrases: str = setting("dialogue", "phrase list: dialogue (paper: introductions, hedging, sentiment) or neutral "
                           "statements (ablation)", choices=tuple(PHRASE_LISTS))
    position: str = setting("prepend", "prepend (paper; hypothesis first letter lower-cased) or append (ablation; "
                            "hypothesis unchanged)", choices=POSITIONS)
    phrase_subset: int | None = setting(None, "draw from a seeded random subset of K phrases (paper ablation: 5); "
                                        "recorded in report.json", minimum=1, metavar="K")
    seed: int = setting(42, "seed for the phrase draws and the subset (default 42)", minimum=0)
    augment: bool = setting(True, "write ANLI only (ablation without augmentation)", flag=True)
    overwrite: bool = setting(False, "replace an earlier build in --output atomically (a folder holding anything else "
                              "is never touched)", flag=True, scores=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.phrase_subset is not None and not self.augment:
            raise UserError("--phrase-subset has no effect with --no-augment; drop one of them")


NLI_SOURCES = f"{FILE_SOURCES}; NAME=SOURCE names it"


def _named_values(value: tuple[str, ...], what: str, number: type) -> tuple[str, ...]:
    """``("mnli=5000", ...)``: each item is SOURCE=NUMBER; refused as one line naming the option."""
    for item in value:
        name, sep, text = str(item).partition("=")
        try:
            ok = bool(sep and name.strip()) and math.isfinite(number(text)) and number(text) > 0
        except ValueError:
            ok = False
        if not ok or (number is int and str(int(text)) != text.strip()):
            raise UserError(f"--{what} takes SOURCE=N items (N > 0{', whole' if number is int else ''}), "
                            f"e.g. --{what} mnli=2; got {item!r}")
    return tuple(str(item) for item in value)


NOT_ENTAILMENT = "not_entailment"


def data_label(value: object) -> str | None:
    """A data set's label name as canonical (:func:`~learned_metrics.labels.canonical_label`), or ``not_entailment``
    for a two-class set's other class (RTE, FEVER-style sets); None when it is neither."""
    name = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    return NOT_ENTAILMENT if name in NOT_ENTAILMENT_NAMES else canonical_label(value)


def parse_data_label_order(order: Any) -> tuple[str, ...]:
    """``--label-order`` of a data set: scoring's rule and wording (:func:`~learned_metrics.labels.parse_label_order`),
    with ``entailment,not_entailment`` also accepted for a two-class set."""
    return parse_label_order(order, canonical=data_label)


@dataclass(frozen=True)
class NliSettings(AnliSettings):
    """How ``prep nli`` (:func:`~learned_metrics.data.nli.build_nli`) reads any NLI data (files, folders, Hugging
    Face datasets, several sources at once) and augments it as ``prep anli`` does: every keyword of the builder and
    every flag of the command. A source given as a mapping in a config may override the field options for itself."""

    augment: bool = setting(True, "write the originals only (ablation without augmentation)", flag=True)
    premise_field: str = setting("premise", "field holding the premise (ANLI's files: context)")
    hypothesis_field: str = setting("hypothesis", "field holding the hypothesis")
    label_field: str = setting("label", "field holding the label: a name (entailment/neutral/contradiction, e/n/c, "
                               "not_entailment) or an integer with --label-order")
    id_field: str | None = setting(None, "field holding a row id (default: source, file and row number)")
    label_order: tuple[str, ...] | None = setting(None, "class names of integer labels in index order, e.g. "
                                                  "entailment,neutral,contradiction (or e,n,c; "
                                                  "entailment,not_entailment for a two-class set)", kind="list",
                                                  check=parse_data_label_order)
    two_class: str | None = setting(None, "what a two-class set's not_entailment becomes: neutral (recommended "
                                    "beside three-class sources) or contradiction (docs/nli_data.md says why)",
                                    choices=("neutral", "contradiction"))
    split_field: str | None = setting(None, "field naming each row's split (train, dev/validation, test) instead "
                                      "of the file names")
    val_fraction: float = setting(0.1, "share of a source's premises for validation when its files name no split",
                                  kind="share")
    test_fraction: float = setting(0.0, "share of a source's premises for test when its files name no split",
                                   kind="share")
    cap: tuple[str, ...] | None = setting(None, "at most N rows per split of a source (seeded sample): "
                                          "SOURCE=N,SOURCE=N", kind="list",
                                          check=lambda v: _named_values(v, "cap", int), metavar="SOURCE=N,...")
    weight: tuple[str, ...] | None = setting(None, "multiply a source's training rows by W (seeded sample below 1, "
                                             "whole copies above): SOURCE=W,...", kind="list",
                                             check=lambda v: _named_values(v, "weight", float),
                                             metavar="SOURCE=W,...")
    shared_pairs: str = setting("refuse", "a premise/hypothesis pair in two splits: refuse, or drop it from the "
                                "lower split (train < validation < test) and count it in report.json",
                                choices=("refuse", "drop"))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.val_fraction + self.test_fraction >= 1:
            raise UserError(f"--val-fraction + --test-fraction must be below 1, got {self.val_fraction} + "
                            f"{self.test_fraction}")
