"""Every output can hold every value: every JSON the project writes is strict JSON (NaN and infinities are null,
never the ``NaN``/``Infinity`` tokens other parsers refuse), and a file or folder name that is not valid UTF-8
(``os.fsdecode`` keeps its bytes as lone surrogates) is written one documented way, ``\\xNN`` per byte
(``learned_metrics.io.display_text``), in JSON, provenance, tables and captions, never a traceback."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from learned_metrics import provenance
from learned_metrics.cli import main
from learned_metrics.io import display_text, json_line, text_value, write_json
from learned_metrics.render.text import json_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
NOT_UTF8 = os.fsdecode(b"sc\xffores.jsonl")  # what Python makes of a file name holding the byte 0xff
SHOWN = "sc\\xffores.jsonl"  # how every output writes it


def strict(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity, as JavaScript, jq or Go would."""

    def refuse(token: str):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def strings(obj) -> list[str]:
    """Every key and string value in a parsed JSON document."""
    if isinstance(obj, dict):
        return [*obj, *(s for v in obj.values() for s in strings(v))]
    if isinstance(obj, list):
        return [s for v in obj for s in strings(v)]
    return [obj] if isinstance(obj, str) else []


HOSTILE = {"nan": float("nan"), "inf": [math.inf, -math.inf], "np": np.float32("nan"), "arr": np.array([np.inf, 1.5]),
           "deep": {"x": (np.float64("-inf"),)}}
NULLED = {"nan": None, "inf": [None, None], "np": None, "arr": [None, 1.5], "deep": {"x": [None]}}
FINITE = {"a": 0.1, "b": [1e308, -5e-324], "c": np.float32(0.5), "d": {"e": 3}}
KEPT = {"a": 0.1, "b": [1e308, -5e-324], "c": 0.5, "d": {"e": 3}}


def each_writer(tmp_path: Path):
    """(name, JSON text written) for every JSON writer a value can reach."""

    def file(obj):
        write_json(tmp_path / "w.json", obj)
        return (tmp_path / "w.json").read_text(encoding="utf-8")

    return {
        "io.write_json": file,
        "io.json_line": json_line,
        "io.text_value": lambda obj: text_value([obj]),
        "render.json_text": json_text,
        "provenance.sidecar_text": provenance.sidecar_text,
        "provenance.parquet_metadata": lambda obj: provenance.parquet_metadata(obj)[provenance.PARQUET_KEY],
    }


WRITERS = ["io.write_json", "io.json_line", "io.text_value", "render.json_text", "provenance.sidecar_text",
           "provenance.parquet_metadata"]


def _read(writer: str, text: str):
    data = strict(text)
    return data[0] if writer == "io.text_value" else data


@pytest.mark.parametrize("writer", WRITERS)
def test_non_finite_numbers_are_null_in_every_json_writer(tmp_path, writer):
    assert _read(writer, each_writer(tmp_path)[writer](HOSTILE)) == NULLED


@pytest.mark.parametrize("writer", WRITERS)
def test_control_finite_numbers_are_kept_exactly(tmp_path, writer):
    assert _read(writer, each_writer(tmp_path)[writer](FINITE)) == KEPT


@pytest.mark.parametrize("writer", WRITERS)
def test_names_that_are_not_utf8_are_written_as_byte_escapes(tmp_path, writer):
    text = each_writer(tmp_path)[writer]({"input": NOT_UTF8, NOT_UTF8: "key", "plain": "naïve"})
    assert _read(writer, text) == {"input": SHOWN, SHOWN: "key", "plain": "naïve"}


def test_display_text_rule():
    assert display_text("naïve ✓") == "naïve ✓"  # control: valid text unchanged
    assert display_text(os.fsdecode(b"a\xff\xfeb")) == "a\\xff\\xfeb"
    assert display_text("x\ud800y") == "x\\ud800y"  # a lone surrogate that is no byte: its code point


def make_run(run_dir: Path, csv_rows: list[str]) -> Path:
    run_dir.mkdir(parents=True)
    info = {"experiment": "exp", "git_commit": "0123456789abcdef", "packages": {},
            "config": {"task_name": "exp", "seed": 1,
                       "callbacks": {"model_checkpoint": {"monitor": "val/f1", "mode": "max"}}}}
    (run_dir / "run_info.json").write_text(json.dumps(info))
    (run_dir / "csv").mkdir()
    (run_dir / "csv" / "metrics.csv").write_text("\n".join(csv_rows) + "\n")
    return run_dir


