"""Negatives for the shuffle task: distinct sentence permutations of a document.

A negative must be a non-identity permutation *whose text differs from the
original*: with repeated sentences a non-identity permutation can reproduce
the original text exactly, which would put the same text under both labels.
"""

from __future__ import annotations

import hashlib
import itertools
import random

# Below this many sentences all permutations are enumerated (6! = 720), so the
# negatives are drawn uniformly from every distinct text; above, rejection sampling.
_ENUMERATE_UP_TO = 6
_MAX_TRIES_PER_NEGATIVE = 50


def document_rng(seed: int, doc_id: str) -> random.Random:
    """An RNG that depends only on (seed, document): independent of batching and processes."""
    digest = hashlib.sha256(f"{seed}\x00{doc_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))


def distinct_sentence_count(sentences: list[str]) -> int:
    return len(set(sentences))


def shuffled_negatives(sentences: list[str], n: int, rng: random.Random, joiner: str) -> list[str]:
    """Up to ``n`` distinct shuffled texts, none equal to the original text.

    Returns fewer than ``n`` when the document has fewer distinct orderings
    (e.g. 3 sentences give at most 5 negatives), and none when it has fewer
    than 2 distinct sentences.
    """
    if n <= 0 or distinct_sentence_count(sentences) < 2:
        return []
    original = joiner.join(sentences)
    if len(sentences) <= _ENUMERATE_UP_TO:
        texts = sorted({joiner.join(p) for p in itertools.permutations(sentences)} - {original})
        return rng.sample(texts, min(n, len(texts)))
    found: list[str] = []
    seen = {original}
    order = list(sentences)
    for _ in range(n * _MAX_TRIES_PER_NEGATIVE):
        rng.shuffle(order)
        text = joiner.join(order)
        if text not in seen:
            seen.add(text)
            found.append(text)
            if len(found) == n:
                break
    return found
