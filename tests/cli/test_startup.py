"""The CLI starts at once: which heavy modules each command does NOT import, checked in a fresh interpreter.

`--help` of every command builds the whole parser and must load none of them; a full meta-eval run on JSONL/CSV
may load numpy and scipy (the statistics) but not the model or data stack, pandas or pyarrow (pyarrow only when a
Parquet file is read); `score` refuses bad arguments before torch/transformers load. A module imported at the top of
a file on these paths brings the cost back and fails here, naming the command and the module.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from learned_metrics.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "meta_eval"
GRID = ["--human", str(EXAMPLES / "human.jsonl"), "--metric", str(EXAMPLES / "metric_good.jsonl")]

MODEL_STACK = ("torch", "transformers", "datasets", "accelerate", "lightning", "pandas", "sklearn", "matplotlib")
HEAVY = (*MODEL_STACK, "pyarrow", "numpy", "scipy")
STATISTICS = ("numpy", "scipy")  # what a meta-eval run may load

# Runs each command line of argv (a JSON list of lists) through main() in this one interpreter and prints, per
# command, its exit code and the heavy packages that were first imported while it ran.
PROBE = """
import contextlib, io, json, sys
heavy = set(json.loads(sys.argv[2]))
from learned_metrics.cli import main
def loaded():
    return {name.split('.')[0] for name in sys.modules} & heavy
results = []
for argv in json.loads(sys.argv[1]):
    before = loaded()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    results.append({"code": code, "imported": sorted(loaded() - before), "stderr": err.getvalue()[-500:]})
print(json.dumps(results))
"""


def run_fresh(*commands: list[str], heavy=HEAVY) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(commands)), json.dumps(list(heavy))],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of the parser, from the bare entry point down to each leaf (score coherence, meta-eval auc)."""
    paths = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += command_paths(sub, (*prefix, name))
    return paths


COMMANDS = command_paths(build_parser())


def test_every_command_family_is_covered():
    """A control: the parser walk finds the commands the issue names (a broken walk would test nothing)."""
    expected = {("score", "coherence"), ("score", "faithfulness"), ("export",), ("runs", "list"),
                ("prep", "shuffle-set"), ("prep", "anli"), ("sweep", "check"), ("meta-eval", "correlations"),
                ("meta-eval", "benchmark"), ("meta-eval", "confounders"), ("meta-eval", "shuffle-test")}
    assert expected <= set(COMMANDS)
    assert len([path for path in COMMANDS if path[:1] == ("meta-eval",)]) == 11  # the group and its 10 commands


@pytest.fixture(scope="module")
def help_results() -> dict[tuple[str, ...], dict]:
    """``--help`` of every command, one after the other in one fresh interpreter: none may import anything heavy,
    so a package one of them imports is blamed on it (the first to import it) as surely as in an interpreter of
    its own, for one interpreter start-up instead of one per command."""
    return dict(zip(COMMANDS, run_fresh(*([*command, "--help"] for command in COMMANDS)), strict=True))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda path: " ".join(path) or "learned-metrics")
def test_help_imports_nothing_heavy(command, help_results):
    result = help_results[command]
    assert result["code"] == 0, result["stderr"]
    assert result["imported"] == []


META_EVAL_RUNS = {
    "correlations": [*GRID, "--resamples", "10"],
    "correlations (csv)": ["--human", str(EXAMPLES / "human.jsonl"), "--metric", str(EXAMPLES / "metric_weak.csv"),
                           "--resamples", "10", "--coefficient", "pearson"],
    "compare": [*GRID, "--metric", str(EXAMPLES / "metric_weak.csv"), "--permutations", "10", "--resamples", "10",
                "--stats", "tau_sys,tau_pair", "--workers", "1"],
    "report": [*GRID, "--metric", str(EXAMPLES / "metric_weak.csv"), "--resamples", "10", "--permutations", "10",
               "--stats", "tau_sys", "--workers", "1"],
    "system-level": [*GRID, "--resamples", "10"],
    "systems": ["--input", str(EXAMPLES / "metric_good.jsonl"), "--resamples", "10", "--permutations", "10"],
    "confounders": ["--input", str(EXAMPLES / "confounders.jsonl"), "--metric-field", "score_nli",
                    "--resamples", "10"],
    "bias-matrix": GRID,
    "auc": ["--format", "true", "--input", str(EXAMPLES / "true_scored" / "nli_aug"), "--resamples", "10",
            "--on-missing", "drop"],
    "shuffle-test": ["--input", str(EXAMPLES / "shuffle.jsonl"), "--resamples", "10"],
    "benchmark": ["--metric", str(ROOT / "examples" / "benchmarks" / "scored_overlap" / "summac"),
                  "--threshold-protocol", "tune-on-val", "--resamples", "10"],
}


