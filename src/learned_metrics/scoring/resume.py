"""Resumable file scoring: every finished chunk is kept beside the output until the whole run is done.

A run must survive ``kill -9`` yet never mix two inputs or join a damaged part: each part's rows, size, SHA-256 and
the input's hash up to its end are in ``progress.json``, and nothing in the folder is trusted (docs/scoring.md)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import FORMATS, RowSink, iter_rows, merge_schemas, parquet_table, writing
from learned_metrics.outputs import make_parents, remove_created, shown_names
from learned_metrics.provenance import MC_ONLY, uses_mc

PROGRESS_NAME = "progress.json"
LOCK_NAME = "lock"
PROGRESS_KIND = "learned-metrics scoring progress"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOTALS = ("rows", "truncated")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts_problem(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(isinstance(k, str) and _is_count(v) for k, v in value.items()):
        return f"expected an object of whole numbers >= 0, got {value!r:.60}"
    return None


def _part_record_problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return f"expected an object or null, got {record!r:.60}"
    for key in ("rows", "bytes", "truncated"):
        if not _is_count(record.get(key)):
            return f"'{key}' must be a whole number >= 0, got {record.get(key)!r:.60}"
    for key in ("sha256", "input_sha256"):
        if not isinstance(record.get(key), str) or not _SHA256.fullmatch(record[key]):
            return f"'{key}' must be a SHA-256 in hex, got {record.get(key)!r:.60}"
    return _counts_problem(record.get("details"))


def _totals(finished: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's totals as its finished part records give them: written into, and checked against, progress.json."""
    details: Counter[str] = Counter()
    for record in finished:
        details.update(record["details"])
    return {"chunks": len(finished), **{key: sum(r[key] for r in finished) for key in _TOTALS},
            "details": dict(details)}


