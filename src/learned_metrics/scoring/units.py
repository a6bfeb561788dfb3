"""Grounding units and generation sentences: how long groundings and ``--granularity`` are scored.

SummaC-ZS style for every strategy: the grounding is cut into units that fit the model, every (unit, generation
sentence) pair is scored in one flat stream, each sentence takes its best unit's class distribution, and a row is
the mean over its sentences (``e-c`` is linear: the mean of the per-sentence maxima; docs/scoring.md)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Tokens kept free per chunk: a sentence tokenized alone can differ by a token from the same one inside its chunk.
SAFETY_MARGIN = 2


@dataclass
class ChunkPlan:
    """Flat (unit, generation sentence) pairs, which row and sentence each belongs to, and each unit's index
    within its row's units (for ``--details``)."""

    premises: list[str]
    hypotheses: list[str]
    sentence_of_pair: np.ndarray
    row_of_sentence: np.ndarray
    n_rows: int
    chunked_rows: int
    unit_of_pair: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.unit_of_pair is None:
            self.unit_of_pair = np.zeros(len(self.premises), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.premises)

    def split(self, max_pairs: int) -> list[tuple[slice, ChunkPlan]]:
        """Consecutive groups of whole rows with at most ``max_pairs`` pairs each (a bigger row stands alone): pass
        probabilities are kept per pair until its row is aggregated, so groups bound that memory."""
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
                self.row_of_sentence[sentences:sentence_start[last]] - first, last - first, 0,
                self.unit_of_pair[pairs])))
            first = last
        return groups


def _token_lengths(tokenizer, texts: Sequence[str]) -> list[int]:
    return [len(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]] if texts else []


def split_long_sentence(sentence: str, length: int, budget: int) -> list[tuple[str, int]]:
    """Cut a sentence longer than ``budget`` tokens into word windows of about ``budget * 0.9`` tokens: text
    without sentence punctuation (tables, transcripts) stays scorable instead of truncated."""
    words = sentence.split()
    pieces = min(len(words), math.ceil(length / max(1, int(budget * 0.9))))
    if length <= budget or pieces <= 1:
        return [(sentence, length)]
    bounds = np.linspace(0, len(words), pieces + 1).round().astype(int)
    spans = zip(bounds[:-1], bounds[1:], strict=True)
    return [(" ".join(words[a:b]), math.ceil(length * (b - a) / len(words))) for a, b in spans]


def pack_sentences(sentences: Sequence[str], lengths: Sequence[int], budget: int) -> list[str]:
    """Consecutive sentences joined into chunks of at most ``budget`` tokens; longer sentences are cut first."""
    pieces = [piece for s, n in zip(sentences, lengths, strict=True) for piece in split_long_sentence(s, n, budget)]
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


def grounding_units(tokenizer, premise: str, granularity: str, budget: int,
                    split: Callable[[str], list[str]]) -> list[str]:
    """The units a generation sentence is checked against, each at most ``budget`` tokens."""
    if granularity == "sentence":
        sentences = split(premise) or [premise]
        return [piece for s, n in zip(sentences, _token_lengths(tokenizer, sentences), strict=True)
                for piece, _ in split_long_sentence(s, n, budget)]
    blocks = ([p.strip() for p in re.split(r"\n\s*\n", premise) if p.strip()] if granularity == "paragraph"
              else [premise])  # paragraphs: blank-line separated (a text without blank lines is one)
    units: list[str] = []
    for block, length in zip(blocks, _token_lengths(tokenizer, blocks), strict=True):
        if length <= budget:
            units.append(block)
            continue
        sentences = split(block) or [block]
        units.extend(pack_sentences(sentences, _token_lengths(tokenizer, sentences), budget))
    return units


