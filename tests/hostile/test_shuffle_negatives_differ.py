"""Rule: a shuffle-test negative is not its original. A row labelled shuffled whose text equals its comparison set's
original gets the original's score, and the tie counted as half a correct comparison (accuracy 0.750 with one tie,
exit 0); ``meta-eval shuffle-test`` refuses it in one line naming the file, row and field."""

from __future__ import annotations

import json

import pytest

from learned_metrics.cli import main

ORIGINAL = "The cat sat down. Then it slept. It woke at noon."


def rows(shuffle_of_one: str) -> list[dict]:
    out = []
    for doc in range(4):
        text = ORIGINAL if doc == 0 else f"Document {doc} starts. It goes on. It ends here."
        out.append({"doc_id": f"d{doc}", "text": text, "label": 1, "score": 0.9})
        shuffled = shuffle_of_one if doc == 0 else " ".join(reversed(text.split(". ")))
        out.append({"doc_id": f"d{doc}", "text": shuffled, "label": 0, "score": 0.9 if shuffled == text else 0.2})
    return out


@pytest.mark.parametrize(("shuffle", "refused"), [(ORIGINAL, True), ("Then it slept. The cat sat down. It woke at "
                                                                      "noon.", False)],
                         ids=["identical", "control-real-shuffle"])
def test_a_shuffle_identical_to_its_original_is_refused(tmp_path, capsys, shuffle, refused):
    source = tmp_path / "scores.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows(shuffle)), encoding="utf-8")
    code = main(["meta-eval", "shuffle-test", "--input", str(source)])
    err = capsys.readouterr().err
    if refused:
        lines = [line for line in err.splitlines() if "error" in line]
        assert code == 2 and len(lines) == 1, err
        assert str(source) in lines[0] and "row 2" in lines[0] and "text" in lines[0] and "'d0'" in lines[0]
    else:
        assert code == 0, err