def progress_problem(data: Any) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for a progress record this module could not have written (its totals must agree
    with the part records); None when it is sound."""
    if not isinstance(data, dict):
        return "progress.json", f"expected a JSON object, got {type(data).__name__}"
    if data.get("kind") != PROGRESS_KIND:
        return "kind", f"expected {PROGRESS_KIND!r}, got {data.get('kind')!r:.60}"
    if not isinstance(data.get("fingerprint"), dict):
        return "fingerprint", f"expected an object, got {data.get('fingerprint')!r:.60}"
    parts = data.get("parts")
    if not isinstance(parts, list):
        return "parts", f"expected a list of part records, got {parts!r:.60}"
    for index, record in enumerate(parts):
        if record is not None and (problem := _part_record_problem(record)):  # None: a chunk not (yet) finished
            return "parts", f"part {index + 1}: {problem}"
    expected = _totals([record for record in parts if record is not None])
    for key in ("chunks", *_TOTALS):
        value, total = data.get(key), expected[key]
        if not _is_count(value):
            return key, f"expected a whole number >= 0, got {value!r:.60}"
        if value != total:
            return key, f"{value:,} does not agree with the part records ({total:,})"
    if problem := _counts_problem(data.get("details")):
        return "details", problem
    for key, optional in (("fieldnames", True), ("replaced", False)):
        names = data.get(key)
        if not ((names is None and optional) or (isinstance(names, list) and all(isinstance(n, str) for n in names))):
            return key, f"expected a list of column names{' or null' if optional else ''}, got {names!r:.60}"
    return None


class ChunkStore:
    """Finished chunks of one scoring run (see the module docstring)."""

    def __init__(self, output: Path, fmt: str, fingerprint: dict[str, Any]):
        self.output = output
        self.folder = output.with_name(f".{output.name}.lmresume")
        self.format = fmt
        self.fingerprint = fingerprint
        self.state: dict[str, Any] = {}
        self.notes: list[str] = []  # parts a resumed run scores again
        self.resumed = False  # the state continues an earlier run's (its work is not this run's to throw away)
        self._lock = None
        self._schema = None  # Parquet: the columns of the parts so far, merged (each part keeps its own)
        self._created: list[Path] = []  # folders made for the output, removed again if nothing lands there
        # parts in any output format are this module's: a resume with another --output-format is then refused by
        # the fingerprint, naming the formats (the other format's parts were called files it did not write)
        self._part_name = re.compile(rf"part-\d{{6}}\.({'|'.join(FORMATS)})(\.tmp)?")

    def open(self, *, resume: bool, restart: bool) -> dict[str, Any]:
        """Lock the folder and return the state to continue from (no finished part for a fresh start)."""
        if self.folder.exists() or self.folder.is_symlink():
            self._check_ours()
            self._take_lock()
            if not restart:
                earlier = self._read_progress(resume=resume)
                if resume and earlier.get("chunks"):
                    self.state, self.resumed = earlier, True
                    self._check_parts()
                    return self.state
                if earlier.get("chunks"):
                    self.close()
                    raise UserError(f"an interrupted run left {earlier['rows']:,} scored rows in {self.folder}: "
                                    "add --resume to continue it, or --restart to score from the beginning",
                                    path=self.output)
            self._remove_parts()
        else:
            self._created = make_parents(self.folder.parent)
            self.folder.mkdir()
            self._take_lock()
        self.state = {"kind": PROGRESS_KIND, "fingerprint": self.fingerprint, "chunks": 0, "rows": 0,
                      "truncated": 0, "details": {}, "fieldnames": None, "replaced": [], "parts": []}
        self._write_progress()
        return self.state

    def _check_ours(self) -> None:
        if self.folder.is_symlink() or not self.folder.is_dir():
            raise UserError(f"{self.folder} exists and is not a progress folder of learned-metrics; nothing is "
                            "deleted: move it away", path=self.output)
        if foreign := [p.name for p in self.folder.iterdir() if not self._is_ours(p)]:
            raise UserError(f"{self.folder} holds files learned-metrics did not write ({shown_names(foreign)}); "
                            "nothing is deleted: move them away", path=self.output)

    def _is_ours(self, entry: Path) -> bool:
        """Only the names this module writes, and only files: ``part-notes.txt`` or a ``.bak`` copy is the user's."""
        if entry.is_dir() and not entry.is_symlink():
            return False
        name = entry.name
        return name in (PROGRESS_NAME, LOCK_NAME, f"{PROGRESS_NAME}.tmp") or bool(self._part_name.fullmatch(name))

    def _take_lock(self) -> None:
        handle = (self.folder / LOCK_NAME).open("a")
        try:
            _lock_exclusive(handle)
        except OSError:
            handle.close()
            raise UserError("another scoring run is writing this output right now", path=self.output) from None
        self._lock = handle

    def _damaged(self, field: str, what: str) -> UserError:
        self.close()
        return UserError(f"damaged progress record: {what}; nothing was deleted: pass --restart to score from the "
                         "beginning", path=self.folder / PROGRESS_NAME, field=field)

    def _read_progress(self, *, resume: bool) -> dict[str, Any]:
        """The earlier run's record, checked ({} when none); with ``resume``, another run's is refused as such first."""
        try:
            text = (self.folder / PROGRESS_NAME).read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise self._damaged("progress.json", f"unreadable ({getattr(exc, 'strerror', None) or exc})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise self._damaged("progress.json", f"not JSON ({getattr(exc, 'msg', exc)})") from None
        problem = progress_problem(data)
        if problem and problem[0] in ("progress.json", "kind", "fingerprint"):
            raise self._damaged(*problem)
        before = data["fingerprint"]
        changed = [key for key in sorted({*before, *self.fingerprint}) if before.get(key) != self.fingerprint.get(key)
                   and (key not in MC_ONLY or uses_mc(before))]  # no masks drawn: their settings change no score
        if resume and changed:
            shown = "; ".join(f"{key}: {before.get(key)!r} then, {self.fingerprint.get(key)!r} now"
                              for key in changed[:3])
            self.close()
            raise UserError(f"cannot resume: the earlier run differs ({shown}); run the same command, or pass "
                            "--restart instead of --resume to score from the beginning", path=self.output)
        if problem:
            raise self._damaged(*problem)
        return data

    def _check_parts(self) -> None:
        """Every recorded part against its record: a damaged one is removed (and its chunk scored again)."""
        parts = self.state["parts"]
        for index, record in enumerate(parts):
            if record is not None and (problem := self._read_part(index, record)[1]):
                with contextlib.suppress(FileNotFoundError):
                    self.part_path(index).unlink()
                parts[index] = None
                self.notes.append(f"part {index + 1} of the interrupted run ({self.part_path(index).name}) is "
                                  f"damaged ({problem}): its {record['rows']:,} rows are scored again")
        if self.notes:
            self._write_progress()

    def _read_part(self, index: int, record: dict[str, Any] | None) -> tuple[bytes, str | None]:
        """A finished part's bytes and what is wrong with them (None when they are exactly what was written)."""
        if record is None:
            return b"", "missing"
        try:
            data = self.part_path(index).read_bytes()
        except FileNotFoundError:
            return b"", "missing"
        except OSError as exc:
            return b"", f"unreadable: {exc.strerror or exc}"
        if self.format != "parquet" and not data.endswith(b"\n"):
            return data, "empty" if not data else "its last line is incomplete"
        if self.format == "jsonl" and (lines := data.count(b"\n")) != record["rows"]:
            return data, f"{lines:,} rows, {record['rows']:,} were written"
        if len(data) != record["bytes"]:
            return data, f"{len(data):,} bytes, {record['bytes']:,} were written"
        if hashlib.sha256(data).hexdigest() != record["sha256"]:
            return data, "its bytes changed since it was written (SHA-256 differs)"
        return data, None

    def save(self, rows: list[dict[str, Any]], counters: dict[str, Any], index: int | None = None, *,
             first_row: int = 1) -> None:
        """Keep chunk ``index``'s rows (default: the next chunk), the part first, then its record; ``counters``: the
        chunk's ``truncated``, ``details``, ``input_sha256`` and the run's ``fieldnames``, ``replaced``. A Parquet field
        whose type cannot be merged with the parts before is refused here, not after the last chunk."""
        parts = self.state["parts"]
        index = len(parts) if index is None else index
        part = self.part_path(index)
        tmp = part.with_name(part.name + ".tmp")
        table = schema = None
        if self.format == "parquet":
            table = parquet_table(rows, path=self.output, first_row=first_row)
            if self._schema is None and self.finished():  # resuming: the kept parts' columns, read once
                self._schema = self._merged_schema(sorted(self.finished()))
            schema = table.schema if self._schema is None else merge_schemas(
                [self._schema, table.schema], path=self.output, rows=rows, first_row=first_row)
        try:
            with writing(part), contextlib.ExitStack() as closing:  # Parquet's writer opens its file itself
                handle = str(tmp) if self.format == "parquet" else closing.enter_context(
                    tmp.open("w", encoding="utf-8", newline=""))
                sink = RowSink(handle, self.format, counters.get("fieldnames"), header=False, path=self.output,
                               first_row=first_row)
                closing.callback(sink.close)  # before the handle: its last bytes, then the file
                if table is None:
                    sink.write(rows)
                else:
                    sink.write_table(table)
            data = tmp.read_bytes()
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        os.replace(tmp, part)
        self._schema = schema
        parts.extend([None] * (index + 1 - len(parts)))
        parts[index] = {"rows": len(rows), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                        "truncated": int(counters.get("truncated") or 0),
                        "details": dict(counters.get("details") or {}), "input_sha256": counters.get("input_sha256")}
        self.state.update({key: counters[key] for key in ("fieldnames", "replaced") if key in counters})
        self._write_progress()

    def _merged_schema(self, indices: list[int]):
        import pyarrow as pa
        import pyarrow.parquet as pq

        schemas = []
        for index in indices:
            try:
                schemas.append(pq.read_schema(self.part_path(index)))
            except (pa.ArrowException, OSError):
                self.verified_bytes(index)  # says what is wrong with the part, as one line
                raise
        return merge_schemas(schemas, path=self.output)

    def part_path(self, index: int) -> Path:
        return self.folder / f"part-{index:06d}.{self.format}"

    def _write_progress(self) -> None:
        self.state.update(_totals([record for record in self.state.get("parts", []) if record is not None]))
        tmp = self.folder / f"{PROGRESS_NAME}.tmp"
        with writing(self.folder / PROGRESS_NAME):
            tmp.write_text(json.dumps(self.state, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / PROGRESS_NAME)

    def finished(self) -> set[int]:
        """Indices of the chunks whose parts are kept."""
        return {index for index, record in enumerate(self.state.get("parts") or []) if record is not None}

    def iter_part_rows(self, index: int) -> Iterator[dict[str, Any]]:
        """Rows of a chunk finished by an earlier process (for the end-of-run summary)."""
        path = self.part_path(index)
        if self.format == "csv":
            with path.open(encoding="utf-8", newline="") as handle:
                yield from csv.DictReader(handle, fieldnames=self.state.get("fieldnames"))
            return
        yield from (row for _, row in iter_rows(path, self.format))

    def verified_bytes(self, index: int) -> bytes:
        """A part's bytes, only if they are still what was written (else one line; --resume scores it again)."""
        parts = self.state["parts"]
        data, problem = self._read_part(index, parts[index] if index < len(parts) else None)
        if problem:
            raise UserError(f"part {index + 1} ({self.part_path(index).name}) is damaged ({problem}); nothing was "
                            "written: run the same command with --resume to score it again", path=self.output)
        return data

    def join_into(self, target: Path, fieldnames: list[str] | None, metadata: dict[str, str] | None = None,
                  chunks: int | None = None) -> None:
        """Parts ``0 .. chunks - 1`` (default: all), in order, into ``target`` (a temporary of the output): header once,
        one footer (Parquet: ``metadata`` in its schema). Each part is checked first: a damaged one is never joined."""
        count = len(self.state["parts"]) if chunks is None else chunks
        parts = self.state["parts"][:count]
        needed = sum(record["bytes"] for record in parts if record is not None)  # about the output's size
        if self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = self._merged_schema(list(range(count)))  # every field of every part
            with writing(self.output, needed=needed):
                sink = RowSink(str(target), "parquet", path=self.output, metadata=metadata, schema=schema)
                try:
                    for index in range(count):
                        sink.write_table(pq.read_table(pa.BufferReader(self.verified_bytes(index))))
                finally:
                    sink.close()
            return
        header = b""
        if self.format == "csv" and fieldnames:
            text = io.StringIO()
            csv.writer(text).writerow(fieldnames)  # the same dialect as the parts' rows
            header = text.getvalue().encode("utf-8")
        with writing(self.output, needed=needed + len(header)), target.open("wb") as out:
            out.write(header)
            for index in range(count):
                out.write(self.verified_bytes(index))

    def _remove_parts(self) -> None:
        for entry in self.folder.iterdir():
            if entry.name != LOCK_NAME and self._is_ours(entry):
                entry.unlink()

    def remove(self) -> None:
        """The run is over (done, or failed for a reason a rerun cannot fix): delete what this module wrote, only."""
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


def _lock_exclusive(handle: Any) -> None:
    """An exclusive, non-blocking lock (OSError when another process holds it); imported here: fcntl is POSIX-only."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        return
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
