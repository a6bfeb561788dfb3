"""Tokenization with truncation, the one path from text to token ids for training and scoring: a row longer than
``max_length`` is cut the way the paper trains (the premise only for pairs, the end for single texts); a pair whose
hypothesis alone does not fit falls back to cutting the longer side and is flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from learned_metrics.errors import UserError
from learned_metrics.validate import int_at_least


@dataclass
class Tokenized:
    """Tokenizer columns of a batch of rows; which rows were cut, and which pairs' hypotheses were cut as well."""

    columns: dict[str, list[list[int]]]
    truncated: list[bool] = field(default_factory=list)
    second_truncated: list[bool] = field(default_factory=list)


def check_max_length(value: object, tokenizer, pair: bool, what: str = "--max-length") -> int:
    """``value`` as an int, refused when too small to keep any of the text (or of the hypothesis, for pairs): below
    it tokenizers leave rows uncut (counted as truncated) or drop a whole hypothesis without a word."""
    length = int_at_least(value, 1, what)
    smallest = int(tokenizer.num_special_tokens_to_add(pair=pair)) + (2 if pair else 1)  # special tokens + 1 per text
    if length < smallest:
        texts = "one token of the premise and one of the hypothesis" if pair else "one token of the text"
        raise UserError(f"{what} {length} is too small: the model adds {smallest - (2 if pair else 1)} special "
                        f"tokens and needs {texts}; use at least {smallest}")
    return length


def _cut(tokenizer, texts: list[list[str]], max_length: int) -> tuple[dict[str, list], list[bool]]:
    """Premise-only truncation of the batch, else row by row with the longest-first fallback for a hypothesis that
    cannot fit (tokenizers raises a plain Exception when only_first cannot)."""
    if len(texts) == 1:
        return dict(tokenizer(texts[0], truncation=True, max_length=max_length)), [False] * len(texts[0])
    try:
        return dict(tokenizer(*texts, truncation="only_first", max_length=max_length)), [False] * len(texts[0])
    except Exception:  # one row of the batch cannot be cut on the premise only: go row by row
        out: dict[str, list] = {}
        second_cut: list[bool] = []
        for premise, hypothesis in zip(*texts, strict=True):
            try:
                row = tokenizer(premise, hypothesis, truncation="only_first", max_length=max_length)
                second_cut.append(False)
            except Exception:
                row = tokenizer(premise, hypothesis, truncation="longest_first", max_length=max_length)
                second_cut.append(True)
            for key, value in row.items():
                out.setdefault(key, []).append(value)
        return out, second_cut


def tokenize(tokenizer, first: Sequence[str], second: Sequence[str] | None, max_length: int) -> Tokenized:
    """Token ids of texts (or premise/hypothesis pairs), truncated as described above, no padding."""
    if hasattr(tokenizer, "deprecation_warnings"):  # we truncate ourselves; the length warning is noise
        tokenizer.deprecation_warnings["sequence-length-is-longer-than-the-specified-maximum"] = True
    texts = [list(first)] if second is None else [list(first), list(second)]
    full = dict(tokenizer(*texts, truncation=False))
    truncated, second_cut = [False] * len(texts[0]), [False] * len(texts[0])
    over = [i for i, ids in enumerate(full["input_ids"]) if len(ids) > max_length]
    if over:
        cut, cut_second = _cut(tokenizer, [[column[i] for i in over] for column in texts], max_length)
        for j, i in enumerate(over):
            for key in full:
                full[key][i] = cut[key][j]
            truncated[i] = True
            second_cut[i] = cut_second[j]
    return Tokenized(full, truncated, second_cut)
