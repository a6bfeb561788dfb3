"""Premise chunking for groundings longer than the model's input (``--premise-strategy chunk``).

A pair that fits the model is scored as it is, exactly as ``truncate`` scores
it. A pair that does not fit is scored SummaC/AlignScore style:

1. the hypothesis is split into sentences;
2. the premise is split into sentences and packed greedily, in order, into
   chunks that fit the model together with the longest hypothesis sentence;
3. every (chunk, hypothesis sentence) pair is scored (all pairs of all rows in
   one flat stream, so they share length-sorted batches);
4. per hypothesis sentence, the chunk with the highest P(entailment) (mean over
   MC passes) is taken, with its whole class distribution;
5. the row's probabilities are the mean of those distributions over the
   hypothesis sentences, and the mode (``e`` or ``e-c``) is applied to that
   mean. Since ``e-c`` is linear, the row's ``e-c`` equals the mean of the
   per-sentence ``e-c`` of the selected chunks. Under MC dropout every pass
   goes through the same selection, which gives ``score_std``.

Sentence splitting uses pysbd (groundings and generations are running text).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Tokens kept free per chunk: a sentence tokenized alone can differ by a token
# from the same sentence inside its chunk.
SAFETY_MARGIN = 2


@dataclass
class ChunkPlan:
    """Flat (chunk, hypothesis sentence) pairs and which row and sentence each belongs to."""

    premises: list[str]
    hypotheses: list[str]
    sentence_of_pair: np.ndarray
    row_of_sentence: np.ndarray
    n_rows: int
    chunked_rows: int

    def __len__(self) -> int:
        return len(self.premises)

    def split(self, max_pairs: int) -> list[tuple[slice, ChunkPlan]]:
        """Consecutive groups of whole rows with at most ``max_pairs`` pairs each (a bigger row stands alone).

        Pass probabilities are kept for every pair until its row is aggregated,
        so streaming the pairs in groups bounds that memory.
        """
        row_of_pair = self.row_of_sentence[self.sentence_of_pair]
        pair_start = np.searchsorted(row_of_pair, np.arange(self.n_rows + 1))
        sentence_start = np.searchsorted(self.row_of_sentence, np.arange(self.n_rows + 1))
        groups: list[tuple[slice, ChunkPlan]] = []
        first = 0
        while first < self.n_rows:
            last = first + 1
            while last < self.n_rows and pair_start[last + 1] - pair_start[first] <= max_pairs:
                last += 1
            pairs = slice(pair_start[first], pair_start[last])
            sentences = sentence_start[first]
            groups.append((slice(first, last), ChunkPlan(
                self.premises[pairs], self.hypotheses[pairs], self.sentence_of_pair[pairs] - sentences,
                self.row_of_sentence[sentences:sentence_start[last]] - first, last - first,
                0,
            )))
            first = last
        return groups


def _token_lengths(tokenizer, texts: Sequence[str]) -> list[int]:
    if not texts:
        return []
    return [len(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def split_long_sentence(sentence: str, length: int, budget: int) -> list[tuple[str, int]]:
    """Cut a sentence longer than ``budget`` tokens into word windows of about ``budget * 0.9`` tokens.

    Text without sentence punctuation (tables, lists, transcripts) is one
    "sentence" to the splitter; cutting it keeps all of it scorable instead of
    truncating it.
    """
    words = sentence.split()
    pieces = min(len(words), math.ceil(length / max(1, int(budget * 0.9))))
    if pieces <= 1:
        return [(sentence, length)]
    bounds = np.linspace(0, len(words), pieces + 1).round().astype(int)
    spans = zip(bounds[:-1], bounds[1:], strict=True)
    return [(" ".join(words[a:b]), math.ceil(length * (b - a) / len(words))) for a, b in spans]


def pack_sentences(sentences: Sequence[str], lengths: Sequence[int], budget: int) -> list[str]:
    """Consecutive sentences joined into chunks of at most ``budget`` tokens; longer sentences are cut first."""
    pieces = [piece for s, n in zip(sentences, lengths, strict=True)
              for piece in (split_long_sentence(s, n, budget) if n > budget else [(s, n)])]
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for sentence, length in pieces:
        if current and used + length > budget:
            chunks.append(" ".join(current))
            current, used = [], 0
        current.append(sentence)
        used += length
    if current:
        chunks.append(" ".join(current))
    return chunks


class _PlanBuilder:
    def __init__(self, n_rows: int):
        self.premises: list[str] = []
        self.hypotheses: list[str] = []
        self.sentence_of_pair: list[int] = []
        self.row_of_sentence: list[int] = []
        self.n_rows = n_rows
        self.chunked_rows = 0

    def add_sentence(self, row: int, chunks: Sequence[str], hypothesis: str) -> None:
        sentence_id = len(self.row_of_sentence)
        self.row_of_sentence.append(row)
        for chunk in chunks:
            self.premises.append(chunk)
            self.hypotheses.append(hypothesis)
            self.sentence_of_pair.append(sentence_id)

    def build(self) -> ChunkPlan:
        return ChunkPlan(
            self.premises,
            self.hypotheses,
            np.asarray(self.sentence_of_pair, dtype=np.int64),
            np.asarray(self.row_of_sentence, dtype=np.int64),
            self.n_rows,
            self.chunked_rows,
        )


def plan_chunks(tokenizer, premises: Sequence[str], hypotheses: Sequence[str], max_length: int,
                split: Callable[[str], list[str]]) -> ChunkPlan:
    """Pairs to score: the whole pair when it fits, else every premise chunk with every hypothesis sentence."""
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    premise_lengths = _token_lengths(tokenizer, premises)
    hypothesis_lengths = _token_lengths(tokenizer, hypotheses)
    builder = _PlanBuilder(len(premises))
    min_budget = max(1, max_length // 4)
    for row, (premise, hypothesis) in enumerate(zip(premises, hypotheses, strict=True)):
        if premise_lengths[row] + hypothesis_lengths[row] + specials <= max_length:
            builder.add_sentence(row, [premise], hypothesis)
            continue
        builder.chunked_rows += 1
        hyp_sentences = split(hypothesis) or [hypothesis]
        prem_sentences = split(premise) or [premise]
        longest_hyp = max(_token_lengths(tokenizer, hyp_sentences))
        budget = max(min_budget, max_length - specials - longest_hyp - SAFETY_MARGIN)
        chunks = pack_sentences(prem_sentences, _token_lengths(tokenizer, prem_sentences), budget)
        for sentence in hyp_sentences:
            builder.add_sentence(row, chunks, sentence)
    return builder.build()


def aggregate_chunks(pair_probs: np.ndarray, plan: ChunkPlan, entailment_id: int) -> np.ndarray:
    """``(passes, pairs, C)`` -> ``(passes, rows, C)``: best chunk per hypothesis sentence, mean over sentences."""
    passes, _, classes = pair_probs.shape
    n_sentences = len(plan.row_of_sentence)
    mean_entailment = pair_probs[:, :, entailment_id].mean(axis=0)
    # Sort pairs by sentence, then by entailment descending: the first pair of each sentence is its best chunk.
    order = np.lexsort((-mean_entailment, plan.sentence_of_pair))
    first = np.ones(len(order), dtype=bool)
    first[1:] = plan.sentence_of_pair[order[1:]] != plan.sentence_of_pair[order[:-1]]
    best_pair = order[first]  # one per sentence, in sentence-id order
    selected = pair_probs[:, best_pair, :]  # (passes, sentences, C)
    sums = np.zeros((plan.n_rows, passes * classes))
    np.add.at(sums, plan.row_of_sentence, selected.transpose(1, 0, 2).reshape(n_sentences, passes * classes))
    counts = np.bincount(plan.row_of_sentence, minlength=plan.n_rows).astype(np.float64)
    means = sums / np.maximum(counts, 1)[:, None]
    return means.reshape(plan.n_rows, passes, classes).transpose(1, 0, 2)