def plan_units(tokenizer, premises: Sequence[str], hypotheses: Sequence[str], max_length: int,
               split: Callable[[str], list[str]], granularity: str = "document", chunk_tokens: int | None = None,
               whole_claim: bool = False) -> ChunkPlan:
    """Pairs to score. At ``document`` granularity a pair that fits is scored whole unless ``chunk_tokens`` fixes
    the chunk size (MiniCheck chunks every document); every other row scores each generation sentence (the whole
    generation if ``whole_claim``) against every grounding unit."""
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    premise_lengths = _token_lengths(tokenizer, premises)
    hypothesis_lengths = _token_lengths(tokenizer, hypotheses)
    pairs: list[tuple[str, str, int, int]] = []  # (unit, generation sentence, sentence id, unit index in its row)
    row_of_sentence: list[int] = []
    chunked_rows = 0
    for row, (premise, hypothesis) in enumerate(zip(premises, hypotheses, strict=True)):
        fits = premise_lengths[row] + hypothesis_lengths[row] + specials <= max_length
        units, sentences = [premise], [hypothesis]
        if granularity != "document" or not fits or chunk_tokens:
            chunked_rows += not fits
            sentences = [hypothesis] if whole_claim else split(hypothesis) or [hypothesis]
            longest_hyp = max(_token_lengths(tokenizer, sentences))
            budget = min(max(max(1, max_length // 4), max_length - specials - longest_hyp - SAFETY_MARGIN),
                         chunk_tokens or max_length)
            units = grounding_units(tokenizer, premise, granularity, budget, split)
        for sentence in sentences:
            pairs += [(unit, sentence, len(row_of_sentence), index) for index, unit in enumerate(units)]
            row_of_sentence.append(row)
    columns = list(zip(*pairs, strict=True)) if pairs else [(), (), (), ()]
    return ChunkPlan(list(columns[0]), list(columns[1]), np.asarray(columns[2], dtype=np.int64),
                     np.asarray(row_of_sentence, dtype=np.int64), len(premises), chunked_rows,
                     np.asarray(columns[3], dtype=np.int64))


@dataclass
class UnitChoice:
    """Per generation sentence: the pair of its best unit and that pair's score (MC mean)."""

    best_pair: np.ndarray
    sentence_scores: np.ndarray


def aggregate_units(pair_probs: np.ndarray, plan: ChunkPlan, pair_scores: np.ndarray) -> tuple[np.ndarray, UnitChoice]:
    """``(passes, pairs, C)`` -> ``(passes, rows, C)``: best unit per sentence by ``pair_scores``
    (``(passes, pairs)``, the mode's score), mean over the row's sentences."""
    passes, _, classes = pair_probs.shape
    n_sentences = len(plan.row_of_sentence)
    mean_score = pair_scores.mean(axis=0)
    # Sort pairs by sentence, then by score descending: the first pair of each sentence is its best unit.
    order = np.lexsort((-mean_score, plan.sentence_of_pair))
    first = np.ones(len(order), dtype=bool)
    first[1:] = plan.sentence_of_pair[order[1:]] != plan.sentence_of_pair[order[:-1]]
    best_pair = order[first]  # one per sentence, in sentence-id order
    selected = pair_probs[:, best_pair, :]  # (passes, sentences, C)
    sums = np.zeros((plan.n_rows, passes * classes))
    np.add.at(sums, plan.row_of_sentence, selected.transpose(1, 0, 2).reshape(n_sentences, passes * classes))
    counts = np.bincount(plan.row_of_sentence, minlength=plan.n_rows).astype(np.float64)
    means = sums / np.maximum(counts, 1)[:, None]
    return (means.reshape(plan.n_rows, passes, classes).transpose(1, 0, 2),
            UnitChoice(best_pair, mean_score[best_pair]))


def sentence_details(plan: ChunkPlan, choice: UnitChoice) -> list[list[dict]]:
    """``--details``: per row, each generation sentence with its score and the grounding unit that supported it."""
    rows: list[list[dict]] = [[] for _ in range(plan.n_rows)]
    for sentence, pair in enumerate(choice.best_pair):
        rows[plan.row_of_sentence[sentence]].append({
            "sentence": plan.hypotheses[pair], "score": float(choice.sentence_scores[sentence]),
            "unit": int(plan.unit_of_pair[pair]), "support": plan.premises[pair],
        })
    return rows
