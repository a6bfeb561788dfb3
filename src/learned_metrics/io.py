"""Reading and writing user files: one reader and one writer for every command.

Row numbers in errors are 1-based data rows; outputs go through :mod:`learned_metrics.outputs` (never half-written);
writers keep every field of every row (docs/scoring.md "Formats: JSONL, CSV, Parquet, pipes").
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import decimal
import errno
import hashlib
import io
import itertools
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError, first_line
from learned_metrics.outputs import atomic_file

# CSV fields can be long (whole articles); the default limit of 128 KiB is not enough.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

FORMATS = ("jsonl", "csv", "parquet")
STDIO = "-"
STDOUT_NAME = "standard output"  # what a failed write to ``-`` names
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_PARQUET_BATCH_ROWS = 4096
DATA_SUFFIXES = tuple(_SUFFIXES)  # the files a data folder holds


def is_stdio(path: str | os.PathLike | None) -> bool:
    """``-``: standard input for an input, standard output for an output."""
    return path is not None and os.fspath(path) == STDIO


def file_format(path: str | os.PathLike, declared: str | None = None) -> str:
    """``"jsonl"``, ``"csv"`` or ``"parquet"``: ``declared`` if given, else from the suffix (``-``: jsonl)."""
    if declared is not None:
        if declared not in FORMATS:
            raise UserError(f"unknown format '{declared}', expected one of {', '.join(FORMATS)}", path=path)
        return declared
    suffix = Path(path).suffix.lower()
    if is_stdio(path) or suffix in _SUFFIXES:
        return "jsonl" if is_stdio(path) else _SUFFIXES[suffix]
    raise UserError(f"unsupported file type '{suffix or '(none)'}', expected .jsonl, .csv or .parquet", path=path)


def data_files(root: Path, suffixes: Iterable[str] = DATA_SUFFIXES, *, recursive: bool = True) -> list[Path]:
    """A folder's files with one of ``suffixes`` (lower case, with the dot), in path order, hidden ones left out: a
    name below ``root`` starting with ``.`` (``.ipynb_checkpoints/``, editor and OS files) is never data, as for
    pyarrow, Ray and ``datasets`` (a stale notebook copy of dev.jsonl was read as more validation rows)."""
    suffixes = tuple(suffixes)
    return [path for path in _visible_files(root, recursive) if path.suffix.lower() in suffixes]


def _visible_files(root: Path, recursive: bool) -> list[Path]:
    """The files below ``root`` (or in it), in path order, none of them hidden (:func:`is_hidden`)."""
    found = root.rglob("*") if recursive else root.iterdir()
    return sorted(path for path in found if not is_hidden(path.relative_to(root)) and path.is_file())


def is_hidden(relative: Path) -> bool:
    """A path below a data folder with a part starting with ``.``."""
    return any(part.startswith(".") for part in relative.parts)


def files_stamp(path: str | os.PathLike, *, recursive: bool = False) -> str:
    """Names, sizes and modification times of a file or of a folder's files (``recursive``: every visible file
    below it, as :func:`data_files` sees them): a retrained model is another model, an edited source another
    source. A path that does not exist is its own name."""
    path = Path(path)
    if not path.exists():
        return str(path)
    files = _visible_files(path, recursive) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        info = file.stat()
        name = file.relative_to(path).as_posix() if path.is_dir() else file.name
        digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


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
    if not path.is_file():  # a first look (layout, row count) would take rows a pipe gives once: lost, exit 0
        raise UserError("not a regular file (a pipe or device gives its rows once, and commands look at their input "
                        "before reading it); write it to a file, or pipe it to `--input -` where a command takes "
                        "standard input", path=path)
    return path


def _utf8(line: str) -> str:
    """A line read with ``surrogateescape``, checked: a byte that is not UTF-8 raises :class:`UnicodeDecodeError` (with
    the decoder's reason) here, on the line that holds it. A strict decoder reads ahead of the parser (8 KiB blocks),
    so the rows parsed when it fails are not the row with the byte."""
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line.encode("utf-8", "surrogateescape").decode("utf-8")  # raises
    return line


class _RepeatedKey(Exception):
    """A key given twice in one JSON object (``{"generation": "b", "generation": "c"}``)."""


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return obj


def _jsonl_rows(handle, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in enumerate(handle, start=1):
        try:
            _utf8(line)
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason})", path=path, row=lineno) from None
        if line.strip():
            try:
                obj = json.loads(line, object_pairs_hook=_object_without_repeats)
            except json.JSONDecodeError as exc:
                raise UserError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=path, row=lineno) from None
            except _RepeatedKey as exc:
                raise UserError("the key is given twice in one object (JSON keeps the last silently)", path=path,
                                row=lineno, field=exc.args[0]) from None
            if not isinstance(obj, dict):
                raise UserError(f"expected a JSON object, got {type(obj).__name__}", path=path, row=lineno)
            yield lineno, obj


def _csv_rows(handle, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(map(_utf8, handle))
    try:
        fieldnames = reader.fieldnames
    except UnicodeDecodeError as exc:
        raise UserError(f"not valid UTF-8 in the header ({exc.reason})", path=path, row=0) from None
    if fieldnames is not None and len(set(fieldnames)) != len(fieldnames):
        raise UserError(f"duplicate column names in header: {fieldnames}", path=path, row=0)
    rowno = 0
    try:
        for rowno, row in enumerate(reader, start=1):
            if None in row:
                raise UserError("more values than header columns", path=path, row=rowno)
            if None in row.values():  # csv fills the missing cells of a short row with None: no value was given
                missing = next(name for name, value in row.items() if value is None)
                raise UserError("fewer values than header columns", path=path, row=rowno, field=missing)
            yield rowno, row
    except UnicodeDecodeError as exc:  # raised while the reader takes the lines of the next data row
        raise UserError(f"not valid UTF-8 ({exc.reason})", path=path, row=rowno + 1) from None


def _iter_text(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSON lines or CSV rows; a byte that is not UTF-8 or a malformed CSV is one line naming the row (JSON lines:
    the line; CSV: the data row, header not counted). Bytes are decoded with ``surrogateescape`` and each line
    checked as it is parsed (:func:`_utf8`), so the row named is the one that holds the byte."""
    # utf-8-sig: Excel and Windows tools start files with a byte-order mark
    text = {"encoding": "utf-8-sig", "errors": "surrogateescape", "newline": ""}
    number = 0
    with io.TextIOWrapper(sys.stdin.buffer, **text) if is_stdio(path) else path.open("r", **text) as handle:
        try:
            for number, row in _jsonl_rows(handle, path) if fmt == "jsonl" else _csv_rows(handle, path):
                yield number, row
        except csv.Error as exc:
            raise UserError(f"malformed CSV ({exc})", path=path, row=number + 1) from None


def open_parquet(path: Path):
    """A Parquet file opened for reading; a damaged one is one line naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"not a readable Parquet file ({first_line(exc)})", path=path) from None


def _iter_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow as pa

    batches = open_parquet(path).iter_batches(batch_size=_PARQUET_BATCH_ROWS)
    rowno = 0
    try:
        for rowno, row in enumerate((row for batch in batches for row in batch.to_pylist()), start=1):
            yield rowno, row
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"unreadable Parquet data ({first_line(exc)})", path=path, row=rowno + 1) from None


def iter_rows(path: str | os.PathLike, declared: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(row_number, row)`` pairs; an empty file is an error."""
    path = check_input_file(path, declared)
    fmt = file_format(path, declared)
    number = 0
    for number, row in _iter_parquet(path) if fmt == "parquet" else _iter_text(path, fmt):
        yield number, row
    if not number:
        raise UserError("file is empty (no data rows)", path=path)


def plain_value(value: Any) -> Any:
    """numpy scalars from a frame or an array column as plain Python values (what the validators expect)."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def numbered_rows(data: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows numbered from 1, from a pandas DataFrame, a mapping of column -> values, or a sequence of dicts."""
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        records = data.to_dict("records")
    elif isinstance(data, Mapping):
        columns = {name: list(values) for name, values in data.items()}
        if len({len(values) for values in columns.values()}) > 1:
            raise UserError(f"columns differ in length: { {name: len(v) for name, v in columns.items()} }")
        records = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    elif isinstance(data, Sequence) and not isinstance(data, str) and all(isinstance(r, Mapping) for r in data):
        records = list(data)
    else:
        raise UserError("expected a pandas DataFrame, a mapping of column -> values, or a list of row dicts, got "
                        f"{type(data).__name__}")
    for number_, record in enumerate(records, start=1):
        yield number_, {str(k): plain_value(v) for k, v in record.items()}


def count_rows(path: str | os.PathLike, declared: str | None = None) -> int | None:
    """Data rows of an input, cheaply, for progress (a malformed file is the reader's to report); None for a pipe."""
    if is_stdio(path):
        return None
    path, fmt = Path(path), file_format(path, declared)
    try:
        if fmt == "parquet":
            return open_parquet(path).metadata.num_rows
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
    rows = iter_rows(path, declared)
    while chunk := list(itertools.islice(rows, chunk_size)):
        yield chunk


@contextlib.contextmanager
def writing(target: str | os.PathLike | None = None, *, needed: int | None = None) -> Iterator[None]:
    """An ``OSError`` without a file name (full disk, closed pipe) gets ``target``'s (``-``: "standard output") and,
    on a full disk, the bytes ``needed``; the innermost block's wins (``boundary.describe_os_error`` prints it)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and target is not None:
            exc.filename = STDOUT_NAME if is_stdio(target) else os.fspath(target)
        if needed and exc.errno in _DISK_FULL and getattr(exc, "needed_bytes", None) is None:
            exc.needed_bytes = needed
        raise


def _shown_character(character: str) -> str:
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF else character


def display_text(text: str) -> str:
    """A name or path as every output writes it (docs/safety.md): valid UTF-8 unchanged; each byte of a name that is
    not UTF-8 (a lone surrogate from ``os.fsdecode``) as ``\\xNN``, any other lone surrogate as ``\\udNNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(map(_shown_character, text))
    return text


def _control_shown(character: str) -> str:
    code = ord(character)
    if character in "\t\n\r\v\f":
        return " "
    return f"\\x{code:02x}" if code < 0x20 or 0x7F <= code <= 0x9F else character


def shown_text(text: str) -> str:
    """A name as the rendered outputs show it (the terminal, Markdown, LaTeX, figures, error lines; docs/safety.md):
    :func:`display_text`, with a line break or a tab as a space and every other control character (C0, DEL, C1) as
    ``\\xNN``, so a name read from a file can neither send the terminal an escape sequence nor break a table row or
    an error's one line. JSON and CSV keep names exactly: they quote them themselves."""
    text = display_text(text).replace("\r\n", "\n")
    return text if text.isprintable() else "".join(map(_control_shown, text))


def _strict(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None, text through :func:`display_text`, numpy values as Python ones."""
    if isinstance(obj, str):
        return display_text(obj)
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {_strict(k if isinstance(k, (str, int, float, bool)) or k is None else str(k)): _strict(v)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy and torch values
        return _strict(obj.tolist())
    if isinstance(obj, os.PathLike):
        return display_text(os.fspath(obj))
    return obj


def dump_json(obj: Any, *, indent: int | None = 2, compact: bool = False) -> str:
    """The one JSON encoder: strict JSON (NaN and infinities as null, never ``NaN``/``Infinity``), names that are not
    UTF-8 as :func:`display_text` writes them, reader values spelled exactly (:func:`_json_default`)."""
    options: dict[str, Any] = {"ensure_ascii": False, "allow_nan": False, "default": _json_default,
                               "indent": indent, "separators": (",", ":") if compact else None}
    try:
        text = json.dumps(obj, **options)
        if not text.isascii():
            text.encode("utf-8")
        return text
    except ValueError:  # a non-finite number, or a lone surrogate (UnicodeEncodeError)
        return json.dumps(_strict(obj), **options)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write JSON atomically (indent 2, UTF-8, :func:`dump_json`)."""
    text = dump_json(obj) + "\n"
    with atomic_file(path) as tmp, writing(path, needed=len(text.encode("utf-8"))):
        tmp.write_text(text, encoding="utf-8")


def _iso_duration(value: dt.timedelta) -> str:
    """ISO 8601, in seconds: ``PT1.5S``, ``-PT86400S`` (nanoseconds kept for pandas' Timedelta)."""
    nanoseconds = getattr(value, "value", None)  # pandas.Timedelta: whole nanoseconds
    if not isinstance(nanoseconds, int):
        nanoseconds = (value // dt.timedelta(microseconds=1)) * 1000
    seconds, fraction = divmod(abs(nanoseconds), 1_000_000_000)
    text = f"{seconds}.{fraction:09d}".rstrip("0").rstrip(".")
    return f"{'-' if nanoseconds < 0 else ''}PT{text}S"


def _json_default(obj: Any) -> Any:
    """Values a reader hands over that JSON has no type for, spelled exactly (never a Python repr)."""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        raise TypeError("binary data, which JSON lines and CSV cannot hold (write .parquet output instead, or make "
                       "the column text)")
    if isinstance(obj, decimal.Decimal):
        return str(obj)  # exact: 12.30 stays 12.30
    if isinstance(obj, dt.timedelta):
        return _iso_duration(obj)
    if hasattr(obj, "item"):  # numpy / torch scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "isoformat"):  # dates and times read from Parquet
        return obj.isoformat()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"a {type(obj).__name__} value, which has no JSON form")


def json_line(row: dict[str, Any]) -> str:
    """One JSON object per line, as every ``.jsonl`` output writes it."""
    return dump_json(row, indent=None) + "\n"


def text_value(value: Any) -> Any:
    """A CSV cell: text, numbers and empty as they are; lists and objects as JSON; dates, decimals and durations
    as in JSON lines (``2024-05-01``, ``12.30``, ``PT1.5S``); binary data refused (:class:`TypeError`)."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    plain = value if isinstance(value, (list, tuple, dict)) else _json_default(value)
    return dump_json(plain, indent=None) if isinstance(plain, (list, tuple, dict)) else plain


def _has_empty_struct(arrow_type) -> bool:
    """Parquet cannot store an object without fields (``{}``), also inside lists and other objects."""
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        return arrow_type.num_fields == 0 or any(_has_empty_struct(f.type) for f in arrow_type)
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return _has_empty_struct(arrow_type.value_type)
    if pa.types.is_map(arrow_type):
        return _has_empty_struct(arrow_type.key_type) or _has_empty_struct(arrow_type.item_type)
    return False


def _first_unconvertible(values: list[Any]) -> int:
    """The first value that makes a column of ``values[:i + 1]`` fail (failing prefixes only grow: binary search)."""
    import pyarrow as pa

    low, high = 1, len(values)
    while low < high:
        middle = (low + high) // 2
        try:
            pa.array(values[:middle])
            low = middle + 1
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            high = middle
    return low - 1


def parquet_table(rows: Sequence[Mapping[str, Any]], *, path: str | os.PathLike | None = None, first_row: int = 1):
    """``rows`` as an Arrow table: every field of any row a column (in order of first appearance, null where a row
    lacks it), each column's type inferred from all of its values. ``first_row`` numbers the rows in messages."""
    import pyarrow as pa

    names = list(dict.fromkeys(key for row in rows for key in row))
    arrays = []
    for name in names:
        values = [row.get(name) for row in rows]
        try:
            array = pa.array(values)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            index = _first_unconvertible(values)
            value = values[index]
            before = next((v for v in values[:index] if v is not None and type(v) is not type(value)), None)
            what = (f"two types in one column ({type(value).__name__} {value!r:.40} here, {type(before).__name__} in "
                    "the rows before); a Parquet column holds one type" if before is not None else
                    f"a {type(value).__name__} value Parquet cannot store ({first_line(exc)})")
            raise UserError(f"{what}: write .jsonl output instead", path=path, row=first_row + index,
                            field=name) from None
        if _has_empty_struct(array.type):
            index = next((i for i, value in enumerate(values) if value is not None), 0)
            raise UserError("holds an empty object ({}), which Parquet cannot store (an object there needs at least "
                            "one field): write .jsonl output instead", path=path, row=first_row + index, field=name)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, names=names)


def _conflicting_field(schemas) -> str | None:
    import pyarrow as pa

    types: dict[str, list] = {}
    for schema in schemas:
        for field in schema:
            types.setdefault(field.name, []).append(field.type)
    for name, kinds in types.items():
        try:
            pa.unify_schemas([pa.schema([(name, kind)]) for kind in kinds], promote_options="permissive")
        except (pa.ArrowException, TypeError, ValueError):
            return name
    return None


def merge_schemas(schemas: Sequence, *, path: str | os.PathLike | None = None,
                  rows: Sequence[Mapping[str, Any]] | None = None, first_row: int = 1):
    """One schema for tables written one after another into a file (fields in order of appearance, nulls typed by the
    others, ints widened to floats, objects merged); a field that cannot merge is refused, naming it and its row."""
    import pyarrow as pa

    try:
        return pa.unify_schemas(list(schemas), promote_options="permissive")
    except (pa.ArrowException, TypeError, ValueError) as exc:
        name = _conflicting_field(schemas)
        row = None if name is None or rows is None else first_row + next(
            (i for i, r in enumerate(rows) if r.get(name) is not None), 0)
        kinds = [str(schema.field(name).type) for schema in schemas if name in schema.names] if name else []
        detail = f"{kinds[-1]} here, {kinds[0]} in the rows before" if len(kinds) > 1 else first_line(exc)
        raise UserError(f"two types in one column ({detail}); a Parquet column holds one type: write .jsonl output "
                        "instead", path=path, row=row, field=name) from None


def schema_with(schema, metadata: Mapping[str, str]):
    """``schema`` with ``metadata`` (text keys and values) added to its own."""
    return schema.with_metadata({**(schema.metadata or {}), **{k.encode(): v.encode() for k, v in metadata.items()}})


class RowSink:
    """Rows to an open destination: JSON lines, CSV (``fieldnames`` or the first row's) or Parquet (a row group a call;
    ``schema`` or the first table's: later ones may lack fields or widen ints, not add any); rows from ``first_row``."""

    def __init__(self, handle, fmt: str, fieldnames: list[str] | None = None, *, header: bool = True,
                 schema=None, path: str | os.PathLike | None = None, metadata: dict[str, str] | None = None,
                 first_row: int = 1):
        self.handle, self.format, self.fieldnames, self.header = handle, fmt, fieldnames, header
        self.schema, self.path, self.metadata, self.first_row = schema, path, metadata, first_row
        self._columns: list[str] | None = None  # CSV: fixed by the first row (or fieldnames), header written
        self._parquet = None
        self.rows_written = 0

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        rows = list(rows)
        if self.format == "parquet":
            self.write_table(parquet_table(rows, path=self.path, first_row=self._row(0)), rows)
            return
        if self.format == "jsonl":
            data = "".join(self._each(rows, json_line))
        else:
            buffer, writer = io.StringIO(), None  # one write below: its size is known when the disk is full
            for row in self._each(rows, lambda row: {key: text_value(value) for key, value in row.items()}):
                if self._columns is None:
                    self._columns = list(self.fieldnames or row)
                    if self.header:
                        csv.DictWriter(buffer, fieldnames=self._columns).writeheader()
                writer = writer or csv.DictWriter(buffer, fieldnames=self._columns)
                writer.writerow(row)
            data = buffer.getvalue()
        with writing(needed=len(data.encode("utf-8", "surrogatepass"))):
            self.handle.write(data)
        self.rows_written += len(rows)

    def _each(self, rows: list[dict[str, Any]], convert) -> Iterator[Any]:
        """``convert(row)`` for every row; a value the format cannot hold is one line naming field and row."""
        for index, row in enumerate(rows):
            try:
                yield convert(row)
            except (TypeError, ValueError):
                for field, value in row.items():
                    try:
                        dump_json(value, indent=None)
                    except (TypeError, ValueError) as exc:
                        raise UserError(f"holds {exc}", path=self.path, row=self._row(index), field=field) from None
                raise

    def _row(self, index: int) -> int:
        return self.first_row + self.rows_written + index

    def write_table(self, table, rows: Sequence[Mapping[str, Any]] | None = None) -> None:
        """One row group; ``rows`` (the table's rows, when at hand) let a refusal name the row."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.schema is None:
            self.schema = table.schema
        merged = merge_schemas([self.schema, table.schema], path=self.path, rows=rows, first_row=self._row(0))
        if not merged.equals(self.schema, check_metadata=False):
            name = next(f.name for f in merged if f.name not in self.schema.names or f != self.schema.field(f.name))
            index = next((i for i, row in enumerate(rows or ()) if row.get(name) is not None), None)
            raise UserError("first appears (or changes type) after the file's Parquet columns were written; write "
                            ".jsonl output instead", path=self.path, field=name,
                            row=None if index is None else self._row(index))
        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self.handle, schema_with(self.schema, self.metadata or {}))
        columns = [table.column(field.name).cast(field.type) if field.name in table.column_names  # widened as merged
                   else pa.nulls(table.num_rows, field.type) for field in self.schema]  # a field it lacks: all null
        self._parquet.write_table(pa.Table.from_arrays(columns, schema=self.schema))
        self.rows_written += table.num_rows

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None


class RowWriter:
    """JSON lines or CSV rows to standard output (``-``); a file output goes through scoring.resume, atomically."""

    def __init__(self, path: str | os.PathLike, fieldnames: list[str] | None = None, declared: str | None = None):
        if not is_stdio(path):
            raise ValueError(f"RowWriter writes standard output, not {path}: a file goes through scoring.resume")
        self.format = file_format(path, declared)
        if self.format == "parquet":
            raise UserError("Parquet cannot be written to a pipe; give the output's file name", path=path)
        self.sink = RowSink(sys.stdout, self.format, fieldnames, path=STDOUT_NAME)

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        with writing(STDIO):
            self.sink.write(rows)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            with writing(STDIO):
                sys.stdout.flush()
        except OSError:
            if exc_type is None:  # a failure already on its way is the one reported
                raise
