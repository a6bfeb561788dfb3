"""Sentence splitting and joining: the same choice at training and at scoring time.

The splitter and joiner a model was trained with are recorded in its exported
card (``learned_metric.json``) so scoring reproduces the training input.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from learned_metrics.errors import UserError

SPLITTERS = ("newline", "pysbd")
DEFAULT_JOINER = "\n"  # paper code joins sentences with a newline


def split_newline(text: str) -> list[str]:
    """One sentence per line (CNN/DM ``highlights``, preprocessed WSJ)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


@functools.lru_cache(maxsize=1)
def _pysbd_segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_pysbd(text: str) -> list[str]:
    """Rule-based sentence boundary detection for running text."""
    return [s.strip() for s in _pysbd_segmenter().segment(text) if s.strip()]


def get_splitter(name: str) -> Callable[[str], list[str]]:
    """Return the splitter called ``name`` (``newline`` or ``pysbd``)."""
    if name == "newline":
        return split_newline
    if name == "pysbd":
        return split_pysbd
    raise UserError(f"unknown sentence splitter '{name}', expected one of {', '.join(SPLITTERS)}")


def join_sentences(sentences: list[str], joiner: str = DEFAULT_JOINER) -> str:
    return joiner.join(sentences)
