"""What the data-prep commands offer, declared once: source forms, hub ids, ANLI phrase lists and positions, and
the settings object of each build (:class:`ShuffleSetSettings`, :class:`AnliSettings`).

No ``datasets`` or numpy: the ``prep`` parsers read these to build their ``--help`` at once; the builders of
:mod:`learned_metrics.data.shuffle_set` and :mod:`learned_metrics.data.anli` take their keywords through the same
settings objects, so the CLI flag, the API keyword (and Hydra's ``builder`` config) and the check are one
declaration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.settings import Settings, setting
from learned_metrics.text.sentences import DEFAULT_JOINER, SPLITTERS, parse_joiner

SHUFFLE_SET_SOURCES = "'cnn_dailymail', 'jsonl:PATH' or 'txtdir:PATH'"
CNNDM_HUB_ID = "abisee/cnn_dailymail"
ANLI_HUB_ID = "facebook/anli"

INTRODUCTION_PHRASES = ("Here is what I know:", "yep. Also", "Sure! Here is what I know:")
HEDGING_PHRASES = (
    "I am not sure, but",
    "I am not sure but I do know that",
    "I do not have information on this but",
    "I think",
    "I believe",
)
SENTIMENT_PHRASES = ("I love that!", "I like that!")
DIALOGUE_PHRASES = INTRODUCTION_PHRASES + HEDGING_PHRASES + SENTIMENT_PHRASES

STATEMENT_PHRASES = (
    "The woman is hungry.",
    "Canada is in North America.",
    "The cellar is below the house.",
    "The sky is blue.",
    "The train leaves at noon.",
    "The cat is sleeping on the sofa.",
    "Paris is the capital of France.",
    "The book is on the table.",
    "The river flows into the sea.",
    "The shop opens at nine.",
)
"""Neutral statements for the ablation that replaces dialogue phrases.

Only the first three are quoted in the paper; the other seven are statements
of the same kind (true or plausible, unrelated to any premise) so that the
list has 10 entries like :data:`DIALOGUE_PHRASES` and the two ablations differ
only in the kind of phrase, not in how many there are.
"""

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
    val_fraction: float = setting(0.1, "share of documents for validation (local sources)", kind="share")
    test_fraction: float = setting(0.1, "share of documents for test (local sources; 0 = no test split)", kind="share")
    splitter: str = setting("newline", "how 'text' fields and .txt files are split into sentences", choices=SPLITTERS)
    joiner: str = setting(DEFAULT_JOINER, "string joining sentences into the model input: backslash escapes (\\n, "
                          "\\t, \\u2014) or any text such as ' — ' (default newline, as in the paper); recorded in "
                          "the model card", check=_joiner, from_text=parse_joiner)
    max_docs_per_split: int | None = setting(None, "use only the first N documents of each split (quick runs)",
                                             minimum=1)
    num_proc: int | None = setting(None, "processes for datasets.map", minimum=1, scores=False)
    overwrite: bool = setting(False, "replace an earlier shuffle set in --output atomically (a folder holding "
                              "anything else is never touched)", flag=True, scores=False)


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
