"""Independent meta-evaluation jobs on all cores, and the one rule every forked process follows: it ends with its
parent (docs/safety.md "Ctrl-C, SIGTERM and kill -9"). Each job draws from its own seed, so results do not depend on
the number of workers; every pool starts inside :func:`worker_processes`, so no stop signal is lost."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from learned_metrics.boundary import STOP_SIGNALS
from learned_metrics.errors import CommandInterrupted, cause_among
from learned_metrics.validate import int_at_least

T = TypeVar("T")

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_CHECK_S = 0.5  # how often a watching thread looks for its parent
TERMINATE_WAIT_S = 5.0  # how long a terminated worker may take before it is killed
POOL_LOCK_WAIT_S = 1.0  # a healthy pool's idle workers give up the task queue's lock within milliseconds of the stop

_lock = threading.Lock()
_armed = 0  # worker_processes() blocks open in this process (a forked child inherits the count)
_hook_installed = False
# The process that forks and its main thread, as its children will see them. Set when a block opens (and in each
# armed child, for its own children), never in a hook that runs in the parent at fork: a signal handled inside
# such a hook is lost (CPython prints and drops exceptions raised there).
_owner_pid = _owner_main_thread = 0
_prctl: Any = None  # libc's prctl, resolved in the parent (no dlopen in a freshly forked child)


def available_cores() -> int:
    """The cores this process may run on (a container's or a SLURM job's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_jobs(function: Callable[..., T], jobs: Sequence[tuple[Any, ...]], workers: int | None = None) -> list[T]:
    """``[function(*job) for job in jobs]`` on up to ``workers`` forked processes (None: every core; at most jobs)."""
    count = max(1, min(available_cores() if workers is None else int_at_least(workers, 1, "workers"), len(jobs)))
    if count == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(*job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    import scipy.stats  # noqa: F401  (imported lazily by the jobs: once here, not once per forked worker)

    with worker_processes():
        pool = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_leave_stop_signals_to_the_parent)
        try:
            # the workers are forked here: SIGINT/SIGTERM wait, blocked (not lost), until they all run; they inherit
            # the mask, which their initializer lifts (fork means POSIX, so pthread_sigmask exists)
            previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
            try:
                results = pool.map(function, *zip(*jobs, strict=True))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            results = list(results)
        except BaseException:  # a stop signal, or a job failed: no point in finishing the others
            _terminate(pool)
            raise
        pool.shutdown()
        return results


@contextlib.contextmanager
def worker_processes() -> Iterator[None]:
    """Every process forked inside this block ends with this process; a stop signal is never lost to a pool. Wraps
    a library's pool too (``datasets.map(num_proc=...)`` forks out of reach of an initializer: applied at fork)."""
    global _armed, _owner_pid, _owner_main_thread
    _install_fork_hook()
    _bound_pool_termination()
    with _lock:
        _armed += 1
        _owner_pid, _owner_main_thread = os.getpid(), threading.main_thread().ident or 0
    try:
        yield
    except Exception as exc:
        stop = cause_among(exc, (CommandInterrupted, KeyboardInterrupt), hidden=True)
        if stop is None:
            raise
        raise stop from None  # the library's clean-up error hid the signal: it is still a stop
    finally:
        with _lock:
            _armed -= 1


def die_with_parent(parent: int, forked_by_main_thread: bool = True) -> None:
    """In a child of ``parent``, at its start: end (SIGTERM) as soon as ``parent`` does. The kernel's death signal
    follows the forking thread, so a child a helper thread forked (``multiprocess.Pool``) watches its parent instead."""
    # prctl(PR_SET_PDEATHSIG): the kernel sends SIGTERM when the parent's forking thread ends (where there is prctl)
    if not (forked_by_main_thread and _prctl is not None and _prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0):
        threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()
    if os.getppid() != parent:  # the parent was gone before the kernel was asked to tell
        os._exit(128 + signal.SIGTERM)


def _install_fork_hook() -> None:
    global _hook_installed, _prctl
    with _lock:
        if _hook_installed:
            return
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                _prctl = ctypes.CDLL(None, use_errno=True).prctl
                _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
                _prctl.restype = ctypes.c_int
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _hook_installed = True


def _after_fork_in_child() -> None:
    global _lock, _owner_pid, _owner_main_thread
    _lock = threading.Lock()  # another thread of the parent may have held it at the fork
    if _armed <= 0:
        return
    # Only the forking thread lives on in the child, under the same thread id.
    forked_by_main_thread = threading.get_ident() == _owner_main_thread
    parent = _owner_pid
    _owner_pid, _owner_main_thread = os.getpid(), threading.get_ident()  # for this child's own children
    # SIGINT/SIGTERM back to the default action, so a stop ends the child whichever thread gets it: the inherited
    # handler only sets a flag that a main thread blocked in the pool's queue lock never reads (terminate() hung).
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_DFL)
    die_with_parent(parent, forked_by_main_thread)


def _bound_pool_termination() -> None:
    """``Pool.terminate()`` (multiprocessing's, ``multiprocess``) waited forever for the task queue's lock, which a
    worker forked after Ctrl-C holds: now ``POOL_LOCK_WAIT_S``, then the queue is drained and the workers end."""
    for name in ("multiprocessing.pool", "multiprocess.pool"):
        with contextlib.suppress(ImportError):
            pool = importlib.import_module(name).Pool
            if not getattr(pool._help_stuff_finish, "_bounded", False):
                pool._help_stuff_finish = staticmethod(_help_stuff_finish)


def _help_stuff_finish(inqueue: Any, task_handler: threading.Thread, size: int) -> None:
    inqueue._rlock.acquire(timeout=POOL_LOCK_WAIT_S)
    while task_handler.is_alive() and inqueue._reader.poll():  # the task handler may be blocked on a full queue
        inqueue._reader.recv()
        time.sleep(0)


_help_stuff_finish._bounded = True  # type: ignore[attr-defined]


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(128 + signal.SIGTERM)


def _leave_stop_signals_to_the_parent() -> None:
    """A :func:`run_jobs` worker: Ctrl-C (sent to the whole process group) is the parent's to handle, which then
    terminates the pool; SIGTERM (from the parent, or the kernel when the parent dies) ends it at once, quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _terminate(pool: Any) -> None:
    """Stop a ``ProcessPoolExecutor`` now: pending jobs cancelled, running ones terminated, workers reaped (Python
    3.14's ``terminate_workers`` plus the wait; before it the workers are reachable only through ``_processes``)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    deadline = time.monotonic() + TERMINATE_WAIT_S
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
    # Before Python 3.12 concurrent.futures' exit hook could write to the wake-up pipe the manager thread closes
    # ("Exception ignored ... Bad file descriptor"): waiting for the thread closes the pipe first.
    if (manager := getattr(pool, "_executor_manager_thread", None)) is not None:
        manager.join(max(0.0, deadline - time.monotonic()))
