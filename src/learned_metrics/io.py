"""Reading and writing user files: one reader for every command.

Inputs are ``.jsonl`` (one JSON object per line), ``.csv`` (header row) or
``.parquet``; ``-`` is standard input or output (JSON lines unless a format is
named). Row numbers in errors are 1-based data rows (for ``.jsonl`` the line
number, for ``.csv`` the row after the header, for ``.parquet`` the row), so
users can jump straight to them. Outputs go through :mod:`learned_metrics.outputs`
(a temporary file beside the target, renamed at the end), so a failure never
leaves a half-written file behind. Values inside rows are checked by
:mod:`learned_metrics.validate`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.outputs import atomic_file

# CSV fields can be long (whole articles); the default limit of 128 KiB is not enough.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

FORMATS = ("jsonl", "csv", "parquet")
STDIO = "-"
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_PARQUET_BATCH_ROWS = 4096


def is_stdio(path: str | os.PathLike | None) -> bool:
    """``-``: standard input for an input, standard output for an output."""
    return path is not None and os.fspath(path) == STDIO


def file_format(path: str | os.PathLike, declared: str | None = None) -> str:
    """``"jsonl"``, ``"csv"`` or ``"parquet"``: ``declared`` if given, else from the suffix (``-``: jsonl)."""
    if declared is not None:
        if declared not in FORMATS:
            raise UserError(f"unknown format '{declared}', expected one of {', '.join(FORMATS)}", path=path)
        return declared
    if is_stdio(path):
        return "jsonl"
    suffix = Path(path).suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    raise UserError(f"unsupported file type '{suffix or '(none)'}', expected .jsonl, .csv or .parquet", path=path)


def check_input_file(path: str | os.PathLike, declared: str | None = None) -> Path:
    """An input that exists, is a file and has a supported format: checked before a command starts its work."""
    if is_stdio(path):
        if file_format(path, declared) == "parquet":
            raise UserError("Parquet cannot be read from a pipe; give the file's name", path=path)
        return Path(STDIO)
    path = Path(path)
    if path.is_dir():  # before the suffix check: "is a directory" says more than "unsupported file type"
        raise UserError("is a directory, expected a .jsonl, .csv or .parquet file", path=path)
    file_format(path, declared)
    if not path.exists():
        raise UserError("file not found", path=path)
    return path


def _open_text(path: Path, declared: str | None):
    check_input_file(path, declared)
    # utf-8-sig: Excel and Windows tools start CSV/JSONL files with a byte-order mark
    if is_stdio(path):
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline="")
    return path.open("r", encoding="utf-8-sig", newline="")


def _iter_jsonl(path: Path, declared: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path, declared) as handle:
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


def _iter_csv(path: Path, declared: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path, declared) as handle:
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


def _parquet_file(path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"not a readable Parquet file ({str(exc).splitlines()[0]})", path=path) from None


def _iter_parquet(path: Path, declared: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow as pa

    check_input_file(path, declared)
    parquet = _parquet_file(path)
    rowno = 0
    try:
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
            for row in batch.to_pylist():
                rowno += 1
                yield rowno, row
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"unreadable Parquet data ({str(exc).splitlines()[0]})", path=path, row=rowno + 1) from None


_READERS = {"jsonl": _iter_jsonl, "csv": _iter_csv, "parquet": _iter_parquet}


def iter_rows(path: str | os.PathLike, declared: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(row_number, row)`` pairs; an empty file is an error."""
    path = check_input_file(path, declared)
    empty = True
    for item in _READERS[file_format(path, declared)](path, declared):
        empty = False
        yield item
    if empty:
        raise UserError("file is empty (no data rows)", path=path)


def _native(value: Any) -> Any:
    """numpy scalars from a frame or an array column as plain Python values (what the validators expect)."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def numbered_rows(data: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows numbered from 1, from a pandas DataFrame, a mapping of column -> values, or a sequence of dicts."""
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        records = data.to_dict("records")
    elif isinstance(data, Mapping):
        columns = {name: list(values) for name, values in data.items()}
        lengths = {len(values) for values in columns.values()}
        if len(lengths) > 1:
            raise UserError(f"columns differ in length: { {name: len(v) for name, v in columns.items()} }")
        records = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    elif isinstance(data, Sequence) and not isinstance(data, str) and all(isinstance(r, Mapping) for r in data):
        records = list(data)
    else:
        raise UserError("expected a pandas DataFrame, a mapping of column -> values, or a list of row dicts, got "
                        f"{type(data).__name__}")
    for number_, record in enumerate(records, start=1):
        yield number_, {str(k): _native(v) for k, v in record.items()}


def count_rows(path: str | os.PathLike, declared: str | None = None) -> int | None:
    """Data rows of an input, cheaply (Parquet metadata, a byte scan for JSONL, a CSV parse); None for a pipe.

    Only for progress: a malformed file is reported by the reader, so here it just counts what it can.
    """
    if is_stdio(path):
        return None
    path = Path(path)
    fmt = file_format(path, declared)
    try:
        if fmt == "parquet":
            return _parquet_file(path).metadata.num_rows
        if fmt == "jsonl":
            with path.open("rb") as handle:
                return sum(1 for line in handle if line.strip())
        with path.open("r", encoding="utf-8-sig", errors="replace", newline="") as handle:
            return max(0, sum(1 for _ in csv.reader(handle)) - 1)
    except (OSError, csv.Error, UserError):
        return None


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


