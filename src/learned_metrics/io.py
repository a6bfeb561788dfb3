"""Reading and writing user files: one reader for every command.

Inputs are ``.jsonl`` (one JSON object per line) or ``.csv`` (header row).
Row numbers in errors are 1-based data rows (for ``.jsonl`` the line number,
for ``.csv`` the row after the header), so users can jump straight to them.
Outputs are written to a temporary file beside the target and renamed at the
end, so a failure never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError

SUPPORTED_SUFFIXES = (".jsonl", ".csv")

# CSV fields can be long (whole articles); the default limit of 128 KiB is not enough.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


def file_format(path: str | os.PathLike) -> str:
    """Return ``"jsonl"`` or ``"csv"`` from the file suffix, or raise a UserError."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise UserError(f"unsupported file type '{suffix or '(none)'}', expected .jsonl or .csv", path=path)


def _open_text(path: Path):
    if not path.exists():
        raise UserError("file not found", path=path)
    if path.is_dir():
        raise UserError("is a directory, expected a .jsonl or .csv file", path=path)
    return path.open("r", encoding="utf-8", newline="")


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path) as handle:
        lineno = 0
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=path, row=lineno) from None
                if not isinstance(obj, dict):
                    raise UserError(f"expected a JSON object, got {type(obj).__name__}", path=path, row=lineno)
                yield lineno, obj
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason})", path=path, row=lineno + 1) from None


def _iter_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path) as handle:
        rowno = 0
        try:
            reader = csv.DictReader(handle)
            if reader.fieldnames is None:
                return
            if len(set(reader.fieldnames)) != len(reader.fieldnames):
                raise UserError(f"duplicate column names in header: {reader.fieldnames}", path=path, row=0)
            for rowno, row in enumerate(reader, start=1):
                if None in row:
                    raise UserError("more values than header columns", path=path, row=rowno)
                yield rowno, row
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason})", path=path, row=rowno + 1) from None
        except csv.Error as exc:
            raise UserError(f"malformed CSV ({exc})", path=path, row=rowno + 1) from None


def iter_rows(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(row_number, row)`` pairs; an empty file is an error."""
    path = Path(path)
    if path.is_dir():  # before the suffix check: "is a directory" says more than "unsupported file type"
        raise UserError("is a directory, expected a .jsonl or .csv file", path=path)
    fmt = file_format(path)
    rows = _iter_jsonl(path) if fmt == "jsonl" else _iter_csv(path)
    empty = True
    for item in rows:
        empty = False
        yield item
    if empty:
        raise UserError("file is empty (no data rows)", path=path)


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read every row of a ``.jsonl``/``.csv`` file."""
    return [row for _, row in iter_rows(path)]


def iter_row_chunks(path: str | os.PathLike, chunk_size: int) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Yield lists of at most ``chunk_size`` ``(row_number, row)`` pairs: bounded memory on huge inputs."""
    chunk: list[tuple[int, dict[str, Any]]] = []
    for item in iter_rows(path):
        chunk.append(item)
        if len(chunk) >= chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def require_text(row: dict[str, Any], field: str, *, path: object, row_number: int) -> str:
    """Return a non-empty string field of a row, or raise a UserError naming file, row and field."""
    if field not in row:
        available = ", ".join(sorted(map(str, row))) or "none"
        raise UserError(f"missing field (fields present: {available})", path=path, row=row_number, field=field)
    value = row[field]
    if _is_missing(value):
        raise UserError("value is null/NaN", path=path, row=row_number, field=field)
    if not isinstance(value, str):
        raise UserError(f"expected text, got {type(value).__name__}", path=path, row=row_number, field=field)
    if not value.strip():
        raise UserError("text is empty", path=path, row=row_number, field=field)
    return value


def require_sentences(row: dict[str, Any], field: str, *, path: object, row_number: int) -> list[str]:
    """Return a list-of-strings field (e.g. ``sentences``), or raise a UserError."""
    value = row.get(field)
    if isinstance(value, str):  # CSV cells hold JSON lists
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise UserError("expected a JSON list of strings", path=path, row=row_number, field=field) from None
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise UserError("expected a list of strings", path=path, row=row_number, field=field)
    sentences = [s.strip() for s in value if s.strip()]
    if not sentences:
        raise UserError("no non-empty sentences", path=path, row=row_number, field=field)
    return sentences


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def apply_default_permissions(path: str | os.PathLike, directory: bool = False) -> None:
    """mkstemp/mkdtemp create private (0600/0700) files; give results the usual umask-based mode."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_current_umask())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        apply_default_permissions(tmp_path)
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; it replaces ``path`` only if the block succeeds.

    An interrupted build therefore never leaves a half-written folder that a
    later run would load.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        apply_default_permissions(tmp, directory=True)
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write JSON atomically (indent 2, UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default) + "\n", encoding="utf-8")


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy / torch scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


class RowWriter:
    """Stream rows to a ``.jsonl``/``.csv`` file through a temp file renamed on :meth:`commit`.

    Use as a context manager: leaving the block without an exception commits,
    an exception discards everything written so far.
    """

    def __init__(self, path: str | os.PathLike, fieldnames: list[str] | None = None):
        self.path = Path(path)
        self.format = file_format(self.path)
        self.fieldnames = fieldnames
        self._ctx = atomic_path(self.path)
        self._tmp = self._ctx.__enter__()
        self._handle = self._tmp.open("w", encoding="utf-8", newline="")
        self._csv: csv.DictWriter | None = None
        self.rows_written = 0

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            if self.format == "jsonl":
                self._handle.write(json.dumps(row, ensure_ascii=False, default=_json_default) + "\n")
            else:
                if self._csv is None:
                    self._csv = csv.DictWriter(self._handle, fieldnames=self.fieldnames or list(row))
                    self._csv.writeheader()
                self._csv.writerow(row)
            self.rows_written += 1

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._handle.close()
        if exc_type is None:
            self._ctx.__exit__(None, None, None)
        else:
            self._ctx.__exit__(exc_type, exc, tb)


def write_rows(path: str | os.PathLike, rows: Iterable[dict[str, Any]], fieldnames: list[str] | None = None) -> int:
    """Write all rows atomically; returns the number written."""
    with RowWriter(path, fieldnames) as writer:
        writer.write(rows)
    return writer.rows_written
