"""What `score` prints says what happened: the chunking line only when a row was chunked (issue 23: docs and
messages say what the code does)."""

from __future__ import annotations

import json

from learned_metrics.cli import main


def test_the_chunking_line_appears_only_when_rows_were_chunked(nli_export, tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    short = {"grounding": "Anna bought apples.", "generation": "Anna has apples."}
    pairs.write_text(json.dumps(short) + "\n")
    base = ["score", "faithfulness", "--model", str(nli_export), "--input", str(pairs), "--premise-strategy", "chunk"]
    assert main([*base, "--output", str(tmp_path / "short.jsonl")]) == 0
    assert "chunked" not in capsys.readouterr().err  # nothing was chunked: no "chunked 0 long rows"
    long = {"grounding": " ".join(f"Sentence {i} is about apples and pears." for i in range(80)),
            "generation": "Anna has apples."}
    pairs.write_text(json.dumps(long) + "\n")
    assert main([*base, "--output", str(tmp_path / "long.jsonl"), "--max-length", "48"]) == 0
    assert "chunked 1 long rows into" in capsys.readouterr().err  # control