def iter_row_chunks(path: str | os.PathLike, chunk_size: int,
                    declared: str | None = None) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Yield lists of at most ``chunk_size`` ``(row_number, row)`` pairs: bounded memory on huge inputs."""
    chunk: list[tuple[int, dict[str, Any]]] = []
    for item in iter_rows(path, declared):
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
    if hasattr(obj, "isoformat"):  # dates and times read from Parquet
        return obj.isoformat()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def json_line(row: dict[str, Any]) -> str:
    """One JSON object per line, as every ``.jsonl`` output writes it."""
    return json.dumps(row, ensure_ascii=False, default=_json_default) + "\n"


class RowSink:
    """Rows to an open destination in one format: JSON lines, CSV (header once) or Parquet (one row group per call).

    ``fieldnames`` fixes the CSV columns; ``schema`` the Parquet columns (else
    taken from the first rows written, so every later call must fit it);
    ``metadata`` is added to the Parquet file's schema metadata (string keys and
    values, e.g. the provenance record; JSON lines and CSV have no place for it and
    ignore it).
    """

    def __init__(self, handle, fmt: str, fieldnames: list[str] | None = None, *, header: bool = True,
                 schema=None, path: str | os.PathLike | None = None, metadata: dict[str, str] | None = None):
        self.handle = handle
        self.format = fmt
        self.fieldnames = fieldnames
        self.header = header
        self.schema = schema
        self.path = path
        self.metadata = metadata
        self._csv: csv.DictWriter | None = None
        self._parquet = None
        self.rows_written = 0

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        rows = list(rows)
        if self.format == "parquet":
            self.write_table(self.table(rows))
            return
        if self.format == "jsonl":
            self.handle.write("".join(json_line(row) for row in rows))
        else:
            for row in rows:
                if self._csv is None:
                    self._csv = csv.DictWriter(self.handle, fieldnames=self.fieldnames or list(row))
                    if self.header:
                        self._csv.writeheader()
                self._csv.writerow(row)
        self.rows_written += len(rows)

    def table(self, rows: list[dict[str, Any]]):
        """Rows as an Arrow table with this sink's schema (the first call fixes it)."""
        import pyarrow as pa

        try:
            table = pa.Table.from_pylist(rows, schema=self.schema)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise UserError(f"rows do not fit the Parquet columns of the first rows ({str(exc).splitlines()[0]}); "
                            "write .jsonl output instead", path=self.path) from None
        if self.schema is None:
            self.schema = table.schema
        return table

    def write_table(self, table) -> None:
        import pyarrow.parquet as pq

        if self.schema is None:
            self.schema = table.schema
        if self._parquet is None:
            schema = self.schema
            if self.metadata:
                extra = {key.encode(): value.encode() for key, value in self.metadata.items()}
                schema = schema.with_metadata({**(schema.metadata or {}), **extra})
            self._parquet = pq.ParquetWriter(self.handle, schema)
        self._parquet.write_table(table.cast(self.schema) if table.schema != self.schema else table)
        self.rows_written += table.num_rows

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None


def open_sink(path: Path, fmt: str):
    """An open handle for ``fmt`` at ``path`` (text for JSONL/CSV, a file name for Parquet's own writer)."""
    if fmt == "parquet":
        return str(path)
    return path.open("w", encoding="utf-8", newline="")


class RowWriter:
    """Stream rows to a ``.jsonl``/``.csv``/``.parquet`` file through a temp file renamed at the end.

    Use as a context manager: leaving the block without an exception commits,
    an exception discards everything written so far. ``-`` streams JSON lines
    or CSV to standard output instead (nothing to rename there). ``metadata``
    goes into a Parquet file's schema metadata (see :class:`RowSink`).
    """

    def __init__(self, path: str | os.PathLike, fieldnames: list[str] | None = None, declared: str | None = None,
                 metadata: dict[str, str] | None = None):
        self.path = Path(path)
        self.format = file_format(path, declared)
        self._ctx = None
        if is_stdio(path):
            if self.format == "parquet":
                raise UserError("Parquet cannot be written to a pipe; give the output's file name", path=path)
            self._handle = sys.stdout
        else:
            self._ctx = atomic_file(self.path)
            self._handle = open_sink(self._ctx.__enter__(), self.format)
        self.sink = RowSink(self._handle, self.format, fieldnames, path=self.path, metadata=metadata)

    @property
    def fieldnames(self) -> list[str] | None:
        return self.sink.fieldnames

    @fieldnames.setter
    def fieldnames(self, names: list[str] | None) -> None:
        self.sink.fieldnames = names

    @property
    def rows_written(self) -> int:
        return self.sink.rows_written

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        self.sink.write(rows)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.sink.close()
        finally:
            if self._ctx is None:
                self._handle.flush()
            else:
                if not isinstance(self._handle, str):
                    self._handle.close()
                self._ctx.__exit__(exc_type, exc, tb)
