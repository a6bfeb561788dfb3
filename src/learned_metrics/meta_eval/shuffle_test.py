"""Shuffle test: how often does a coherence measure score an original above a shuffled text (a tie one half)? The CI
resamples pair ids, so the comparisons of one original move together; the length-gap breakdown shows whether the
measure merely prefers longer texts, sparse buckets merged (a CI over a handful of comparisons says nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import plain_value
from learned_metrics.meta_eval.data import ShuffleRows
from learned_metrics.meta_eval.length_gap import BUCKET_CENTRES, BUCKET_LIMIT, BUCKET_WIDTH, gap_buckets
from learned_metrics.meta_eval.options import ShuffleTestSettings, confidence_level
from learned_metrics.meta_eval.resampling import Estimate, bootstrap_weights, estimate_from, interval, records_frame
from learned_metrics.meta_eval.rows import by_index
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.validate import key, numbers


@dataclass(frozen=True)
class ShufflePairs:
    """Comparisons: original score, shuffled score, index of the pair id, length gap (or None)."""

    original: np.ndarray
    shuffled: np.ndarray
    pair_index: np.ndarray
    pair_ids: list[str]
    length_gap: np.ndarray | None


@dataclass(frozen=True)
class LengthBucket:
    """Accuracy of the comparisons whose length gap is in [low, high) (open at the clamps), its CI (``None`` without
    resamples, or under ``min_bucket_pairs`` comparisons) and the resamples that left it empty; ``gap``: the centre
    (of a merged bucket: the midpoint of its first and last 20-character buckets' centres)."""

    gap: int
    low: int | None
    high: int | None
    pairs: int
    accuracy: float | None
    ci: tuple[float, float] | None = None
    nan_resamples: int = 0

    def to_json(self) -> dict:
        return {"gap": self.gap, "from": self.low, "to": self.high, "pairs": self.pairs, "accuracy": self.accuracy,
                "ci": None if self.ci is None else list(self.ci), "nan_resamples": self.nan_resamples}


@dataclass(frozen=True)
class ShuffleReport(Tabular):
    """Accuracy with CI (``n`` comparisons), ties among them, pair ids, and length-gap buckets if asked."""

    accuracy: Estimate
    ties: int
    pair_ids: int
    buckets: list[LengthBucket] | None
    settings: ShuffleTestSettings = ShuffleTestSettings()

    @property
    def min_bucket_pairs(self) -> int:
        """The merge threshold the buckets were built with (the length-gap figure reads it)."""
        return self.settings.min_bucket_pairs

    def tables(self) -> list[Table]:
        o, acc = self.settings, self.accuracy
        intervals, heading = o.intervals("pair ids redrawn"), f"accuracy, {confidence_level(o.confidence)} CI"
        out = [Table([Column("accuracy", heading, kind="estimate", share=True), Column("comparisons", kind="count"),
                      Column("ties", kind="count"), Column("pair_ids", "pair ids", kind="count")],
                     [[Cell(acc.value, acc.ci), acc.n, self.ties, self.pair_ids]],
                     title=f"shuffle test · {o.resamples} bootstrap resamples of pair ids, seed {o.seed}",
                     caption=f"Share of (original, shuffled) comparisons where the original scores higher (a tie "
                     f"counts 1/2), with {intervals}, seed {o.seed}.", key="shuffle_test")]
        if self.buckets is not None:
            few = f"fewer than {o.min_bucket_pairs} comparisons: no CI"
            rows = [[b.gap, f"[{'-inf' if b.low is None else b.low}, {'+inf' if b.high is None else b.high})",
                     b.pairs, Cell(b.accuracy, b.ci, detail=few if b.pairs < o.min_bucket_pairs else None)]
                    for b in self.buckets if b.pairs]
            merged = (f" Adjacent buckets with fewer than {o.min_bucket_pairs} comparisons merged."
                      if o.min_bucket_pairs else "")
            out.append(Table([Column("gap", kind="count"), Column("range", kind="text"), Column("comparisons",
                              kind="count"), Column("accuracy", heading, kind="estimate", share=True)], rows,
                             title="accuracy by length gap (original - shuffled, characters)",
                             caption=f"Accuracy per length-gap bucket of {BUCKET_WIDTH} characters (original minus "
                             f"shuffled, clamped to +-{BUCKET_LIMIT}), with {intervals} (the same resamples).{merged}",
                             key="by_length_gap"))
        return out

    def to_json(self) -> dict:
        buckets = {} if self.buckets is None else {"min_bucket_pairs": self.min_bucket_pairs,
                                                   "by_length_gap": [b.to_json() for b in self.buckets]}
        return {"accuracy": self.accuracy.to_json(), "ties": self.ties, "pair_ids": self.pair_ids, **buckets}

    def to_frame(self):
        """One row for all comparisons (``gap`` missing), then one per length-gap bucket if asked, for notebooks:
        ``pairs`` comparisons, ``accuracy`` with ``ci_low``/``ci_high``."""
        acc = self.accuracy
        overall = LengthBucket(None, None, None, acc.n, acc.value, acc.ci, acc.nan_resamples).to_json()
        frame = records_frame([overall, *(b.to_json() for b in self.buckets or [])])
        return frame.astype({"gap": "Int64", "from": "Int64", "to": "Int64"})


def pairs_from_rows(rows: ShuffleRows, path: object = None, *, pair_field: str = "doc_id") -> ShufflePairs:
    """Match each pair id's original with its shuffled rows; exactly one original per pair id."""
    originals: dict[str, int] = {}
    shuffled: dict[str, list[int]] = {}
    for i, (pair_id, label) in enumerate(zip(rows.pair_ids, rows.is_original, strict=True)):
        if label == 1:
            if pair_id in originals:
                raise UserError(f"second original for {pair_field}={pair_id!r} (first at row "
                                f"{rows.rows[originals[pair_id]]})", path=path, row=rows.rows[i])
            originals[pair_id] = i
        else:
            shuffled.setdefault(pair_id, []).append(i)
    for pair_id, members in shuffled.items():
        if pair_id not in originals:
            raise UserError(f"shuffled text of {pair_field}={pair_id!r} has no original", path=path,
                            row=rows.rows[members[0]])
    lonely = [p for p in originals if p not in shuffled]
    if lonely:
        raise UserError(f"original of {pair_field}={lonely[0]!r} has no shuffled text ({len(lonely)} such pair id(s))",
                        path=path, row=rows.rows[originals[lonely[0]]])
    pair_ids = list(originals)
    orig_rows = [originals[p] for p in pair_ids for _ in shuffled[p]]
    shuf_rows = [j for p in pair_ids for j in shuffled[p]]
    gaps = None if rows.lengths is None else rows.lengths[orig_rows] - rows.lengths[shuf_rows]
    return ShufflePairs(rows.scores[orig_rows], rows.scores[shuf_rows],
                        np.repeat(np.arange(len(pair_ids)), [len(shuffled[p]) for p in pair_ids]), pair_ids, gaps)


def merge_sparse_buckets(counts: np.ndarray, minimum: int) -> list[tuple[int, int]]:
    """Runs ``[first, last]`` of adjacent bucket indices, each with at least ``minimum`` comparisons when the total
    allows: the sparsest bucket (ties: the one farthest from gap 0, then the leftmost) joins its smaller neighbour
    (ties: the one nearer gap 0), until none is below ``minimum``. ``minimum`` 0 keeps every bucket."""
    runs = [[k, k, int(n)] for k, n in enumerate(counts)]
    middle = (len(counts) - 1) / 2
    while len(runs) > 1:
        sparse = [i for i, run in enumerate(runs) if run[2] < minimum]
        if not sparse:
            break
        i = min(sparse, key=lambda i: (runs[i][2], -abs((runs[i][0] + runs[i][1]) / 2 - middle), i))
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(runs)]
        j = min(neighbours, key=lambda j: (runs[j][2], abs((runs[j][0] + runs[j][1]) / 2 - middle)))
        a, b = sorted((i, j))
        runs[a:b + 1] = [[runs[a][0], runs[b][1], runs[a][2] + runs[b][2]]]
    return [(first, last) for first, last, _ in runs]


