"""Class 1: an output never lands inside an input.

Rule: every path a command reads (files, folders, model folders, run folders) is declared to the output policy as an
input, by type (``outputs.input_path`` on the option, collected by ``outputs.inputs_of``), and no output may equal,
contain, or lie inside any of them (``outputs.check_outputs``). Enforced before any work, so the refusal costs
nothing and the input is byte-identical afterwards.

Found before: ``meta-eval auc --format true FOLDER --json FOLDER/x.csv`` overwrote a corpus it read, ``report --auc
... --csv`` likewise, ``score --summary MODEL/config.json`` destroyed the model it scored with, and ``runs list
--json RUN/run_info.json`` overwrote a run's own record: each exited 0.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hostile.hostile_tools import digest, write_jsonl
from learned_metrics.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def refused(capsys, argv: list[str], *fragments: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    return err


@pytest.fixture
def true_folder(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "true_scored" / "nli_aug", tmp_path / "nli_aug"))


@pytest.mark.parametrize("command", [["meta-eval", "auc", "--format", "true", "--input"],
                                     ["meta-eval", "report", "--auc", "--format", "true", "--metric"]],
                         ids=["auc", "report-auc"])
@pytest.mark.parametrize("option", ["--json", "--csv", "--markdown"])
def test_a_file_inside_a_folder_of_corpora_is_refused(true_folder, tmp_path, capsys, command, option):
    before = digest(true_folder)
    target = true_folder / "frank_valid_download.csv"
    refused(capsys, [*command, str(true_folder), option, str(target), "--resamples", "0"],
            "lies inside an input of this command")
    assert digest(true_folder) == before


@pytest.mark.parametrize("command", [["meta-eval", "auc", "--format", "true", "--input"],
                                     ["meta-eval", "report", "--auc", "--format", "true", "--metric"]],
                         ids=["auc", "report-auc"])
def test_control_the_same_output_beside_the_folder_is_written(true_folder, tmp_path, capsys, command):
    out = tmp_path / "beside.json"
    drop = ["--on-missing", "drop"]  # the shipped summeval file holds duplicated rows
    assert main([*command, str(true_folder), "--json", str(out), "--resamples", "0", "--permutations", "1", *drop]
                if "report" in command else [*command, str(true_folder), "--json", str(out), "--resamples", "0",
                                             *drop]) == 0
    assert json.loads(out.read_text())["settings"]["resamples"] == 0


def test_score_summary_inside_the_model_folder_is_refused_before_loading(tmp_path, capsys, tiny_deberta_nli,
                                                                        pairs_file):
    model = Path(shutil.copytree(tiny_deberta_nli, tmp_path / "model"))
    before = digest(model)
    refused(capsys, ["score", "faithfulness", "--model", str(model), "--input", str(pairs_file), "--output",
                     str(tmp_path / "out.jsonl"), "--summary", str(model / "config.json")],
            "--summary lies inside an input of this command")
    refused(capsys, ["score", "faithfulness", "--model", str(model), "--input", str(pairs_file), "--output",
                     str(model / "scores.jsonl")], "--output lies inside an input of this command")
    assert digest(model) == before and not (tmp_path / "out.jsonl").exists()


def test_runs_list_json_inside_a_run_folder_is_refused(tmp_path, capsys):
    run = tmp_path / "checkpoints" / "ccl_demo" / "2026-01-01_00-00-00"
    run.mkdir(parents=True)
    (run / "run_info.json").write_text(json.dumps({"experiment": "ccl_demo", "seed": 1}))
    before = digest(tmp_path / "checkpoints")
    refused(capsys, ["runs", "list", str(tmp_path / "checkpoints"), "--json", str(run / "run_info.json")],
            "lies inside an input of this command")
    assert digest(tmp_path / "checkpoints") == before
    assert main(["runs", "list", str(tmp_path / "checkpoints"), "--json", str(tmp_path / "runs.json")]) == 0
    assert json.loads((tmp_path / "runs.json").read_text())[0]["experiment"] == "ccl_demo"  # control


def test_an_output_equal_to_or_around_an_input_is_still_refused(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    scored = write_jsonl(tmp_path / "data" / "scored.jsonl",
                         [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": float(d * s % 5)}
                          for d in range(4) for s in range(3)])
    refused(capsys, ["meta-eval", "systems", "--input", str(scored), "--json", str(scored)],
            "--json is an input of this command")
    refused(capsys, ["meta-eval", "systems", "--input", str(scored), "--markdown", str(tmp_path)],
            "--markdown contains an input of this command")
    assert main(["meta-eval", "systems", "--input", str(scored), "--json", str(tmp_path / "systems.json"),
                 "--permutations", "20"]) == 0  # control
