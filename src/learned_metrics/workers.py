"""Independent meta-evaluation jobs (metric pairs of a significance table, metrics of a report) on all cores.

Each job is already vectorized over its resamples on one BLAS thread (see
:func:`~.resampling.single_threaded_blas`), so the cores are best used by running jobs side by side. Workers are
forked (no re-import, the inputs are inherited), results come back in the order of the jobs, and every job draws
its resamples from its own seed, so the results are identical whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from learned_metrics.validate import int_at_least

T = TypeVar("T")


def available_cores() -> int:
    """The cores this process may run on (a container's or a SLURM job's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int | None, jobs: int) -> int:
    """``None`` = every available core; never more workers than jobs."""
    wanted = available_cores() if workers is None else int_at_least(workers, 1, "workers")
    return max(1, min(wanted, jobs))


def run_jobs(function: Callable[..., T], jobs: Sequence[tuple[Any, ...]], workers: int | None = None) -> list[T]:
    """``[function(*job) for job in jobs]``, on up to ``workers`` forked processes when that can help."""
    count = resolve_workers(workers, len(jobs))
    if count == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(*job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    import scipy.stats  # noqa: F401  (imported lazily by the jobs: once here, not once per forked worker)

    with ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(function, *zip(*jobs, strict=True)))
