"""Rule: a text holding a lone surrogate (a JSON ``"\\ud800"`` escape without its pair) is refused as text, in one
line naming file, row and field; the tokenizer raised ``TypeError: TextInputSequence must be str`` (a 60-line
traceback, exit 1) from the CLI and the API. Control: the same row with a whole character scores."""

from __future__ import annotations

import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.scoring import load_scorer


def test_score_refuses_a_lone_surrogate_in_one_line(nli_export, tmp_path, capsys):
    source, out = tmp_path / "pairs.jsonl", tmp_path / "scored.jsonl"
    source.write_text('{"grounding": "a\\ud83d\\ude00b", "generation": "b"}\n'  # a whole pair: one emoji
                      '{"grounding": "a\\ud800b", "generation": "b"}\n', encoding="utf-8")
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output", str(out),
                 "--quiet"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "row 2, field 'grounding'" in lines[0] and "lone surrogate" in lines[0], lines
    assert not out.exists()


def test_the_api_refuses_a_lone_surrogate(nli_export):
    scorer = load_scorer(nli_export)
    assert scorer.score(groundings=["a\U0001f600b"], generations=["b"]).scores.shape == (1,)  # control
    with pytest.raises(UserError, match="lone surrogate"):
        scorer.score(groundings=["a\ud800b"], generations=["b"])
