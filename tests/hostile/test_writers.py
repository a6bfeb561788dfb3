"""Class 5 (round two): writers keep every field and say where they failed.

The rule: every field of every row that can be read is written, with its value, in every output format,
or the command refuses with one line naming the field and the row; a write that fails (a full disk, standard
output on a full device) names the file, or says "standard output", and the space needed when it is known.
One place holds it: ``learned_metrics.io`` (``RowSink``: a Parquet table built from every row of a chunk,
part schemas unified at the join; the text of a value for JSON lines and CSV; ``writing``: which file a failed
write was writing), and ``learned_metrics.boundary`` turns the ``OSError`` into the line.

Controls beside each case: the same rows into a format that can hold them are written in full.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hostile.hostile_tools import LEARNED_METRICS, PAIRS, temporaries, write_jsonl
from learned_metrics.cli import main


def score(model: Path, source: Path, output: Path | str, *extra: str) -> list[str]:
    return ["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
            "--no-progress", *extra]


def one_error_line(capsys, code: int, *fragments: str) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "[Errno" not in captured.err, captured.err
    lines = [line for line in captured.err.splitlines() if ": error: " in line]
    assert code == 2 and len(lines) == 1, (code, captured.err)
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def read_parquet(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def rows_with(**late: object) -> list[dict]:
    """Six pairs; ``late`` fields are set from the third row on (absent before)."""
    return [{**pair, **(late if i >= 2 else {})} for i, pair in enumerate(PAIRS)]


# -- a field that first appears after the first row ------------------------------------------------


@pytest.mark.parametrize("chunk", ["10", "2"], ids=["same chunk", "later chunk"])
def test_parquet_output_keeps_a_field_that_first_appears_in_the_third_row(nli_export, tmp_path, chunk):
    source = write_jsonl(tmp_path / "in.jsonl", rows_with(note="late"))
    jsonl, parquet = tmp_path / "out.jsonl", tmp_path / "out.parquet"
    assert main(score(nli_export, source, jsonl, "--chunk-size", chunk)) == 0  # control
    assert [json.loads(line).get("note") for line in jsonl.read_text().splitlines()] == [None, None, *["late"] * 4]
    assert main(score(nli_export, source, parquet, "--chunk-size", chunk)) == 0
    written = read_parquet(parquet)
    assert [row["note"] for row in written] == [None, None, *["late"] * 4]
    assert list(written[0])[-1] == "note"  # columns in order of first appearance: after those of rows 1 and 2


def test_parquet_output_widens_integers_to_floats_across_chunks(nli_export, tmp_path):
    items = [{**pair, "weight": 1 if i < 2 else 1.5} for i, pair in enumerate(PAIRS)]
    source = write_jsonl(tmp_path / "in.jsonl", items)
    output = tmp_path / "out.parquet"
    assert main(score(nli_export, source, output, "--chunk-size", "2")) == 0
    assert [row["weight"] for row in read_parquet(output)] == [1.0, 1.0, 1.5, 1.5, 1.5, 1.5]


@pytest.mark.parametrize("chunk", ["10", "2"], ids=["same chunk", "later chunk"])
def test_parquet_output_refuses_a_field_of_two_types_naming_field_and_row(nli_export, tmp_path, capsys, chunk):
    items = [{**pair, "code": 7 if i < 2 else "x7"} for i, pair in enumerate(PAIRS)]
    source = write_jsonl(tmp_path / "in.jsonl", items)
    output = tmp_path / "out.parquet"
    code = main(score(nli_export, source, output, "--chunk-size", chunk))
    one_error_line(capsys, code, str(output), "row 3", "field 'code'", ".jsonl")
    assert not output.exists() and not temporaries(tmp_path) and sorted(os.listdir(tmp_path)) == ["in.jsonl"]
    assert main(score(nli_export, source, tmp_path / "out.jsonl", "--chunk-size", chunk)) == 0  # control


# -- empty objects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [{}, [{}], {"inner": {}}], ids=["{}", "[{}]", "{inner: {}}"])
@pytest.mark.slow
def test_empty_object_is_refused_by_parquet_naming_field_and_row_and_kept_elsewhere(nli_export, tmp_path, capsys,
                                                                                   value):
    source = write_jsonl(tmp_path / "in.jsonl", [{**pair, "meta": value} for pair in PAIRS])
    output = tmp_path / "out.parquet"
    code = main(score(nli_export, source, output))
    one_error_line(capsys, code, str(output), "row 1", "field 'meta'", "empty object")
    assert not output.exists() and not temporaries(tmp_path)

    jsonl, csv_out = tmp_path / "out.jsonl", tmp_path / "out.csv"  # controls: JSON lines and CSV keep it
    assert main(score(nli_export, source, jsonl)) == 0 and main(score(nli_export, source, csv_out)) == 0
    assert all(json.loads(line)["meta"] == value for line in jsonl.read_text().splitlines())
    import csv

    with csv_out.open(newline="") as handle:
        assert all(json.loads(row["meta"]) == value for row in csv.DictReader(handle))


def test_empty_object_beside_filled_ones_is_written_to_parquet(nli_export, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{**pair, "meta": {} if i else {"a": 1}} for i, pair in
                                                 enumerate(PAIRS)])
    output = tmp_path / "out.parquet"
    assert main(score(nli_export, source, output)) == 0
    assert read_parquet(output)[0]["meta"] == {"a": 1}


# -- Parquet input with binary, decimal and duration columns ---------------------------------------


def typed_parquet(path: Path, *, binary: bool) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(PAIRS)
    columns = {
        "grounding": pa.array([p["grounding"] for p in PAIRS]),
        "generation": pa.array([p["generation"] for p in PAIRS]),
        "price": pa.array([decimal.Decimal("12.30")] * n, type=pa.decimal128(10, 2)),
        "wait": pa.array([dt.timedelta(seconds=1, microseconds=500_000)] * n, type=pa.duration("us")),
        "wait_ns": pa.array([1_500_000_001] * n, type=pa.duration("ns")),
        "day": pa.array([dt.date(2024, 5, 1)] * n),
    }
    if binary:
        columns["blob"] = pa.array([b"\x00\xffraw"] * n, type=pa.binary())
    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_decimal_and_duration_from_parquet_are_written_exactly(nli_export, tmp_path, suffix):
    source = typed_parquet(tmp_path / "in.parquet", binary=False)
    output = tmp_path / f"out{suffix}"
    assert main(score(nli_export, source, output)) == 0
    if suffix == ".jsonl":
        written = [json.loads(line) for line in output.read_text().splitlines()]
    else:
        import csv

        with output.open(newline="") as handle:
            written = list(csv.DictReader(handle))
    assert len(written) == len(PAIRS)
    assert {(row["price"], row["wait"], row["wait_ns"], row["day"]) for row in written} == {
        ("12.30", "PT1.5S", "PT1.500000001S", "2024-05-01")}


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_binary_from_parquet_is_refused_by_text_outputs_naming_field_and_row(nli_export, tmp_path, capsys, suffix):
    source = typed_parquet(tmp_path / "in.parquet", binary=True)
    output = tmp_path / f"out{suffix}"
    code = main(score(nli_export, source, output))
    one_error_line(capsys, code, str(output), "row 1", "field 'blob'", "binary", ".parquet")
    assert not output.exists() and sorted(os.listdir(tmp_path)) == ["in.parquet"]

    parquet = tmp_path / "out.parquet"  # control: Parquet holds all of it
    assert main(score(nli_export, source, parquet)) == 0
    row = read_parquet(parquet)[0]
    assert row["blob"] == b"\x00\xffraw" and row["price"] == decimal.Decimal("12.30")
    assert row["wait"] == dt.timedelta(seconds=1.5)


# -- a full disk -----------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(where: Path, size: str) -> Path:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here (needs root and mount rights): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def long_pairs(n: int) -> list[dict]:
    """Pairs with about 400 bytes of padding that does not compress (Parquet would squeeze repeated text)."""
    return [{**PAIRS[i % len(PAIRS)], "id": i,
             "padding": "".join(hashlib.sha256(f"{i}-{k}".encode()).hexdigest() for k in range(6))} for i in range(n)]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_full_disk_names_the_file_being_written(nli_export, tmp_path, capsys, suffix):
    source = write_jsonl(tmp_path / "in.jsonl", long_pairs(300))  # about 200 kB of output
    with small_disk(tmp_path / "small", "64k") as disk:
        output = disk / f"scored{suffix}"
        code = main(score(nli_export, source, output))
        known = ("needs about",) if suffix != ".parquet" else ()  # the size of a text part is known before writing
        line = one_error_line(capsys, code, str(disk), ": No space left on device", *known)
        assert ".lmtmp-" not in line
        assert os.listdir(disk) == []  # nothing of the failed run is left on the small disk

        small = write_jsonl(tmp_path / "small.jsonl", PAIRS)  # control: what fits is written
        assert main(score(nli_export, small, output)) == 0
        assert output.stat().st_size > 0 and ".lmresume" not in str(os.listdir(disk))


def test_full_disk_while_joining_keeps_the_chunks_for_resume(nli_export, tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", long_pairs(80))  # about 60 kB of output in 4 chunks
    whole = tmp_path / "whole.jsonl"
    assert main(score(nli_export, source, whole, "--chunk-size", "20")) == 0
    kib = -(-whole.stat().st_size // 1024)
    assert kib > 40
    with small_disk(tmp_path / "small", f"{2 * kib + 40}k") as disk:  # room for the parts and the output
        filler = disk / "filler"
        filler.write_bytes(b"\0" * ((kib // 2 + 36) * 1024))  # ... but not while this is there too
        output = disk / "scored.jsonl"
        code = main(score(nli_export, source, output, "--chunk-size", "20"))
        line = one_error_line(capsys, code, str(output), "No space left on device", "needs about")
        assert ".lmtmp-" not in line
        assert not output.exists() and (disk / ".scored.jsonl.lmresume" / "progress.json").exists()

        filler.unlink()  # control: space freed, --resume only joins the parts
        assert main(score(nli_export, source, output, "--chunk-size", "20", "--resume")) == 0
        assert output.read_bytes() == whole.read_bytes()


def test_full_disk_for_a_json_summary_names_it(nli_export, tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", PAIRS)
    with small_disk(tmp_path / "small", "4k") as disk:
        (disk / "filler").write_bytes(b"\0" * 4096)
        summary = disk / "summary.json"
        code = main(score(nli_export, source, tmp_path / "out.jsonl", "--summary", str(summary)))
        one_error_line(capsys, code, str(summary), "No space left on device")
        assert sorted(os.listdir(disk)) == ["filler"]


# -- standard output on a full device --------------------------------------------------------------


@pytest.mark.slow
def test_standard_output_on_a_full_device_is_one_line(nli_export, tmp_path, monkeypatch):
    """Slow: a real ``learned-metrics score`` process with stdout on /dev/full (the error at interpreter exit,
    when Python flushes stdout, only shows in a real process); the control runs in process."""
    source = write_jsonl(tmp_path / "in.jsonl", PAIRS)
    cmd = [*LEARNED_METRICS, *score(nli_export, source, "-")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with open("/dev/full", "w") as full:
        proc = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert "[Errno" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert proc.returncode == 2 and len(errors) == 1, (proc.returncode, proc.stderr)
    assert "standard output: No space left on device" in errors[0]

    written = tmp_path / "stdout.jsonl"  # control: the same command with standard output on a file
    with written.open("w") as handle:
        monkeypatch.setattr(sys, "stdout", handle)
        assert main(score(nli_export, source, "-")) == 0
        monkeypatch.undo()
    assert len(written.read_text().splitlines()) == len(PAIRS)


@pytest.mark.parametrize("rows", [len(PAIRS), 300], ids=["fits the buffer", "larger than the buffer"])
def test_standard_output_on_a_full_device_in_process(nli_export, tmp_path, capsys, monkeypatch, rows):
    source = write_jsonl(tmp_path / "in.jsonl", long_pairs(rows))
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(score(nli_export, source, "-"))
        monkeypatch.undo()
    one_error_line(capsys, code, "standard output: No space left on device")

    buffer = io.StringIO()  # control
    monkeypatch.setattr(sys, "stdout", buffer)
    assert main(score(nli_export, source, "-")) == 0
    monkeypatch.undo()
    assert len(buffer.getvalue().splitlines()) == rows
