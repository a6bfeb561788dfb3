"""Tokenize once, batch by length under a token budget, pad per batch, restore input order.

Longest first (an out-of-memory error shows on the first batch, not after an hour), padded to the batch's longest
row; ids stored flat as int32 with row offsets: megabytes per 10,000 long rows, not gigabytes of Python lists."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from learned_metrics.errors import UserError
from learned_metrics.scoring.mc_dropout import KeyedDropout, forward_passes
from learned_metrics.text.encoding import tokenize

# Rows per tokenizer call: fast tokenizers parallelise inside a call, and the lists they return stay small.
TOKENIZE_SLICE = 2048


@dataclass
class Encoded:
    """Token ids of N inputs, stored flat; ``truncated`` marks rows cut to ``max_length``."""

    ids: np.ndarray
    offsets: np.ndarray
    type_ids: np.ndarray | None
    truncated: np.ndarray
    second_truncated: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def tokens(self) -> int:
        return int(self.offsets[-1])


def encode(tokenizer, first: Sequence[str], second: Sequence[str] | None, max_length: int) -> Encoded:
    """Tokenize texts (or text pairs) once, truncating as training does (:mod:`learned_metrics.text.encoding`),
    into flat int32 arrays."""
    ids: list[np.ndarray] = []
    type_ids: list[np.ndarray] = []
    truncated: list[bool] = []
    second_cut: list[bool] = []
    for start in range(0, len(first), TOKENIZE_SLICE):
        stop = start + TOKENIZE_SLICE
        out = tokenize(tokenizer, first[start:stop], None if second is None else second[start:stop], max_length)
        ids += [np.asarray(row, dtype=np.int32) for row in out.columns["input_ids"]]
        if "token_type_ids" in out.columns:
            type_ids += [np.asarray(row, dtype=np.int32) for row in out.columns["token_type_ids"]]
        truncated += out.truncated
        second_cut += out.second_truncated
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in ids], out=offsets[1:])
    flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int32)
    flat_types = np.concatenate(type_ids) if ids and len(type_ids) == len(ids) else None
    return Encoded(flat, offsets, flat_types, np.asarray(truncated, bool), np.asarray(second_cut, bool))


def plan_batches(lengths: np.ndarray, max_tokens: int, max_rows: int | None = None,
                 bucket: int | None = None) -> list[np.ndarray]:
    """Row indices per batch: longest first, each batch's ``rows x longest`` within ``max_tokens``; with ``bucket``
    a batch holds rows of one padded width only (lengths rounded up to a multiple of ``bucket``, as :func:`collate`
    pads them), so per-row MC masks keep their shapes whatever the row's neighbours."""
    lengths = np.asarray(lengths)
    order = np.argsort(-lengths, kind="stable")
    if bucket:  # the padded widths, negated: ascending, so where a width's run ends is a binary search
        negated = (-lengths[order] // bucket) * bucket
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        longest = int(lengths[order[start]])
        rows = min(max(1, max_tokens // max(longest, 1)), max_rows or len(order))
        if bucket:
            rows = min(rows, int(np.searchsorted(negated, negated[start], side="right")) - start)
        batches.append(order[start : start + rows])
        start += rows
    return batches


def collate(encoded: Encoded, rows: np.ndarray, pad_id: int, padding_side: str = "right",
            pad_to_multiple_of: int | None = None) -> dict[str, torch.Tensor]:
    """Pad the given rows to the longest of them (dynamic padding) and build the model inputs."""
    lengths = encoded.lengths[rows]
    width = int(lengths.max())
    if pad_to_multiple_of:
        width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
    batch = {"input_ids": np.full((len(rows), width), pad_id, dtype=np.int64),
             "attention_mask": np.zeros((len(rows), width), dtype=np.int64)}
    if encoded.type_ids is not None:
        batch["token_type_ids"] = np.zeros((len(rows), width), dtype=np.int64)
    for j, (row, length) in enumerate(zip(rows, lengths, strict=True)):
        span = slice(encoded.offsets[row], encoded.offsets[row + 1])
        cols = slice(width - length, width) if padding_side == "left" else slice(0, length)
        batch["input_ids"][j, cols] = encoded.ids[span]
        batch["attention_mask"][j, cols] = 1
        if encoded.type_ids is not None:
            batch["token_type_ids"][j, cols] = encoded.type_ids[span]
    return {name: torch.from_numpy(array) for name, array in batch.items()}


@dataclass
class BatchSettings:
    """How a call is batched: token budget, optional row cap, padding."""

    max_tokens: int
    max_rows: int | None = None
    pad_id: int = 0
    padding_side: str = "right"
    pad_to_multiple_of: int | None = None


class OutOfMemoryWarning(UserWarning):
    """A batch did not fit the device's memory: the token budget was halved and the batch retried."""


def predict_probabilities(model, encoded: Encoded, passes: int, settings: BatchSettings, device: torch.device,
                          progress: Callable[[int], None] | None = None, masks: KeyedDropout | None = None
                          ) -> np.ndarray:
    """Class probabilities of every pass, ``(passes, N, classes)``, rows in input order. Base batches get
    ``max_tokens / passes`` so the stacked MC copies fit one forward; out of device memory, ``settings.max_tokens``
    is halved (and kept by the caller) and the unscored rows batched again: only a single row can fail."""
    out = np.zeros((passes, len(encoded), model.config.num_labels), dtype=np.float64)
    bucket = (settings.pad_to_multiple_of or 1) if masks is not None else None  # per-row masks: one width a batch
    pending = plan_batches(encoded.lengths, max(1, settings.max_tokens // passes), settings.max_rows, bucket)
    with torch.inference_mode():
        while pending:
            rows = pending.pop(0)
            batch = collate(encoded, rows, settings.pad_id, settings.padding_side, settings.pad_to_multiple_of)
            batch = {name: t.to(device, non_blocking=True) for name, t in batch.items()}
            try:
                probs = forward_passes(model, batch, passes, settings.max_tokens, masks)
            except torch.OutOfMemoryError:
                del batch
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                pending = _smaller_batches(encoded, [rows, *pending], settings, passes, bucket)
                continue
            out[:, rows, :] = probs.cpu().numpy()
            if progress is not None:
                progress(len(rows))
    return out


@dataclass
class FeedCounts:
    """Per-row tokenization facts of a fed call, in input order (what :class:`Encoded` says of one slice)."""

    tokens: int
    truncated: np.ndarray
    second_truncated: np.ndarray


def predict_feed(model, feed, n_rows: int, passes: int, settings: BatchSettings, device: torch.device,
                 progress: Callable[[int], None] | None = None, masks: KeyedDropout | None = None
                 ) -> tuple[np.ndarray, FeedCounts]:
    """:func:`predict_probabilities` over the tokenized slices of a
    :class:`~learned_metrics.scoring.pipeline.SliceFeed` as they arrive: ``(passes, n_rows, classes)`` in input
    order, and the rows' token counts and truncation flags. The feed's ``timings.forward`` gets the model's time."""
    out = np.zeros((passes, n_rows, model.config.num_labels), dtype=np.float64)
    counts = FeedCounts(0, np.zeros(n_rows, dtype=bool), np.zeros(n_rows, dtype=bool))
    for rows, encoded in feed:
        start = time.perf_counter()
        out[:, rows, :] = predict_probabilities(model, encoded, passes, settings, device, progress, masks)
        feed.timings.forward += time.perf_counter() - start
        counts.tokens += encoded.tokens
        counts.truncated[rows] = encoded.truncated
        counts.second_truncated[rows] = encoded.second_truncated
    return out, counts


def _smaller_batches(encoded: Encoded, pending: list[np.ndarray], settings: BatchSettings, passes: int,
                     bucket: int | None) -> list[np.ndarray]:
    """After an out-of-memory error: half the token budget, the unscored rows batched again."""
    failed = pending[0]
    width = int(encoded.lengths[failed].max())
    if len(failed) == 1 and settings.max_tokens <= width * passes:
        raise UserError(f"out of device memory on a single input of {width} tokens; lower --max-length, use "
                        "--precision bf16/fp16 on a GPU, or fewer --mc-samples")
    settings.max_tokens = max(1, settings.max_tokens // 2)
    warnings.warn(f"out of device memory: token budget halved to {settings.max_tokens:,} and the batch retried",
                  OutOfMemoryWarning, stacklevel=3)
    remaining = np.concatenate(pending)
    budget = max(1, settings.max_tokens // passes)
    return [remaining[b] for b in plan_batches(encoded.lengths[remaining], budget, settings.max_rows, bucket)]
