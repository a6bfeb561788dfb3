"""Sentence splitting and joining: the same choice at training and at scoring time (recorded in the card)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from learned_metrics.errors import UserError
from learned_metrics.validate import is_blank, one_of

SPLITTERS = ("newline", "pysbd")
DEFAULT_JOINER = "\n"  # paper code joins sentences with a newline


def split_newline(text: str) -> list[str]:
    """One sentence per line (CNN/DM ``highlights``, preprocessed WSJ)."""
    return [line.strip() for line in text.splitlines() if not is_blank(line)]


@functools.lru_cache(maxsize=1)
def _pysbd_segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_pysbd(text: str) -> list[str]:
    """Rule-based sentence boundary detection for running text."""
    return [s.strip() for s in _pysbd_segmenter().segment(text) if not is_blank(s)]


def get_splitter(name: str) -> Callable[[str], list[str]]:
    """Return the splitter called ``name`` (``newline`` or ``pysbd``)."""
    return split_newline if one_of(name, SPLITTERS, "sentence splitter") == "newline" else split_pysbd


def join_sentences(sentences: list[str], joiner: str = DEFAULT_JOINER) -> str:
    return joiner.join(sentences)


def parse_joiner(text: str) -> str:
    """A joiner typed on the command line: backslash escapes (``\\n``, ``\\t``, ``\\u2014``) decoded, any other
    character (``' — '``) kept exactly; a malformed escape is one line."""
    try:
        joiner = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as exc:
        raise UserError(f"--joiner: malformed escape in {text!r} ({exc.reason}); write e.g. '\\n' or ' '") from None
    if any("\ud800" <= ch <= "\udfff" for ch in joiner):
        raise UserError(f"--joiner: {text!r} holds a lone surrogate, which no UTF-8 file can store; give a whole "
                        "character (e.g. '\\U0001F600')")
    return joiner