def _bucket_table(outcome: np.ndarray, index: np.ndarray, wins: np.ndarray, counts: np.ndarray,
                  minimum: int, confidence: float) -> list[LengthBucket]:
    """One bucket per run of :func:`merge_sparse_buckets` over the comparisons' bucket ``index``; ``wins``/``counts``
    are the (resamples x buckets) weighted wins and comparisons of each resample, so a merged bucket's accuracy in a
    resample is the ratio of its buckets' sums (NaN where the resample leaves it empty)."""
    table = []
    for first, last in merge_sparse_buckets(np.bincount(index, minlength=len(BUCKET_CENTRES)), minimum):
        members = (index >= first) & (index <= last)
        pairs = int(members.sum())
        low = None if first == 0 else int(BUCKET_CENTRES[first]) - BUCKET_WIDTH // 2
        high = None if last == len(BUCKET_CENTRES) - 1 else int(BUCKET_CENTRES[last]) + BUCKET_WIDTH // 2
        drawn = None
        if pairs and pairs >= minimum:
            with np.errstate(invalid="ignore", divide="ignore"):
                samples = wins[:, first:last + 1].sum(axis=1) / counts[:, first:last + 1].sum(axis=1)
            drawn = interval(samples, confidence)
        centre = (int(BUCKET_CENTRES[first]) + int(BUCKET_CENTRES[last])) // 2
        table.append(LengthBucket(centre, low, high, pairs, float(outcome[members].mean()) if pairs else None,
                                  drawn.ci if drawn else None, drawn.dropped if drawn else 0))
    return table


