"""Resumable file scoring: every finished chunk is kept beside the output until the whole run is done.

A scoring run of hours must survive ``kill -9``, preemption and an out-of-memory
kill. The runner hands each finished chunk to a :class:`ChunkStore`: the chunk's
rows go to ``part-NNNNNN`` in the output's own format (written to a temporary
name and renamed), then ``progress.json`` records the count and the run's
counters. ``--resume`` continues after the last recorded chunk when the run's
fingerprint (input file, model files, options, chunk size) is unchanged; at
the end the parts are joined into the output (atomically, as every output) and
the folder is removed. A resumed file equals an uninterrupted one byte for byte:
chunks are the same rows, and MC dropout seeds each chunk from ``(seed, chunk)``.

The folder is ``.<output name>.lmresume`` beside the output. It is removed only
when it holds nothing but what this module writes, and a lock keeps two runs
from writing the same output at once.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import RowSink, iter_rows, open_sink
from learned_metrics.outputs import make_parents, remove_created

PROGRESS_NAME = "progress.json"
LOCK_NAME = "lock"
PROGRESS_KIND = "learned-metrics scoring progress"
_PART = "part-{:06d}"


def store_folder(output: Path) -> Path:
    return output.with_name(f".{output.name}.lmresume")


def files_stamp(path: str | os.PathLike) -> str:
    """Names, sizes and modification times of a file or of a folder's files: a retrained model is another model."""
    path = Path(path)
    if not path.exists():
        return str(path)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        info = file.stat()
        digest.update(f"{file.name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


class ChunkStore:
    """Finished chunks of one scoring run (see the module docstring)."""

    def __init__(self, output: Path, fmt: str, fingerprint: dict[str, Any]):
        self.output = output
        self.folder = store_folder(output)
        self.format = fmt
        self.fingerprint = fingerprint
        self.state: dict[str, Any] = {}
        self._lock = None
        self._schema = None  # Parquet: every part gets the first part's columns
        self._created: list[Path] = []  # folders made for the output, removed again if nothing lands there

    # -- opening -------------------------------------------------------------------------------

    def open(self, *, resume: bool, restart: bool) -> dict[str, Any]:
        """Lock the folder and return the state to continue from (``chunks`` = 0 for a fresh start)."""
        if self.folder.exists() or self.folder.is_symlink():
            self._check_ours()
            self._take_lock()
            earlier = self._read_progress()
            if resume:
                self._check_same_run(earlier)
                self.state = earlier
                return self.state
            if not restart and earlier.get("chunks"):
                self.close()
                raise UserError(f"an interrupted run left {earlier.get('rows', 0):,} scored rows in {self.folder}: "
                                "add --resume to continue it, or --restart to score from the beginning",
                                path=self.output)
            self._remove_parts()
        else:
            self._created = make_parents(self.folder.parent)
            self.folder.mkdir()
            self._take_lock()
        self.state = {"kind": PROGRESS_KIND, "fingerprint": self.fingerprint, "chunks": 0, "rows": 0}
        self._write_progress()
        return self.state

    def _check_ours(self) -> None:
        if self.folder.is_symlink() or not self.folder.is_dir():
            raise UserError(f"{self.folder} exists and is not a progress folder of learned-metrics; nothing is "
                            "deleted: move it away", path=self.output)
        foreign = [p.name for p in self.folder.iterdir() if not self._is_ours(p.name)]
        if foreign:
            shown = ", ".join(sorted(foreign)[:3])
            raise UserError(f"{self.folder} holds files learned-metrics did not write ({shown}); nothing is deleted: "
                            "move them away", path=self.output)

    @staticmethod
    def _is_ours(name: str) -> bool:
        return name in (PROGRESS_NAME, LOCK_NAME, f"{PROGRESS_NAME}.tmp") or name.startswith("part-")

    def _take_lock(self) -> None:
        handle = (self.folder / LOCK_NAME).open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise UserError("another scoring run is writing this output right now", path=self.output) from None
        self._lock = handle

    def _read_progress(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / PROGRESS_NAME).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or data.get("kind") != PROGRESS_KIND or not isinstance(data.get("chunks"), int):
            raise UserError(f"{self.folder / PROGRESS_NAME} is damaged; pass --restart to score from the beginning",
                            path=self.output)
        return data

    def _check_same_run(self, earlier: dict[str, Any]) -> None:
        before = earlier.get("fingerprint") or {}
        changed = [key for key in sorted({*before, *self.fingerprint}) if before.get(key) != self.fingerprint.get(key)]
        if changed:
            shown = "; ".join(f"{key}: {before.get(key)!r} then, {self.fingerprint.get(key)!r} now"
                              for key in changed[:3])
            raise UserError(f"cannot resume: the earlier run differs ({shown}); run the same command, or pass "
                            "--restart instead of --resume to score from the beginning", path=self.output)

    # -- saving --------------------------------------------------------------------------------

    def save(self, rows: list[dict[str, Any]], counters: dict[str, Any]) -> None:
        """Keep the next chunk's output rows and the run's counters after it (the part first, then the record).

        ``counters["fieldnames"]`` are the CSV columns of every part (the header is written once, at the join).
        """
        index = self.state["chunks"]
        part = self.part_path(index)
        tmp = part.with_name(part.name + ".tmp")
        handle = open_sink(tmp, self.format)
        sink = RowSink(handle, self.format, counters.get("fieldnames"), header=False, schema=self._parquet_schema(),
                       path=self.output)
        try:
            sink.write(rows)
            self._schema = sink.schema
        finally:
            sink.close()
            if not isinstance(handle, str):
                handle.close()
        os.replace(tmp, part)
        self.state.update(counters, chunks=index + 1)
        self._write_progress()

    def _parquet_schema(self):
        if self.format == "parquet" and self._schema is None and self.state.get("chunks"):
            import pyarrow.parquet as pq

            self._schema = pq.read_schema(self.part_path(0))
        return self._schema

    def part_path(self, index: int) -> Path:
        return self.folder / (_PART.format(index) + "." + self.format)

    def _write_progress(self) -> None:
        tmp = self.folder / f"{PROGRESS_NAME}.tmp"
        tmp.write_text(json.dumps(self.state, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / PROGRESS_NAME)

    # -- reading back and finishing ---------------------------------------------------------------

    def iter_part_rows(self, index: int) -> Iterator[dict[str, Any]]:
        """Rows of a chunk finished by an earlier process (for the end-of-run summary)."""
        fieldnames = self.state.get("fieldnames")
        path = self.part_path(index)
        if self.format == "csv":
            with path.open(encoding="utf-8", newline="") as handle:
                yield from csv.DictReader(handle, fieldnames=fieldnames)
            return
        for _, row in iter_rows(path, self.format):
            yield row

    def join_into(self, target: Path, fieldnames: list[str] | None, metadata: dict[str, str] | None = None) -> None:
        """Write every part, in order, into ``target`` (a temporary of the output): header once, one footer
        (Parquet: with ``metadata`` in its schema metadata)."""
        if self.format == "parquet":
            import pyarrow.parquet as pq

            handle = open_sink(target, "parquet")
            sink = RowSink(handle, "parquet", path=self.output, metadata=metadata)
            try:
                for index in range(self.state["chunks"]):
                    sink.write_table(pq.read_table(self.part_path(index)))
            finally:
                sink.close()
            return
        with target.open("wb") as out:
            if self.format == "csv" and fieldnames:
                header = io.StringIO()
                csv.writer(header).writerow(fieldnames)  # the same dialect as the parts' rows
                out.write(header.getvalue().encode("utf-8"))
            for index in range(self.state["chunks"]):
                with self.part_path(index).open("rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)

    def _remove_parts(self) -> None:
        for entry in self.folder.iterdir():
            if entry.name != LOCK_NAME and self._is_ours(entry.name):
                entry.unlink()

    def remove(self) -> None:
        """The run is over (done, or failed for a reason a rerun cannot fix): delete what this module wrote."""
        if self.folder.is_dir():
            self._remove_parts()
            with contextlib.suppress(OSError):
                (self.folder / LOCK_NAME).unlink()
            with contextlib.suppress(OSError):
                self.folder.rmdir()
        self.close()
        remove_created(self._created)

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None
