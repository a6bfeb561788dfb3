"""The one input reader (learned_metrics.io.iter_rows): a byte that is not UTF-8 is refused in one line naming the
row that holds it, however far into the file (the text is decoded ahead of parsing, in blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows

GOOD = 1999  # rows before the bad one: far past the decoder's first block


def _write(path: Path, fmt: str, rows: list[bytes]) -> Path:
    header = [b"premise,hypothesis,label"] if fmt == "csv" else []
    path.write_bytes(b"\n".join(header + rows) + b"\n")
    return path


def _row(fmt: str, i: int, text: bytes = b"") -> bytes:
    premise = b"A man sleeps number %d." % i + text
    return premise + b",He rests.,entailment" if fmt == "csv" else (
        b'{"premise": "%s", "hypothesis": "He rests.", "label": "entailment"}' % premise)


def _refusal(path: Path) -> UserError:
    with pytest.raises(UserError) as caught:
        list(iter_rows(path))
    return caught.value


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_bad_byte_far_into_a_file_names_its_row(tmp_path, fmt):
    rows = [_row(fmt, i) for i in range(1, GOOD + 1)] + [_row(fmt, GOOD + 1, b"\xff")]
    error = _refusal(_write(tmp_path / f"pairs.{fmt}", fmt, rows))
    assert "not valid UTF-8" in str(error) and error.row == GOOD + 1, str(error)
    assert "\n" not in str(error)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_control_the_same_file_without_the_bad_byte_reads_every_row(tmp_path, fmt):
    rows = [_row(fmt, i, "é".encode()) for i in range(1, GOOD + 2)]  # non-ASCII, valid
    read = list(iter_rows(_write(tmp_path / f"pairs.{fmt}", fmt, rows)))
    assert [number for number, _ in read] == list(range(1, GOOD + 2))
    assert read[-1][1]["premise"] == f"A man sleeps number {GOOD + 1}.é"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_bad_byte_on_an_early_row_names_it(tmp_path, fmt):
    rows = [_row(fmt, 1), _row(fmt, 2), _row(fmt, 3, b"\xe2\x28")]
    assert _refusal(_write(tmp_path / f"pairs.{fmt}", fmt, rows)).row == 3


def test_jsonl_names_the_line_past_blank_lines(tmp_path):
    rows = [_row("jsonl", 1), b"", b"  ", _row("jsonl", 2), b"", _row("jsonl", 3, b"\xff")]
    assert _refusal(_write(tmp_path / "pairs.jsonl", "jsonl", rows)).row == 6


def test_csv_names_the_data_row_of_a_quoted_multi_line_value(tmp_path):
    rows = [_row("csv", 1), b'"line one\nline two",He rests.,entailment', b'"line one\nline \xff",He rests.,neutral']
    error = _refusal(_write(tmp_path / "pairs.csv", "csv", rows))
    assert error.row == 3, str(error)  # data rows as the other CSV errors count them: the header is row 0


def test_csv_bad_byte_in_the_header_names_the_header(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"premise,hyp\xffothesis,label\n" + _row("csv", 1) + b"\n")
    error = _refusal(path)
    assert error.row == 0 and "header" in str(error), str(error)


@pytest.mark.parametrize(("line", "field"), [
    (b'{"grounding": "a", "generation": "b", "generation": "c"}', "generation"),
    (b'{"grounding": "a", "generation": "b", "tags": {"x": 1, "x": 2}}', "x"),
])
def test_a_key_given_twice_in_a_json_row_names_row_and_field(tmp_path, line, field):
    """safety.md: a duplicate key is one line naming file, row and field; JSON keeps the last value silently (the
    row was scored with generation "c", exit 0). Control: the row with distinct keys reads."""
    good = b'{"grounding": "a", "generation": "b"}'
    path = tmp_path / "rows.jsonl"
    path.write_bytes(good + b"\n" + line + b"\n")
    with pytest.raises(UserError) as caught:
        list(iter_rows(path))
    assert (caught.value.row, caught.value.field) == (2, field) and "twice" in str(caught.value)
    path.write_bytes(good + b"\n" + good + b"\n")
    assert len(list(iter_rows(path))) == 2


def test_a_csv_row_with_fewer_values_than_the_header_names_row_and_field(tmp_path):
    """csv fills a short row's missing cells with None: the row was scored with id null, exit 0, while a row with
    more values was refused. Control: an empty value given (a trailing comma) is a value."""
    path = tmp_path / "rows.csv"
    path.write_text("grounding,generation,id\na,b,1\nc,d\n", encoding="utf-8")
    with pytest.raises(UserError) as caught:
        list(iter_rows(path))
    assert (caught.value.row, caught.value.field) == (2, "id") and "fewer values" in str(caught.value)
    path.write_text("grounding,generation,id\na,b,1\nc,d,\n", encoding="utf-8")
    assert [row["id"] for _, row in iter_rows(path)] == ["1", ""]
