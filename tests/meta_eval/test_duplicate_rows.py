"""Rule: a labelled row present twice (the same corpus and the same texts) is judged once: ``--on-missing error`` (the
default) refuses it naming both rows, ``drop`` leaves out every copy with a note (docs/meta_eval.md, ``--on-missing``).

Before: ``meta-eval benchmark`` refused a TRUE row given twice, while ``meta-eval auc --format true`` and ``report --auc
--format true`` judged it twice with exit 0. Each refusal stands beside the valid case working.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.data import read_scored_corpora

FAST = ["--resamples", "20", "--seed", "1"]


def _true_folder(folder: Path, twice: bool) -> Path:
    """One metric's TRUE folder (frank, paws); with ``twice`` frank's fifth row is given again at the end."""
    folder.mkdir(parents=True)
    for corpus in ("frank", "paws"):
        rows = [[f"{corpus} source {i}", f"{corpus} output {i}", i % 2, round(0.1 + 0.5 * (i % 2) + 0.02 * i, 3)]
                for i in range(12)]
        if twice and corpus == "frank":
            rows.append(list(rows[4]))
        with open(folder / f"{corpus}_download.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["grounding", "generated_text", "label", "score"])
            writer.writerows(rows)
    return folder


def _without_row_five(folder: Path) -> Path:
    """The folder with frank's fifth row left out altogether: what dropping every copy must judge."""
    out = _true_folder(folder, twice=False)
    lines = (out / "frank_download.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "frank_download.csv").write_text("".join(lines[:5] + lines[6:]), encoding="utf-8")
    return out


@pytest.fixture
def folders(tmp_path):
    return (_true_folder(tmp_path / "plain", False), _true_folder(tmp_path / "twice", True),
            _without_row_five(tmp_path / "without"))


COMMANDS = {"auc": lambda folder: ["auc", "--format", "true", "--input", str(folder)],
            "report": lambda folder: ["report", "--auc", "--format", "true", "--permutations", "20", "--metric",
                                      str(folder)],
            "benchmark": lambda folder: ["benchmark", "--layout", "true", "--threshold-protocol", "fixed",
                                         "--permutations", "20", "--metric", str(folder)]}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_true_row_present_twice_is_refused_by_every_command(folders, command, capsys):
    plain, twice, _ = folders
    assert main(["meta-eval", *COMMANDS[command](plain), *FAST]) == 0  # control
    capsys.readouterr()
    assert main(["meta-eval", *COMMANDS[command](twice), *FAST]) != 0
    error = capsys.readouterr().err.strip()
    assert "duplicate row" in error and "row 13" in error and "first at row 5" in error and "--on-missing drop" in error
    assert "\n" not in error and "Traceback" not in error


@pytest.mark.parametrize("command", COMMANDS)
def test_on_missing_drop_leaves_out_every_copy_in_every_command(folders, command, tmp_path, capsys):
    _, twice, without = folders
    dropped, expected = tmp_path / f"{command}_dropped.json", tmp_path / f"{command}_expected.json"
    assert main(["meta-eval", *COMMANDS[command](twice), *FAST, "--on-missing", "drop", "--json", str(dropped)]) == 0
    assert "dropped 2 duplicated row(s)" in capsys.readouterr().out
    assert main(["meta-eval", *COMMANDS[command](without), *FAST, "--json", str(expected)]) == 0
    got, want = (json.loads(path.read_text(encoding="utf-8")) for path in (dropped, expected))
    for key in ("groups", "cells", "results"):
        if key in want:
            assert json.dumps(got[key], sort_keys=True).replace("twice", "without") == \
                json.dumps(want[key], sort_keys=True)


def test_the_reader_refuses_or_drops_as_the_commands_do(folders):
    plain, twice, _ = folders
    assert len(read_scored_corpora([plain], fmt="true")["plain"].scores) == 24  # control
    with pytest.raises(UserError, match=r"duplicate row.*first at row 5.*--on-missing drop") as refused:
        read_scored_corpora([twice], fmt="true")
    assert refused.value.row == 13 and "\n" not in str(refused.value)
    kept = read_scored_corpora([twice], fmt="true", on_missing="drop")["twice"]
    assert len(kept.scores) == len(kept.labels) == len(kept.groups) == 23


@pytest.mark.parametrize("layout", ["faithfulness", "coherence"])
def test_a_scored_row_present_twice_is_refused_in_the_rows_format(tmp_path, capsys, layout):
    """``--format rows`` (scored files) follows the same rule as TRUE files: ``meta-eval auc`` judged a row given
    twice twice, exit 0. Control: the rows once; ``drop`` leaves out both copies."""
    texts = (lambda i: {"grounding": f"Source {i}.", "generation": f"Claim {i}."}) if layout == "faithfulness" else (
        lambda i: {"text": f"Sentence {i}. Another {i}."})
    rows = [{**texts(i), "label": i % 2, "score": 0.1 * i} for i in range(8)]
    for name, written in (("once", rows), ("twice", [*rows, rows[3]])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in written), encoding="utf-8")
    assert main(["meta-eval", "auc", "--input", str(tmp_path / "once.jsonl"), *FAST]) == 0
    capsys.readouterr()
    assert main(["meta-eval", "auc", "--input", str(tmp_path / "twice.jsonl"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "duplicate row" in err and "row 9" in err and "first at row 4" in err, err
    kept = read_scored_corpora([tmp_path / "twice.jsonl"], on_missing="drop")["twice"]
    assert len(kept.scores) == 7
