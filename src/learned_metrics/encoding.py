"""How a text or a text pair becomes model input: the limits shared by training and scoring."""

from __future__ import annotations

from learned_metrics.errors import UserError
from learned_metrics.validate import int_at_least


def shortest_max_length(tokenizer, pair: bool) -> int:
    """The smallest ``max_length`` that holds the special tokens and one token of each text."""
    return int(tokenizer.num_special_tokens_to_add(pair=pair)) + (2 if pair else 1)


def check_max_length(value: object, tokenizer, pair: bool, what: str = "--max-length") -> int:
    """``value`` as an int, refused when too small to keep any of the text (or of the hypothesis, for pairs).

    Below this, truncation cannot work: tokenizers either leave rows uncut (while they are
    counted as truncated) or drop a whole hypothesis without a word.
    """
    length = int_at_least(value, 1, what)
    smallest = shortest_max_length(tokenizer, pair)
    if length < smallest:
        texts = "one token of the premise and one of the hypothesis" if pair else "one token of the text"
        raise UserError(f"{what} {length} is too small: the model adds {smallest - (2 if pair else 1)} special "
                        f"tokens and needs {texts}; use at least {smallest}")
    return length