@pytest.mark.parametrize("best", ["inf", "nan", "0.75"], ids=["inf", "nan", "control"])
def test_runs_list_json_is_strict(tmp_path, capsys, best):
    make_run(tmp_path / "ck" / "exp" / "run1", ["step,val/f1", f"1,{best}"])
    out = tmp_path / "runs.json"
    assert main(["runs", "list", str(tmp_path / "ck"), "--json", str(out)]) == 0
    (row,) = strict(out.read_text(encoding="utf-8"))
    assert row["best"] == (0.75 if best == "0.75" else None)


def test_runs_list_with_a_folder_name_that_is_not_utf8(tmp_path, capsys):
    make_run(tmp_path / "ck" / "exp" / os.fsdecode(b"run\xff"), ["step,val/f1", "1,0.5"])
    make_run(tmp_path / "ck" / "exp" / "plain", ["step,val/f1", "1,0.25"])  # control beside it
    out = tmp_path / "runs.json"
    assert main(["runs", "list", str(tmp_path / "ck"), "--json", str(out)]) == 0, capsys.readouterr().err
    rows = strict(out.read_text(encoding="utf-8"))
    assert sorted(row["run"] for row in rows) == ["exp/plain", "exp/run\\xff"]


def _auc_rows(path: Path) -> Path:
    path.write_text("".join(json.dumps({"corpus": "c", "label": i % 2, "score": i / 20}) + "\n" for i in range(20)),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("name", [NOT_UTF8, "scores.jsonl"], ids=["not-utf8", "control"])
def test_meta_eval_json_settings_hold_any_input_name(tmp_path, capsys, name):
    source = _auc_rows(tmp_path / name)
    out = tmp_path / "auc.json"
    code = main(["meta-eval", "auc", "--input", str(source), "--resamples", "0", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    assert display_text(str(source)) in strings(strict(out.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", [os.fsdecode(b"met\xffric.jsonl"), "metric.jsonl"], ids=["not-utf8", "control"])
@pytest.mark.slow
def test_metric_names_from_file_names_reach_every_table_format(tmp_path, capsys, name):
    """One compare run writes all four formats (each a file of its own), each checked as when written alone."""
    metric = tmp_path / name
    metric.write_bytes((EXAMPLES / "metric_good.jsonl").read_bytes())
    options = ["--json", "--markdown", "--latex", "--csv"]
    outputs = [arg for option in options for arg in (option, str(tmp_path / f"out{option[1:]}.txt"))]
    code = main(["meta-eval", "compare", "--human", str(EXAMPLES / "human.jsonl"), "--metric", str(metric),
                 "--metric", str(EXAMPLES / "metric_weak.csv"), "--resamples", "0", *outputs])
    assert code == 0, capsys.readouterr().err
    shown = display_text(Path(name).stem)
    for option in options:
        written = (tmp_path / f"out{option[1:]}.txt").read_text(encoding="utf-8")  # strict UTF-8
        if option == "--json":
            assert shown in strings(strict(written))
        else:
            assert {"--markdown": shown.replace("\\", "\\\\"), "--latex": shown.replace("\\", r"\textbackslash{}"),
                    "--csv": shown}[option] in written, option


@pytest.mark.parametrize("name", [NOT_UTF8, "scores.jsonl"], ids=["not-utf8", "control"])
def test_provenance_sidecar_holds_any_input_name(tmp_path, name):
    output = tmp_path / "out.jsonl"
    output.write_text("{}\n", encoding="utf-8")
    provenance.write({"input": str(tmp_path / name)}, output)
    record = strict(provenance.sidecar_path(output).read_text(encoding="utf-8"))
    assert record == {"input": display_text(str(tmp_path / name))}


# the project's own bookkeeping, read back and compared with the disk (a folder marker's entries, resume progress):
# names stay exact there (JSON \u escapes) and no float is held; runner.py hashes rows (a fingerprint, never written)
BOOKKEEPING = {"outputs.py", "scoring/resume.py", "scoring/runner.py"}


def test_every_json_the_project_writes_goes_through_io_dump_json():
    import learned_metrics

    package = Path(learned_metrics.__file__).parent
    encoders = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
                if re.search(r"\bjson\.dumps?\(", path.read_text(encoding="utf-8"))}
    assert encoders - BOOKKEEPING == {"io.py"}


def test_the_score_line_names_a_non_utf8_output_as_every_output_writes_it(nli_export, tmp_path, capsys):
    """The '-> OUTPUT' line printed the surrogate (o\\udcff.jsonl), where every other line writes \\xff."""
    from learned_metrics.cli import main

    source = tmp_path / "in.jsonl"
    source.write_text('{"grounding": "A b c.", "generation": "A b."}\n', encoding="utf-8")
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(tmp_path / NOT_UTF8), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"-> {tmp_path}/{SHOWN}" in err and "\\udcff" not in err
