"""Class 3 of issue 20: worker processes die with their parent.

Found before: ``meta-eval report --workers 2`` stopped by SIGTERM or SIGINT kept its workers running until every
pending job had finished (the parent waited for them before it could exit); after ``kill -9`` of the parent both
workers ran on as orphans (~140 MB each) and, once their job was done, waited for more work forever. The same held
for ``prep shuffle-set --num-proc 2``: ``kill -9`` left the two ``datasets.map`` workers and the pool's manager
process behind, and SIGTERM or Ctrl-C ended in a ``TimeoutError`` traceback (datasets' clean-up replaced the stop
signal).

Now every process the project forks goes through ``learned_metrics.workers.worker_processes``: each child asks the
kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), the parent terminates its pool on a stop signal,
and a stop signal a library's clean-up replaced is raised again. The death signal follows the thread that forked,
so a child forked by a helper thread watches its parent instead (the pool's replacement workers, killed with that
thread while holding the pool's queue lock, made Ctrl-C hang ``datasets.map``).

The commands run as real subprocesses, each in a session of its own: "gone" means nothing of that session still
runs, and whatever is left is killed at the end of each test, even when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostile.hostile_tools import LEARNED_METRICS, PYTHON, ROOT
from learned_metrics.data.demo import write_coherence_documents

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")]

EXAMPLES = ROOT / "examples" / "meta_eval"
METRICS = ("metric_good.jsonl", "metric_weak.csv", "metric_length.jsonl", "metric_lexical.jsonl")
PARENT_EXIT_S = 10  # a parent that stops its workers exits in about a second
WORKERS_GONE_S = 5


def _report_command(json_out: Path, workers: int, resamples: int) -> list[str]:
    metrics = [arg for name in METRICS for arg in ("--metric", str(EXAMPLES / name))]
    return [*LEARNED_METRICS, "meta-eval", "report", "--human", str(EXAMPLES / "human.jsonl"), *metrics,
            "--workers", str(workers), "--resamples", str(resamples), "--permutations", str(resamples),
            "--json", str(json_out)]


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found.update(int(child) for child in (task / "children").read_text().split())
    return found


def _session(sid: int) -> set[int]:
    """Processes of session ``sid`` that still run (zombies waiting to be reaped do not count)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...
            if int(fields[3]) == sid and fields[0] != "Z":
                found.add(int(stat.parent.name))
    return found


@contextlib.contextmanager
def _started(cmd: list[str], tmp_path: Path) -> Iterator[subprocess.Popen]:
    """The command in a session of its own; on the way out every process of that session is killed."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "PROJECT_ROOT": str(ROOT)}
    # Files, not pipes: an orphaned worker would hold a pipe open and hang the reader.
    with (tmp_path / "stdout").open("w") as out, (tmp_path / "stderr").open("w") as err:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=out, stderr=err, start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the parent and anything left in its session
        proc.wait()


def _workers(proc: subprocess.Popen, count: int, tmp_path: Path, timeout: float = 120) -> set[int]:
    """The parent's children once ``count`` of them run (and have had a moment to start their jobs)."""
    deadline = time.monotonic() + timeout
    while len(children := _children(proc.pid)) < count:
        assert proc.poll() is None, (tmp_path / "stderr").read_text()[-3000:]
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    time.sleep(0.5)
    return children | _children(proc.pid)


