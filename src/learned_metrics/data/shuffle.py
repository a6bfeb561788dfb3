"""Negatives for the shuffle task: distinct sentence permutations of a document whose *text differs from the
original*: with repeated sentences a non-identity permutation can reproduce the original text exactly, which would
put the same text under both labels. Texts are compared as the builders compare them (whitespace-normalised), and
a negative is never one of the ``avoid`` texts (other documents' originals: a reordered copy of this one).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Iterator, Set

from learned_metrics.data.common import normalised

# Rejection sampling needs this many distinct orderings per negative asked for; with fewer, every
# distinct ordering is listed and sampled from (e.g. 3 sentences: 5 negatives at most).
_ORDERINGS_PER_NEGATIVE = 4
_MAX_TRIES_PER_NEGATIVE = 50


def document_rng(seed: int, doc_id: str) -> random.Random:
    """An RNG that depends only on (seed, document): independent of batching and processes."""
    digest = hashlib.sha256(f"{seed}\x00{doc_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))


def distinct_orderings(sentences: list[str]) -> int:
    """Distinct texts a permutation can give: n! / prod(m!) over the multiplicities m of repeated sentences."""
    return math.factorial(len(sentences)) // math.prod(math.factorial(m) for m in Counter(sentences).values())


def multiset_permutations(items: list[str]) -> Iterator[list[str]]:
    """Every distinct ordering once, in lexicographic order (next-permutation), never the n! with repeats."""
    order = sorted(items)
    while True:
        yield list(order)
        i = len(order) - 2
        while i >= 0 and order[i] >= order[i + 1]:
            i -= 1
        if i < 0:
            return
        j = len(order) - 1
        while order[j] <= order[i]:
            j -= 1
        order[i], order[j] = order[j], order[i]
        order[i + 1 :] = reversed(order[i + 1 :])


def shuffled_negatives(sentences: list[str], n: int, rng: random.Random, joiner: str,
                       avoid: Set[str] = frozenset()) -> list[str]:
    """Up to ``n`` distinct shuffled texts, none equal to the original or to a text of ``avoid`` (whitespace-normalised
    texts), drawn uniformly (fewer when the document has fewer distinct orderings, none below 2 distinct sentences):
    every distinct text arises from prod(m!) permutations, so rejecting repeats samples uniformly without
    replacement; few orderings are listed instead."""
    if n <= 0 or len(set(sentences)) < 2:
        return []
    blocked = {normalised(joiner.join(sentences)), *avoid}
    if distinct_orderings(sentences) - 1 < _ORDERINGS_PER_NEGATIVE * n + len(avoid):
        # by normalised text: distinct orderings can still join to one text ("a" + "a a" vs "a a" + "a")
        texts: dict[str, str] = {}
        for text in map(joiner.join, multiset_permutations(sentences)):
            texts.setdefault(normalised(text), text)
        found = [text for key, text in texts.items() if key not in blocked]
        return rng.sample(found, min(n, len(found)))
    found = []
    order = list(sentences)
    for _ in range(n * _MAX_TRIES_PER_NEGATIVE):
        rng.shuffle(order)
        text = joiner.join(order)
        if (key := normalised(text)) not in blocked:
            blocked.add(key)
            found.append(text)
            if len(found) == n:
                break
    return found
