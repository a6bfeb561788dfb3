"""What the data-prep commands offer, declared once: source forms, hub ids, ANLI phrase lists and positions.

Plain constants, no ``datasets`` or numpy: the ``prep`` parsers read them to build their ``--help`` at once;
:mod:`learned_metrics.data.shuffle_set` and :mod:`learned_metrics.data.anli` use the same names.
"""

from __future__ import annotations

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
