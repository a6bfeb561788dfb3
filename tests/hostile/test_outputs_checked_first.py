"""Class 5: every output is checked before the work starts; OS errors are one line naming the path.

Found before: tracebacks for an output whose parent is a file, an output that is an existing folder
(after scoring every row), read-only folders (``score``, ``--json``, ``runs list --json``),
``--output .``/``..`` for data prep (after the whole build), and ``bias-matrix`` writing its JSON
before failing on ``--plot DIR``. ``outputs.check_outputs`` runs first in every command and the
boundary turns any remaining ``OSError`` into ``PROG: error: PATH: REASON``.
"""

from __future__ import annotations

import os

import pytest

from hostile.hostile_tools import (
    BUILD_SHUFFLE_SET,
    LEARNED_METRICS,
    PAIRS,
    assert_refused,
    cli,
    digest,
    run,
    temporaries,
    write_jsonl,
)
from learned_metrics.data.demo import write_coherence_documents


@pytest.fixture
def grid_files(tmp_path):
    rows = [{"doc_id": d, "system_id": s, "score": float((d * 7 + s * 3) % 5)} for d in range(6) for s in range(4)]
    return write_jsonl(tmp_path / "human.jsonl", rows), write_jsonl(tmp_path / "metric.jsonl", rows)


@pytest.fixture
def read_only(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def _score_argv(model, source, output, *extra):
    return ["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output), *extra]


def _score(model, source, output, *extra):
    return [*LEARNED_METRICS, *_score_argv(model, source, output, *extra)]


@pytest.mark.slow
def test_score_output_under_a_file_is_refused_before_loading(tiny_deberta_nli, pairs_file, tmp_path, capsys):
    (tmp_path / "results").write_text("a file")
    result = cli(capsys, *_score_argv(tiny_deberta_nli, pairs_file, tmp_path / "results" / "scored.jsonl"))
    assert_refused(result, "is a file, not a folder")
    assert not any(line.startswith("scored") for line in result.err.splitlines())


def test_score_output_that_is_a_folder_is_refused_before_scoring(tiny_deberta_nli, pairs_file, tmp_path, capsys):
    (tmp_path / "out.jsonl").mkdir()
    result = cli(capsys, *_score_argv(tiny_deberta_nli, pairs_file, tmp_path / "out.jsonl"))
    assert_refused(result, "is a folder")
    assert not any(line.startswith("scored") for line in result.err.splitlines())


def test_score_into_a_read_only_folder_is_refused_up_front(tiny_deberta_nli, pairs_file, read_only):
    result = run(_score(tiny_deberta_nli, pairs_file, read_only / "scored.jsonl"), as_user=True)
    assert_refused(result, "cannot write into", "Permission denied")
    assert os.listdir(read_only) == []


@pytest.mark.parametrize("command", ["correlations", "runs-list", "export"])
@pytest.mark.slow
def test_json_and_folders_into_a_read_only_folder_are_one_line(grid_files, read_only, nli_checkpoint, tmp_path,
                                                                command):
    human, metric = grid_files
    if command == "correlations":
        cmd = [*LEARNED_METRICS, "meta-eval", "correlations", "--human", str(human), "--metric", str(metric),
               "--resamples", "10", "--json", str(read_only / "out.json")]
    elif command == "runs-list":
        (tmp_path / "runs" / "exp" / "r1").mkdir(parents=True)
        (tmp_path / "runs" / "exp" / "r1" / "run_info.json").write_text("{}")
        cmd = [*LEARNED_METRICS, "runs", "list", str(tmp_path / "runs"), "--json", str(read_only / "runs.json")]
    else:
        cmd = [*LEARNED_METRICS, "export", str(nli_checkpoint), str(read_only / "export")]
    assert_refused(run(cmd, as_user=True), "cannot write into", str(read_only))
    assert os.listdir(read_only) == []


@pytest.mark.slow
def test_unreadable_input_is_one_line_naming_it(grid_files, tmp_path):
    human, metric = grid_files
    metric.chmod(0o000)
    try:
        result = run([*LEARNED_METRICS, "meta-eval", "correlations", "--human", str(human), "--metric", str(metric),
                      "--resamples", "0"], as_user=True)
    finally:
        metric.chmod(0o644)
    assert_refused(result, str(metric), "Permission denied")


@pytest.mark.parametrize("output", [".", ".."])
@pytest.mark.slow
def test_data_prep_output_dot_is_refused_before_the_build(tmp_path, output):
    work = tmp_path / "project" / "work"
    work.mkdir(parents=True)
    docs = write_coherence_documents(work / "docs.jsonl", 30)
    (tmp_path / "project" / "README.md").write_text("mine")
    before = digest(tmp_path)
    result = run([*BUILD_SHUFFLE_SET, "--source", f"jsonl:{docs}", "--output", output, "--overwrite"], cwd=work)
    assert_refused(result, "contains an input")
    assert "shuffling" not in result.err and digest(tmp_path) == before


def test_bias_matrix_with_a_bad_plot_writes_nothing(grid_files, tmp_path, capsys):
    human, metric = grid_files
    (tmp_path / "plots").mkdir()
    base = ["meta-eval", "bias-matrix", "--human", str(human), "--metric", str(metric),
            "--json", str(tmp_path / "bias.json")]
    assert_refused(cli(capsys, *base, "--plot", str(tmp_path / "plots")), "unsupported plot type")
    same = [*base[:-1], str(tmp_path / "bias.png"), "--plot", str(tmp_path / "bias.png")]
    assert_refused(cli(capsys, *same), "--json and --plot name the same path")
    assert_refused(cli(capsys, *base, "--plot", str(tmp_path / "human.jsonl" / "x.png")), "is a file, not a folder")
    assert not (tmp_path / "bias.json").exists() and temporaries(tmp_path) == []
    assert cli(capsys, *base, "--plot", str(tmp_path / "plots" / "bias.png")).code == 0
    assert (tmp_path / "bias.json").exists() and (tmp_path / "plots" / "bias.png").exists()


def test_output_folders_a_failed_command_created_are_removed(tiny_deberta_nli, tmp_path, capsys):
    bad = write_jsonl(tmp_path / "bad.jsonl", [*PAIRS, {"grounding": "x", "generation": "\u200b\u200b"}])
    result = cli(capsys, *_score_argv(tiny_deberta_nli, bad, tmp_path / "new" / "deeper" / "scored.jsonl"))
    assert_refused(result, "row 7", "field 'generation'", "empty")
    assert not (tmp_path / "new").exists()