@pytest.mark.slow
def test_meta_eval_runs_load_only_the_statistics():
    """Every meta-eval command, run to the end on JSONL/CSV inputs, in one interpreter (scipy.stats is imported once,
    not once per command): a package is blamed on the first command that imports it."""
    results = run_fresh(*(["meta-eval", name.split()[0], *argv] for name, argv in META_EVAL_RUNS.items()))
    assert [result["code"] for result in results] == [0] * len(META_EVAL_RUNS), [r["stderr"] for r in results]
    imported = {name: sorted(set(result["imported"]) - set(STATISTICS))
                for name, result in zip(META_EVAL_RUNS, results, strict=True)}
    assert imported == dict.fromkeys(META_EVAL_RUNS, [])
    assert "numpy" in results[0]["imported"]  # a control: the probe sees what a command imports


def test_a_parquet_input_loads_pyarrow_but_not_pandas(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    paths = []
    for name in ("human", "metric_good"):
        rows = [json.loads(line) for line in (EXAMPLES / f"{name}.jsonl").read_text().splitlines() if line.strip()]
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / f"{name}.parquet")
        paths.append(str(tmp_path / f"{name}.parquet"))
    [result] = run_fresh(["meta-eval", "bias-matrix", "--human", paths[0], "--metric", paths[1]])  # no scipy: quick
    assert result["code"] == 0, result["stderr"]
    assert "pyarrow" in result["imported"]
    assert set(result["imported"]) - {"pyarrow", *STATISTICS} == set()


REFUSALS = ["missing input", "output is the input", "resume and restart", "text and sentences field",
            "summary not json"]


@pytest.fixture(scope="module")
def refusal_results(tmp_path_factory) -> dict[str, dict]:
    """Each refused ``score`` command, one after the other in one fresh interpreter (a refusal must import nothing
    heavy, so what one imports is blamed on it as in an interpreter of its own); each case has its own folder."""
    argvs = []
    for case in REFUSALS:
        tmp_path = tmp_path_factory.mktemp("refused")
        source = tmp_path / "in.jsonl"
        source.write_text('{"text": "One. Two."}\n')
        model = tmp_path / "model"
        model.mkdir()
        common = ["score", "coherence", "--model", str(model)]
        argvs.append({
            "missing input": [*common, "--input", str(tmp_path / "absent.jsonl"), "--output",
                              str(tmp_path / "o.jsonl")],
            "output is the input": [*common, "--input", str(source), "--output", str(source)],
            "resume and restart": [*common, "--input", str(source), "--output", str(tmp_path / "o.jsonl"),
                                   "--resume", "--restart"],
            "text and sentences field": [*common, "--input", str(source), "--output", str(tmp_path / "o.jsonl"),
                                         "--text-field", "text", "--sentences-field", "sentences"],
            "summary not json": [*common, "--input", str(source), "--output", str(tmp_path / "o.jsonl"),
                                 "--summary", str(tmp_path / "summary.txt")],
        }[case])
    return dict(zip(REFUSALS, run_fresh(*argvs), strict=True))


@pytest.mark.parametrize("case", REFUSALS)
def test_score_refuses_bad_arguments_before_the_model_stack_loads(case, refusal_results):
    result = refusal_results[case]
    assert result["code"] == 2, result["stderr"]
    assert "error" in result["stderr"]
    assert result["imported"] == []