def pair_numbers(pair_index: object, size: int) -> np.ndarray:
    """Each comparison's pair id as 0, 1, ... in order of first appearance: ``pair_index`` holds labels (ints, names,
    ``1``/``1.0``/``"1"`` one id, as keys are everywhere), never array positions, so sparse, negative or fractional ids
    and document names all group the comparisons of one original; one per comparison, none missing. None: each
    comparison its own pair id."""
    if pair_index is None:
        return np.arange(size)
    values = (None if isinstance(pair_index, (str, bytes)) or not hasattr(pair_index, "__len__")
              else list(pair_index.tolist() if hasattr(pair_index, "tolist") else pair_index))
    if values is None or len(values) != size:
        got = f"{len(values)} values" if values is not None else type(pair_index).__name__
        raise UserError(f"pair_index needs one pair id per comparison ({size}), got {got}")
    numbers: dict[str, int] = {}
    return np.array([numbers.setdefault(key(plain_value(value), field=f"pair_index[{i}]"), len(numbers))
                      for i, value in enumerate(values, start=1)], dtype=np.int64)


@takes(ShuffleTestSettings)
def shuffle_test(original: object, shuffled: object, *, pair_index: object = None, length_gap: object = None,
                 settings: ShuffleTestSettings) -> ShuffleReport:
    """Accuracy that originals outscore their shuffles (tie = 0.5), CI by resampling ``pair_index`` (one pair id per
    comparison, a label: those of one original share it; default: each its own; :func:`pair_numbers`).
    ``length_gap`` (original minus shuffled length in characters) adds the buckets, those under ``min_bucket_pairs``
    comparisons merged with a neighbour (0: never)."""
    original, shuffled, pair_index, length_gap = by_index(("original", original), ("shuffled", shuffled),
                                                          ("pair_index", pair_index), ("length_gap", length_gap))
    original, shuffled = numbers(original, "original"), numbers(shuffled, "shuffled")
    if original.shape != shuffled.shape or original.ndim != 1 or original.size == 0:
        raise UserError("original and shuffled scores must be non-empty 1-D arrays of equal length")
    pair_index = pair_numbers(pair_index, original.size)
    outcome = np.where(original > shuffled, 1.0, np.where(original == shuffled, 0.5, 0.0))
    n_pairs = int(pair_index.max()) + 1
    gaps = None if length_gap is None else np.asarray(length_gap, dtype=np.float64)
    if gaps is not None and gaps.shape != original.shape:
        raise UserError(f"length_gap needs one value per comparison ({original.size}), got shape {gaps.shape}")
    # wins and comparisons per (pair id, length-gap bucket; one column without gaps): a resample's totals are one
    # product with its counts
    index = np.zeros(original.size, np.int64) if gaps is None else (gap_buckets(gaps) + BUCKET_LIMIT) // BUCKET_WIDTH
    wins, comparisons = np.zeros((2, n_pairs, 1 if gaps is None else len(BUCKET_CENTRES)))
    np.add.at(wins, (pair_index, index), outcome)
    np.add.at(comparisons, (pair_index, index), 1.0)
    drawn = [(counts @ wins, counts @ comparisons)
             for counts, _ in bootstrap_weights(n_pairs, 1, settings.resamples, "documents", settings.seed)]
    win_samples, count_samples = ([np.concatenate(part) for part in zip(*drawn, strict=True)]
                                  or [np.empty((0, wins.shape[1]))] * 2)
    accuracy = estimate_from(float(outcome.mean()), win_samples.sum(axis=1) / count_samples.sum(axis=1),
                             n=int(outcome.size), confidence=settings.confidence)
    buckets = None if gaps is None else _bucket_table(outcome, index, win_samples, count_samples,
                                                      settings.min_bucket_pairs, settings.confidence)
    return ShuffleReport(accuracy, int((outcome == 0.5).sum()), n_pairs, buckets, settings)
