"""Tokenization overlapped with the model forward, so the accelerator does not wait for the CPU.

Rows are tokenized ahead of the model in background threads (Rust encoders release the GIL). The slices, so the
batches and MC masks, depend on the inputs alone, never on the workers: overlapped runs give sequential runs' bytes."""

from __future__ import annotations

import contextlib
import copy
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any, TypeVar

import numpy as np

from learned_metrics.workers import available_cores

T = TypeVar("T")
R = TypeVar("R")

# Rows tokenized and length-sorted together: batches inside a slice pad little, a queued slice costs megabytes.
SLICE_ROWS = 2048
FIRST_SLICE_ROWS = 256
# Most tokenizer threads chosen on a GPU: a few keep an H100 fed on short pairs; more only contend for the GIL.
MAX_AUTO_WORKERS = 4


def tokenizer_workers(requested: int | None, device_type: str, torch_threads: int, processes: int = 1) -> int:
    """Background tokenizer threads: ``requested`` (at most one per core), else on a GPU the cores less the one that
    drives it, on a CPU the cores torch's threads leave free (sharing them made a 2-core run up to 16% slower,
    bench/README.md). ``processes`` on one machine share the cores."""
    if requested is not None:
        return min(requested, available_cores())  # parsed (>= 0) by ScoringOptions
    cores = available_cores() // max(1, processes)
    if device_type == "cpu":
        return max(0, min(MAX_AUTO_WORKERS, cores - torch_threads))
    return max(1, min(MAX_AUTO_WORKERS, cores - 1))


@dataclass
class Timings:
    """Where a call's time went (seconds). ``forward`` is the model's share of the calling thread, ``wait`` the
    time it waited for tokenized rows (the accelerator idle), ``tokenize`` the tokenizer's own time, wherever it
    ran (with workers it overlaps ``forward``)."""

    tokenize: float = 0.0
    forward: float = 0.0
    wait: float = 0.0
    wall: float = 0.0

    def add(self, other: Timings) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def to_json(self) -> dict[str, float]:
        return {f"{name}_seconds": value for name, value in asdict(self).items()}


def slice_sizes(total: int, rows: int = SLICE_ROWS, first: int = FIRST_SLICE_ROWS) -> list[int]:
    """Rows per slice: ``first``, doubling up to ``rows``, then ``rows`` at a time. A small first slice lets the
    model start after a fraction of a slice's tokenization (the one wait nothing can overlap)."""
    sizes, size = [], max(1, min(first, rows))
    while total > 0:
        sizes.append(min(size, total))
        total -= sizes[-1]
        size = min(rows, 2 * size)
    return sizes


def slices_longest_first(*columns: Sequence[str], rows: int = SLICE_ROWS,
                         first: int = FIRST_SLICE_ROWS) -> list[np.ndarray]:
    """Input indices per slice (:func:`slice_sizes`): all rows longest first by characters, ties in input order."""
    lengths = sum(np.fromiter(map(len, column), dtype=np.int64, count=len(column)) for column in columns)
    order = np.argsort(-lengths, kind="stable")
    bounds = np.cumsum([0, *slice_sizes(len(order), rows, first)])
    return [order[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]


def ordered_map(function: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """``function(item)`` for each item, in order; with ``workers`` > 0 in that many threads, at most ``workers + 1``
    items ahead. Closed early, queued items are cancelled and running ones waited for: nothing runs on after."""
    if workers <= 0:
        yield from map(function, items)
        return
    source = iter(items)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="learned-metrics-tokenize")
    pending: deque[Future[R]] = deque()
    try:
        pending.extend(pool.submit(function, item) for item in islice(source, workers + 1))
        while pending:
            result = pending.popleft().result()
            # refill before handing the result over, so the pool works meanwhile
            pending.extend(pool.submit(function, item) for item in islice(source, 1))
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # queued items cancelled, running ones waited for


class TokenizerCopies:
    """One tokenizer per background thread: a fast tokenizer's Rust backend refuses concurrent use ("Already
    borrowed"). The first thread uses the original (the caller does not tokenize meanwhile); copies are kept."""

    def __init__(self, tokenizer: Any):
        self.original = tokenizer
        self._free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._free.put(tokenizer)
        self._lock = threading.Lock()
        self._made = 1

    def ensure(self, count: int) -> None:
        with self._lock:
            while self._made < count:
                self._free.put(copy.deepcopy(self.original))
                self._made += 1

    def run(self, function: Callable[[Any], R]) -> R:
        tokenizer = self._free.get()
        try:
            return function(tokenizer)
        finally:
            self._free.put(tokenizer)


@dataclass
class SliceFeed:
    """The tokenized slices of one call, in plan order, with the time spent producing and waiting for them."""

    slices: list[np.ndarray]
    encode: Callable[[Any, np.ndarray], Any]  # (tokenizer, input indices) -> Encoded
    tokenizers: TokenizerCopies
    workers: int
    timings: Timings = field(default_factory=Timings)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # workers add their time under it

    def _encode(self, rows: np.ndarray) -> tuple[np.ndarray, Any]:
        start = time.perf_counter()
        encoded = self.tokenizers.run(lambda tokenizer: self.encode(tokenizer, rows))
        with self._lock:
            self.timings.tokenize += time.perf_counter() - start
        return rows, encoded

    def __iter__(self) -> Iterator[tuple[np.ndarray, Any]]:
        self.tokenizers.ensure(self.workers)
        produced = ordered_map(self._encode, self.slices, self.workers)
        try:
            while True:
                start = time.perf_counter()
                item = next(produced, None)
                self.timings.wait += time.perf_counter() - start  # sequential: the whole tokenization
                if item is None:
                    return
                yield item
        finally:
            produced.close()


def prefetch(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """Items of ``items`` produced by a background thread, up to ``depth`` ahead (reading and parsing the next
    chunk of a file while the model scores this one). An error while producing is raised where the consumer
    reaches it, so it names the same row it would name without prefetching."""
    if depth <= 0:
        yield from items
        return
    done = object()
    buffer: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    with contextlib.suppress(queue.Full):
                        buffer.put((True, item), timeout=0.1)
                        break
                if stop.is_set():
                    return
            buffer.put((True, done))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            buffer.put((False, error))

    thread = threading.Thread(target=produce, name="learned-metrics-read", daemon=True)
    thread.start()
    try:
        while True:
            ok, item = buffer.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
        deadline = time.monotonic() + 1.0  # a producer blocked on a silent pipe is left behind (a daemon thread)
        while thread.is_alive() and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):  # unblock a producer waiting on a full buffer
                buffer.get_nowait()
            thread.join(timeout=0.05)
