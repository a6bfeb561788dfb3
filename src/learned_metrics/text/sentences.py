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
    """Rule-based sentence boundary detection for running text, every character kept (:func:`covering`)."""
    return covering(text, _pysbd_segmenter().segment(text))


def covering(text: str, pieces: list[str]) -> list[str]:
    """A splitter's ``pieces`` of ``text`` as sentences that hold all of it: a sentence runs from where its piece
    starts in the text to where the next one's does, so text a splitter left out (pysbd drops a trailing ``?!``
    after a sentence) stays in the sentence before it, and a piece not found in order ends the splitting (the rest is
    the last sentence); each sentence stripped, blank ones dropped. Text the pieces hold whole splits as they do."""
    starts, at = [], 0
    for piece in (piece.strip() for piece in pieces):
        found = text.find(piece, at) if piece else -1
        if found < 0:
            if piece:
                break
            continue
        starts.append(found)
        at = found + len(piece)
    bounds = [0, *starts[1:], len(text)]
    sentences = (text[start:end].strip() for start, end in zip(bounds, bounds[1:], strict=False))
    return [sentence for sentence in sentences if not is_blank(sentence)]


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
