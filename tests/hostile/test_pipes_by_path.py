"""Rule: an input named by path is a regular file. A pipe given by path (``--input <(cmd)``, ``--input /dev/stdin``)
was read ahead (the layout sniff, the row count) before scoring, so the rows read ahead were lost: 15 of 50 rows
scored, exit 0. It is refused in one line before anything is read (``--input -`` takes a pipe). Control: the same
rows from a file."""

from __future__ import annotations

import json
import os

import pytest

from learned_metrics.cli import main

ROWS = [{"grounding": f"Source {i}.", "generation": f"Claim {i}.", "label": i % 2, "score": i / 10} for i in range(6)]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pairs.jsonl"
    os.mkfifo(path)  # never opened by the refusal: nothing blocks
    return path


def _refused(capsys, argv, path) -> None:
    capsys.readouterr()
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "not a regular file" in lines[0], lines


def test_score_refuses_a_pipe_given_by_path(fifo, nli_export, tmp_path, capsys):
    out = tmp_path / "scored.jsonl"
    _refused(capsys, ["score", "faithfulness", "--model", str(nli_export), "--input", str(fifo), "--output",
                      str(out), "--quiet"], fifo)
    assert not out.exists()
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(plain), "--output", str(out),
                 "--quiet"]) == 0  # control
    assert len(out.read_text().splitlines()) == len(ROWS)


def test_meta_eval_refuses_a_pipe_given_by_path(fifo, capsys):
    _refused(capsys, ["meta-eval", "auc", "--input", str(fifo), "--resamples", "0"], fifo)
