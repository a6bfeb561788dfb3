"""Tokenization overlapped with the model forward, so the accelerator does not wait for the CPU.

On a GPU the forward of a large encoder gets 50-200x faster than on a CPU core, while tokenization stays on the
CPU: run one after the other, tokenization becomes most of the wall time. So the rows of a call are tokenized
ahead of the model, in background threads (the fast tokenizers' Rust encoder releases the GIL), through a bounded
queue so memory stays flat.

The batches must not depend on how the work is spread, or an overlapped run would not give the bytes of a
sequential one (MC dropout masks follow the batch shapes). So the plan is fixed by the inputs alone:

1. rows are ordered longest first by characters (a stand-in for token length that is known before tokenizing);
2. cut into slices in that order: :data:`FIRST_SLICE_ROWS` rows, doubling up to :data:`SLICE_ROWS`;
3. each slice is tokenized, sorted by token length and batched under the token budget inside the slice
   (:func:`learned_metrics.scoring.batching.predict_probabilities`).

``workers`` only decides where step 3's tokenization runs: 0 = in the calling thread, just before the slice's
forward (the sequential pipeline); N > 0 = N threads, at most N + 1 slices ahead. Neighbouring rows in character
order have near-equal token lengths, so batches inside a slice pad about as little as a sort of the whole call.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from learned_metrics.validate import int_at_least
from learned_metrics.workers import available_cores

T = TypeVar("T")
R = TypeVar("R")

# Rows tokenized (and length-sorted) together: large enough that batches inside a slice pad little, small
# enough that the first forward starts after one slice is tokenized and a queued slice costs megabytes.
SLICE_ROWS = 2048
FIRST_SLICE_ROWS = 256
# Most background tokenizer threads chosen automatically on a GPU: a few keep an H100 fed on short pairs; more
# only contend for the GIL the tokenizer's Python wrapper holds between Rust calls.
MAX_AUTO_WORKERS = 4


def tokenizer_workers(requested: int | None, device_type: str, torch_threads: int, processes: int = 1) -> int:
    """Background tokenizer threads: ``requested`` if given, at most the cores available (0 = none: tokenize, then
    run the model).

    Automatic: on a GPU the cores this process may use less one for the thread that drives the GPU (at most
    :data:`MAX_AUTO_WORKERS`); on a CPU only the cores torch's own threads leave free, none when torch has them
    all: a tokenizer thread beside torch's threads on the same cores made a 2-core run up to 16% slower than no
    thread at all, while with a core of its own it overlaps fully (bench/README.md, "Tokenization overlapped
    with the forward"). Under ``processes`` processes on one machine (``accelerate launch``) each counts its
    share of the cores.
    """
    if requested is not None:  # at most one per core: more only add threads (and tokenizer copies) that wait
        return min(int_at_least(requested, 0, "tokenizer_workers"), available_cores())
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
        self.tokenize += other.tokenize
        self.forward += other.forward
        self.wait += other.wait
        self.wall += other.wall

    @property
    def busy_share(self) -> float | None:
        """Share of the wall time the model was not waiting for tokens (None before anything ran)."""
        return None if self.wall <= 0 else max(0.0, 1.0 - self.wait / self.wall)

    def to_json(self) -> dict[str, float]:
        return {"tokenize_seconds": self.tokenize, "forward_seconds": self.forward, "wait_seconds": self.wait,
                "wall_seconds": self.wall}


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
    lengths = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        lengths += np.fromiter(map(len, column), dtype=np.int64, count=len(column))
    order = np.argsort(-lengths, kind="stable")
    bounds = np.cumsum([0, *slice_sizes(len(order), rows, first)])
    return [order[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]


def ordered_map(function: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """``function(item)`` for each item, yielded in order; with ``workers`` > 0 computed in that many threads,
    at most ``workers + 1`` items ahead of the consumer.

    When the consumer stops early (an error, a signal, ``close()``), queued items are cancelled and the ones
    already running are waited for, so nothing runs on after the generator is closed.
    """
    if workers <= 0:
        for item in items:
            yield function(item)
        return
    source = iter(items)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="learned-metrics-tokenize")
    pending: deque[Future[R]] = deque()
    try:
        for item in source:
            pending.append(pool.submit(function, item))
            if len(pending) > workers:
                break
        while pending:
            result = pending.popleft().result()
            for item in source:  # refill before handing the result over, so the pool works meanwhile
                pending.append(pool.submit(function, item))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        wait(pending)
        pool.shutdown(wait=True)


class TokenizerCopies:
    """One tokenizer per background thread. A fast tokenizer's settings (truncation) live in its Rust backend,
    which refuses concurrent use ("Already borrowed"), so threads never share one. The first thread uses the
    original (the caller does not tokenize while a stream runs); copies are made once and kept."""

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
                    try:
                        buffer.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
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
            try:  # unblock a producer waiting on a full buffer; it stops after the item it is reading
                buffer.get_nowait()
            except queue.Empty:
                pass
            thread.join(timeout=0.05)
