"""Text proxies a metric may follow for the wrong reason (length, overlap with the grounding, first person), from
plain text without a model, for ``meta-eval confounders`` and per row. Tokens are runs of letters/digits with an
inner apostrophe kept (``don't``); first-person pronouns are matched case-insensitively and word-bounded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from learned_metrics.errors import UserError
from learned_metrics.text.sentences import get_splitter
from learned_metrics.validate import one_of

PROXIES = ("chars", "tokens", "sentences", "overlap", "first_person")
FIRST_PERSON = ("i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves")
# the forms the first_person proxy counts: every first-person pronoun, or the paper's "I" only
FIRST_PERSON_FORMS = {"all": FIRST_PERSON, "i": ("i",)}

_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*")
_FIRST_PERSON = {name: re.compile(r"\b(?:" + "|".join(forms) + r")\b", re.IGNORECASE)
                 for name, forms in FIRST_PERSON_FORMS.items()}


def word_tokens(text: str) -> list[str]:
    """Word tokens, case-folded: runs of letters/digits with inner apostrophes kept."""
    return [token.casefold() for token in _TOKEN.findall(text)]


def first_person_count(text: str, first_person: str = "all") -> int:
    """First-person pronouns (chat phrases such as "I think" that NLI metrics are known to punish): ``"all"`` of
    :data:`FIRST_PERSON` or ``"i"`` only (the paper's proxy), case-insensitive and word-bounded (``I'm`` counts)."""
    return len(_FIRST_PERSON[one_of(first_person, tuple(_FIRST_PERSON), "first-person forms")].findall(text))


def overlap_share(generation: str, grounding: str) -> float:
    """Share of the generation's tokens found in the grounding (NaN when the generation has no word token)."""
    tokens = word_tokens(generation)
    if not tokens:
        return math.nan
    known = set(word_tokens(grounding))
    return sum(token in known for token in tokens) / len(tokens)


def text_proxies(generation: str, grounding: str | None = None, proxies: Sequence[str] = PROXIES,
                 splitter: str = "pysbd", first_person: str = "all") -> dict[str, float]:
    """The named built-in proxies of one generation (``overlap`` needs the grounding)."""
    for proxy in proxies:
        one_of(proxy, PROXIES, "proxy")
    if "overlap" in proxies and grounding is None:
        raise UserError("the overlap proxy needs a grounding text")
    compute = {"chars": lambda: len(generation), "tokens": lambda: len(word_tokens(generation)),
               "sentences": lambda: len(get_splitter(splitter)(generation)),
               "first_person": lambda: first_person_count(generation, first_person),
               "overlap": lambda: overlap_share(generation, grounding)}
    return {proxy: float(compute[proxy]()) for proxy in proxies}
