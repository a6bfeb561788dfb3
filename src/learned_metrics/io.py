"""Reading and writing user files: one reader for every command.

Inputs are ``.jsonl`` (one JSON object per line) or ``.csv`` (header row).
Row numbers in errors are 1-based data rows (for ``.jsonl`` the line number,
for ``.csv`` the row after the header), so users can jump straight to them.
Outputs go through :mod:`learned_metrics.outputs` (a temporary file beside the
target, renamed at the end), so a failure never leaves a half-written file behind.
Values inside rows are checked by :mod:`learned_metrics.validate`.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.outputs import atomic_file

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


def check_input_file(path: str | os.PathLike) -> Path:
    """An input that exists, is a file and has a supported suffix: checked before a command starts its work."""
    path = Path(path)
    if path.is_dir():  # before the suffix check: "is a directory" says more than "unsupported file type"
        raise UserError("is a directory, expected a .jsonl or .csv file", path=path)
    file_format(path)
    if not path.exists():
        raise UserError("file not found", path=path)
    return path


def _open_text(path: Path):
    check_input_file(path)
    # utf-8-sig: Excel and Windows tools start CSV/JSONL files with a byte-order mark
    return path.open("r", encoding="utf-8-sig", newline="")


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
    path = check_input_file(path)
    fmt = file_format(path)
    rows = _iter_jsonl(path) if fmt == "jsonl" else _iter_csv(path)
    empty = True
    for item in rows:
        empty = False
        yield item
    if empty:
        raise UserError("file is empty (no data rows)", path=path)


def read_json_object(path: str | os.PathLike) -> dict[str, Any] | None:
    """A JSON file that must hold an object (configs, cards, reports); None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"not valid UTF-8 ({exc.reason})", path=path) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON ({exc.msg})", path=path, row=exc.lineno) from None
    if not isinstance(data, dict):
        raise UserError(f"expected a JSON object, got {type(data).__name__}", path=path)
    return data


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


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write JSON atomically (indent 2, UTF-8)."""
    with atomic_file(path) as tmp:
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
        self._ctx = atomic_file(self.path)
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
