"""Class 2 (round two): ``--resume`` never mixes inputs and never trusts a damaged progress folder.

The rule: a resumed run gives exactly the file an uninterrupted run gives, or one line saying why it cannot.

- the rows a resumed run skips must be the rows the interrupted run scored: the input rows are hashed as they
  stream and compared with the hashes recorded beside each finished part (this is what makes ``--input -``
  resumable: another standard input is refused, the same one continues);
- ``progress.json`` is checked field by field (types, signs, one record per part): a damaged record is one
  line and the folder is kept, for ``--restart``;
- every finished part is checked against what was recorded when it was finished (size, SHA-256, rows, a
  complete last line): a damaged part is removed and scored again, never joined; the others are kept;
- files in the progress folder that learned-metrics did not write are never deleted;
- a resumed run refused for a user error (a mistyped ``--system-field``, a field that is no system name)
  keeps the progress folder, so the interrupted work is not thrown away.

Every case ends with the controls: the correct resume (or ``--restart``) completes, byte-identical to an
uninterrupted run. An interrupted run is produced in-process: the scorer fails on a chosen chunk, which leaves
the progress folder exactly as ``kill -9`` after that many chunks would (parts and records are written
atomically; ``tests/scoring/test_runner.py`` kills real processes).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from tiny_models import GENERATIONS, GROUNDINGS

from hostile.hostile_tools import digest, write_jsonl
from learned_metrics.cli import main
from learned_metrics.scoring.scorer import Scorer

CHUNK = 7
ROWS = 30  # 5 chunks: 7, 7, 7, 7, 2
SYSTEMS = ("lead3", "bart", "pegasus")


def rows(n: int = ROWS, salt: str = "") -> list[dict]:
    return [{"id": i, "system": SYSTEMS[i % 3], "tags": ["a", "b"][: 1 + i % 2],
             "grounding": " ".join(GROUNDINGS[j % len(GROUNDINGS)] for j in range(i % 4, i % 4 + 1 + i % 3)),
             "generation": GENERATIONS[i % len(GENERATIONS)] + salt} for i in range(n)]


def base_args(model: Path, source: str | Path, output: Path, *extra: str) -> list[str]:
    return ["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
            "--chunk-size", str(CHUNK), "--no-progress", *extra]


def folder_of(output: Path) -> Path:
    return output.parent / f".{output.name}.lmresume"


def progress(output: Path) -> dict:
    return json.loads((folder_of(output) / "progress.json").read_text())


class Counting:
    """Scorer.score_validated that counts its calls and fails on call ``fail_on`` (1-based), like a crash."""

    def __init__(self, monkeypatch, fail_on: int | None = None):
        self.real = Scorer.score_validated
        self.calls = 0
        self.fail_on = fail_on
        monkeypatch.setattr(Scorer, "score_validated", self)

    def __get__(self, instance, owner):
        return lambda **kwargs: self(instance, **kwargs)

    def __call__(self, scorer, **kwargs):
        self.calls += 1
        if self.fail_on is not None and self.calls >= self.fail_on:
            raise RuntimeError("simulated crash (the process died here)")
        return self.real(scorer, **kwargs)


def interrupt(monkeypatch, args: list[str], finished: int = 3) -> None:
    """Run ``args`` until ``finished`` chunks are kept, then crash; the progress folder stays."""
    crash = Counting(monkeypatch, fail_on=finished + 1)
    with pytest.raises(RuntimeError, match="simulated crash"):
        main(args)
    monkeypatch.setattr(Scorer, "score_validated", crash.real)


def one_error_line(capsys, code: int, *fragments: str) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = [line for line in captured.err.splitlines() if ": error: " in line]
    assert code == 2 and len(lines) == 1, (code, captured.err)
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("resume-integrity") / "pairs.jsonl", rows())


@pytest.fixture(scope="module")
def reference(nli_export, source, tmp_path_factory) -> dict[str, bytes]:
    """Uninterrupted runs, one per output format."""
    out = {}
    folder = tmp_path_factory.mktemp("reference")
    for suffix in (".jsonl", ".parquet"):
        target = folder / f"whole{suffix}"
        assert main(base_args(nli_export, source, target)) == 0
        out[suffix] = target.read_bytes()
    return out


@pytest.fixture
def interrupted(nli_export, source, tmp_path, monkeypatch):
    """An interrupted JSONL run with 3 of its 5 chunks kept; returns (args, output)."""
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, source, output)
    interrupt(monkeypatch, args)
    assert progress(output)["chunks"] == 3 and not output.exists()
    return args, output


# -- control: an intact folder resumes and scores only what is missing -----------------------------


def test_intact_progress_folder_resumes_only_the_missing_chunks(interrupted, reference, monkeypatch, capsys):
    args, output = interrupted
    counting = Counting(monkeypatch)
    assert main([*args, "--resume"]) == 0
    assert counting.calls == 2  # chunks 4 and 5
    assert output.read_bytes() == reference[".jsonl"]
    assert not folder_of(output).exists()


# -- standard input --------------------------------------------------------------------------------


def _stdin(monkeypatch, items: list[dict]) -> None:
    data = "".join(json.dumps(item) + "\n" for item in items).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_resume_from_another_standard_input_is_refused(nli_export, tmp_path, reference, monkeypatch, capsys):
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, "-", output)
    _stdin(monkeypatch, rows())
    interrupt(monkeypatch, args)
    kept = digest(folder_of(output))

    _stdin(monkeypatch, rows(salt=" Later."))  # another input on standard input: its first rows differ
    code = main([*args, "--resume"])
    one_error_line(capsys, code, "standard input", "--restart")
    assert not output.exists() and digest(folder_of(output)) == kept

    _stdin(monkeypatch, rows()[:14])  # shorter than what was scored: the parts hold rows it does not have
    code = main([*args, "--resume"])
    one_error_line(capsys, code, "standard input")
    assert not output.exists() and digest(folder_of(output)) == kept

    _stdin(monkeypatch, rows()[:17])  # ending inside a scored chunk: it ended early, no row differs (it said so)
    code = main([*args, "--resume"])
    one_error_line(capsys, code, "standard input ended after row 17", "--restart")
    assert not output.exists() and digest(folder_of(output)) == kept

    _stdin(monkeypatch, rows())  # control: the same input again continues where the run stopped
    counting = Counting(monkeypatch)
    assert main([*args, "--resume"]) == 0
    assert counting.calls == 2
    assert output.read_bytes() == reference[".jsonl"]


def test_resume_of_a_file_whose_rows_changed_but_not_its_size_or_time_is_refused(
        nli_export, tmp_path, reference, monkeypatch, capsys):
    import os

    source = write_jsonl(tmp_path / "in.jsonl", rows())
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, source, output)
    interrupt(monkeypatch, args)
    stat = source.stat()
    data = source.read_bytes()
    source.write_bytes(data.replace(b"Anna bought apples.", b"Anna bought melons.", 1))  # same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same time (cp -p, rsync -t)
    code = main([*args, "--resume"])
    one_error_line(capsys, code, "differ")
    assert folder_of(output).is_dir() and not output.exists()

    source.write_bytes(data)  # control
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert main([*args, "--resume"]) == 0
    assert output.read_bytes() == reference[".jsonl"]


# -- a damaged progress.json -----------------------------------------------------------------------


def _edit_progress(output: Path, change) -> None:
    path = folder_of(output) / "progress.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


DAMAGED_RECORDS = {
    "not JSON": ("progress.json", lambda path: path.write_text('{"kind": "learned-metrics scoring progr')),
    "chunks a string": ("chunks", lambda data: data.update(chunks="3")),
    "negative chunks": ("chunks", lambda data: data.update(chunks=-1)),
    "chunks beyond the parts": ("chunks", lambda data: data.update(chunks=4)),
    "negative rows": ("rows", lambda data: data.update(rows=-21)),
    "rows a float": ("rows", lambda data: data.update(rows=21.0)),
    "truncated a string": ("truncated", lambda data: data.update(truncated="0")),
    "fingerprint a list": ("fingerprint", lambda data: data.update(fingerprint=[])),
    "fieldnames not a list": ("fieldnames", lambda data: data.update(fieldnames="id,system")),
}


@pytest.mark.parametrize("case", DAMAGED_RECORDS, ids=list(DAMAGED_RECORDS))
@pytest.mark.slow
def test_damaged_progress_record_is_one_line_and_kept_until_restart(interrupted, reference, capsys, case):
    args, output = interrupted
    named, change = DAMAGED_RECORDS[case]
    if case == "not JSON":
        change(folder_of(output) / "progress.json")
    else:
        _edit_progress(output, change)
    kept = digest(folder_of(output))
    code = main([*args, "--resume"])
    one_error_line(capsys, code, "progress.json", named, "--restart")
    assert not output.exists() and digest(folder_of(output)) == kept  # refused: nothing deleted, nothing joined

    code = main(args)  # neither option: refused too, the folder kept
    assert code == 2 and digest(folder_of(output)) == kept
    capsys.readouterr()
    assert main([*args, "--restart"]) == 0  # control: the user decides to start over
    assert output.read_bytes() == reference[".jsonl"] and not folder_of(output).exists()


# -- damaged parts ---------------------------------------------------------------------------------


def _drop_last_newline(data: bytes) -> bytes:
    return data[:-1]


def _drop_a_row(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    return b"".join(lines[:2] + lines[3:])


def _change_a_byte(data: bytes) -> bytes:
    at = data.index(b'"score": ') + len(b'"score": ') + 3  # a digit of the first score, same length
    return data[:at] + (b"1" if data[at:at + 1] != b"1" else b"2") + data[at + 1:]


DAMAGED_PARTS = {"missing its last newline": _drop_last_newline, "a row removed": _drop_a_row,
                 "a changed byte": _change_a_byte, "empty": lambda data: b""}


@pytest.mark.parametrize("case", DAMAGED_PARTS, ids=list(DAMAGED_PARTS))
def test_damaged_part_is_scored_again_and_never_joined(interrupted, reference, monkeypatch, capsys, case):
    args, output = interrupted
    part = folder_of(output) / "part-000001.jsonl"
    part.write_bytes(DAMAGED_PARTS[case](part.read_bytes()))
    untouched = {name: (folder_of(output) / name).read_bytes() for name in ("part-000000.jsonl", "part-000002.jsonl")}
    counting = Counting(monkeypatch, fail_on=2)  # the damaged part is scored again, then the run stops again
    with pytest.raises(RuntimeError):
        main([*args, "--resume"])
    err = capsys.readouterr().err
    assert "part 2 " in err and "scored again" in err  # said which part is scored again
    assert counting.calls == 2
    for name, data in untouched.items():  # only the damaged part was removed
        assert (folder_of(output) / name).read_bytes() == data
    assert progress(output)["chunks"] == 3

    monkeypatch.setattr(Scorer, "score_validated", counting.real)
    counting = Counting(monkeypatch)
    assert main([*args, "--resume"]) == 0
    assert counting.calls == 2  # chunks 4 and 5; 1 to 3 come from the parts
    assert output.read_bytes() == reference[".jsonl"]


def test_truncated_parquet_part_is_scored_again(nli_export, source, tmp_path, reference, monkeypatch, capsys):
    output = tmp_path / "scored.parquet"
    args = base_args(nli_export, source, output)
    interrupt(monkeypatch, args)
    part = folder_of(output) / "part-000002.parquet"
    part.write_bytes(part.read_bytes()[:-40])
    counting = Counting(monkeypatch)
    assert main([*args, "--resume"]) == 0
    assert counting.calls == 3  # the damaged third chunk, then chunks 4 and 5
    err = capsys.readouterr().err
    assert "part 3 " in err and "scored again" in err
    assert output.read_bytes() == reference[".parquet"]


# -- files the tool did not write ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["notes.txt", "part-000001.jsonl.bak", "part-notes.txt"])
def test_foreign_file_in_the_progress_folder_survives(interrupted, reference, capsys, name):
    args, output = interrupted
    foreign = folder_of(output) / name
    foreign.write_text("my own notes\n")
    kept = digest(folder_of(output))
    for option in ("--resume", "--restart"):
        code = main([*args, option])
        one_error_line(capsys, code, name, "did not write")
        assert digest(folder_of(output)) == kept and not output.exists()

    moved = output.parent / name  # control: moved away, the run continues
    foreign.rename(moved)
    assert main([*args, "--resume"]) == 0
    assert output.read_bytes() == reference[".jsonl"] and moved.read_text() == "my own notes\n"


def test_a_resume_in_another_output_format_names_the_formats(interrupted, capsys):
    """The interrupted run's JSONL parts were called files learned-metrics did not write when a resume asked for
    CSV. They are its own: the resume is refused naming the formats, and --restart replaces them."""
    args, output = interrupted
    kept = digest(folder_of(output))
    code = main([*args, "--output-format", "csv", "--resume"])
    line = one_error_line(capsys, code, "cannot resume", "formats")
    assert "did not write" not in line and digest(folder_of(output)) == kept
    assert main([*args, "--output-format", "csv", "--restart"]) == 0
    assert output.read_text().startswith("id,") and not folder_of(output).exists()


# -- a user error on resume keeps the interrupted work -----------------------------------------------


@pytest.mark.parametrize(("extra", "fragments"), [
    (("--system-field", "nosuch"), ("row 1:", "field 'nosuch'")),
    (("--system-field", "tags"), ("row 1, field 'tags'", "expected a key")),
])
def test_user_error_on_resume_keeps_the_progress_folder(interrupted, reference, capsys, extra, fragments):
    args, output = interrupted
    kept = digest(folder_of(output))
    code = main([*args, "--resume", *extra])
    one_error_line(capsys, code, *fragments)
    assert digest(folder_of(output)) == kept and not output.exists()

    assert main([*args, "--resume", "--system-field", "system"]) == 0  # control: the corrected command
    assert output.read_bytes() == reference[".jsonl"]
    assert "mean score per system" in capsys.readouterr().err