def _left_behind(proc: subprocess.Popen, timeout: float = WORKERS_GONE_S) -> set[int]:
    """After the parent ended: what of its session still runs ``timeout`` seconds later (workers, their manager,
    replacements, grandchildren)."""
    proc.wait()
    deadline = time.monotonic() + timeout
    while (alive := _session(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _stopped(proc: subprocess.Popen, signum: int, tmp_path: Path, *, group: bool = False) -> None:
    """The parent exits within seconds, 128 + signal, one line and no traceback. ``group``: the signal goes to
    every process of the command, as Ctrl-C in a terminal does."""
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    try:
        proc.wait(timeout=PARENT_EXIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the parent was still running {PARENT_EXIT_S} s after {signal.Signals(signum).name}")
    err = (tmp_path / "stderr").read_text()
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == 128 + signum, (proc.returncode, err[-3000:])
    assert f"stopped by {signal.Signals(signum).name}" in err.splitlines()[-1]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_meta_eval_stop_signal_stops_the_workers(tmp_path, signum):
    output = tmp_path / "report.json"
    with _started(_report_command(output, workers=2, resamples=20_000), tmp_path) as proc:
        _workers(proc, 2, tmp_path)
        _stopped(proc, signum, tmp_path)
        assert not _left_behind(proc), "workers still running after the parent exited"
    assert not output.exists() and not [p.name for p in tmp_path.iterdir() if ".lmtmp-" in p.name]


def test_meta_eval_workers_exit_when_the_parent_is_killed(tmp_path):
    with _started(_report_command(tmp_path / "report.json", workers=2, resamples=20_000), tmp_path) as proc:
        _workers(proc, 2, tmp_path)
        proc.kill()
        assert not _left_behind(proc), "orphaned workers still running after kill -9 of the parent"


def test_meta_eval_results_do_not_depend_on_the_workers(tmp_path):
    """Control: the pool changes nothing in the results (two workers, one worker; both runs side by side)."""
    folders = {workers: tmp_path / f"workers{workers}" for workers in (2, 1)}
    with contextlib.ExitStack() as stack:
        runs = {}
        for workers, folder in folders.items():
            folder.mkdir()
            runs[workers] = stack.enter_context(_started(_report_command(folder / "report.json", workers, 100), folder))
        for workers, proc in runs.items():
            assert proc.wait(timeout=120) == 0, (folders[workers] / "stderr").read_text()[-3000:]
    results = []
    for folder in folders.values():
        report = json.loads((folder / "report.json").read_text())
        for varying in ("command", "workers"):
            report["settings"].pop(varying)
        results.append(report)
    assert results[0] == results[1]


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> Path:
    return write_coherence_documents(tmp_path_factory.mktemp("docs") / "docs.jsonl", 20_000, seed=1)


def _prep_command(documents: Path, output: Path) -> list[str]:
    return [*LEARNED_METRICS, "prep", "shuffle-set", "--source", f"jsonl:{documents}", "--output", str(output),
            "--num-proc", "2", "--shuffles-per-doc", "20"]


@pytest.mark.parametrize("stop", ["kill -9", "SIGTERM", "Ctrl-C"])
def test_data_prep_num_proc_workers_end_with_the_parent(documents, tmp_path, stop):
    """``datasets.map(num_proc=2)``: two pool workers plus the pool's manager process. Ctrl-C reaches them all; the
    pool then replaces its dead workers from a helper thread, which must not take the pool's clean-up down."""
    output = tmp_path / "set"
    with _started(_prep_command(documents, output), tmp_path) as proc:
        _workers(proc, 3, tmp_path)
        if stop == "kill -9":
            proc.kill()
        else:
            _stopped(proc, signal.SIGINT if stop == "Ctrl-C" else signal.SIGTERM, tmp_path, group=stop == "Ctrl-C")
        assert not _left_behind(proc), "data-prep workers still running after the parent ended"
    assert not output.exists()


THREAD_FORK_SCRIPT = """
import os, sys, threading, time
from learned_metrics.workers import worker_processes

def fork_sleeper(pids):
    pid = os.fork()
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    time.sleep(0.5)  # the child has set itself up before this thread ends
    pids.append(pid)

pids = []
with worker_processes():
    fork_sleeper(pids)
    thread = threading.Thread(target=fork_sleeper, args=(pids,))
    thread.start()
    thread.join()
print(*pids, flush=True)
time.sleep(120)
"""


def test_children_forked_by_a_thread_outlive_the_thread_not_the_process(tmp_path):
    """The kernel's death signal follows the forking thread: a child forked by a thread that ends (as
    ``multiprocess.Pool`` replaces workers) must live on, and still end with the process."""
    with _started([PYTHON, "-c", THREAD_FORK_SCRIPT], tmp_path) as proc:
        deadline = time.monotonic() + 60
        while not (tmp_path / "stdout").read_text().strip():
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "stderr").read_text()[-3000:]
            time.sleep(0.05)
        children = {int(pid) for pid in (tmp_path / "stdout").read_text().split()}
        time.sleep(1.0)
        assert children <= _session(proc.pid), "a child ended with the thread that forked it"
        proc.kill()
        assert not _left_behind(proc), "children still running after kill -9 of their parent"


def test_a_worker_forked_by_a_helper_thread_ends_on_sigterm_whichever_thread_gets_it():
    """The pool's replacement workers are forked by a helper thread, so they run a thread watching their parent
    beside their main thread, which idles blocked on the task-queue lock. Found: a SIGTERM the kernel handed to the
    watching thread only set Python's flag, the blocked main thread never acted on it, and ``Pool.terminate()``
    waited for the worker forever (Ctrl-C hung ``prep shuffle-set --num-proc 2`` about one run in seven under
    load). Here the parent sends SIGTERM to the watching thread itself (tgkill); the worker must end at once."""
    import ctypes
    import multiprocessing
    import threading

    from learned_metrics.boundary import stop_signals_raise
    from learned_metrics.workers import worker_processes

    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "tgkill"):
        pytest.skip("needs glibc's tgkill")
    ready, tell = os.pipe()
    forked: dict[str, int] = {}

    def fork_from_a_helper_thread() -> None:
        pid = os.fork()
        if pid == 0:  # the worker: block as an idle pool worker does, once its watching thread runs
            try:
                lock = multiprocessing.Lock()
                lock.acquire()
                while not [t for t in threading.enumerate() if t.name == "watch-parent"]:
                    time.sleep(0.01)
                os.write(tell, b"1")
                lock.acquire(timeout=20)
            finally:
                os._exit(0)  # still here after 20 s: the signal was lost
        forked["pid"] = pid

    with stop_signals_raise(), worker_processes():  # the parent's handler, inherited, as in a command
        helper = threading.Thread(target=fork_from_a_helper_thread)
        helper.start()
        helper.join()
    pid = forked["pid"]
    try:
        os.read(ready, 1)
        time.sleep(0.2)  # the main thread is in the lock now
        watcher = next(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir() if int(task.name) != pid)
        assert libc.tgkill(pid, watcher, signal.SIGTERM) == 0
        deadline = time.monotonic() + 5
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done[0] == pid, "the worker outlived a SIGTERM its watching thread received"
        assert os.WIFSIGNALED(done[1]) and os.WTERMSIG(done[1]) == signal.SIGTERM, done
    finally:
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(ready)
        os.close(tell)
