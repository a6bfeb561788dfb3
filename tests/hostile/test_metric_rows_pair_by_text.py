"""Rule: rows of two metric files are paired only when their keys and texts agree. ``meta-eval report --auc`` on
scored rows (``--format rows``) checked labels and corpora alone, so a second metric file holding the same rows in
another order (labels still lining up) was paired row by row, exit 0: the paired tests compared different claims.
The rows' texts (the faithfulness pair, a benchmark layout's pair, a coherence ``text``) are now compared too; rows
without texts are compared by their ``--doc-field`` (``doc_id``) or ``id`` (they were paired by position)."""

from __future__ import annotations

import json
import random

import pytest

from learned_metrics.cli import main


def scored(path, rows, order):
    path.write_text("".join(json.dumps(rows[i]) + "\n" for i in order), encoding="utf-8")
    return path


def texts(layout: str, i: int) -> dict:
    if layout == "faithfulness":
        return {"grounding": f"Document {i} says this.", "generation": f"Claim {i}."}
    if layout == "llm-aggrefact":
        return {"doc": f"Document {i} says this.", "claim": f"Claim {i}."}
    if layout == "coherence":
        return {"text": f"Sentence {i} first. Sentence {i} second."}
    return {}  # ids only


FIRST_COMPARED = {"faithfulness": "grounding", "llm-aggrefact": "doc", "coherence": "text", "ids": "id"}


@pytest.mark.parametrize("layout", ["faithfulness", "llm-aggrefact", "coherence", "ids"])
@pytest.mark.parametrize("reordered", [True, False], ids=["reordered", "control-same-order"])
def test_report_auc_pairs_rows_only_when_their_texts_agree(tmp_path, capsys, layout, reordered):
    rng = random.Random(0)
    rows = [{"id": i, **texts(layout, i), "label": i % 2, "corpus": "c", "score": rng.random()} for i in range(40)]
    order = list(range(40))
    if reordered:  # the same rows, positives and negatives each shuffled among themselves: labels still line up
        for parity in (0, 1):
            places = order[parity::2]
            shuffled = places[:]
            rng.shuffle(shuffled)
            order[parity::2] = shuffled
    a = scored(tmp_path / "a.jsonl", rows, range(40))
    b = scored(tmp_path / "b.jsonl", [{**row, "score": rng.random()} for row in rows], order)
    code = main(["meta-eval", "report", "--auc", "--metric", str(a), "--metric", str(b), "--group-field", "corpus",
                 "--resamples", "20", "--permutations", "20"])
    err = capsys.readouterr().err
    if reordered:
        lines = [line for line in err.splitlines() if "error" in line]
        assert code == 2 and len(lines) == 1 and str(b) in lines[0], err
        assert f"'{FIRST_COMPARED[layout]}' differs" in lines[0], err
    else:
        assert code == 0, err


def test_report_auc_pairs_rows_by_the_doc_field_it_is_given(tmp_path, capsys):
    rows = [{"key": f"k{i}", "label": i % 2, "corpus": "c", "score": i / 10} for i in range(6)]
    a = scored(tmp_path / "a.jsonl", rows, range(6))
    b = scored(tmp_path / "b.jsonl", rows, [2, 1, 0, 3, 4, 5])  # rows 1 and 3 swapped: labels still line up
    argv = ["meta-eval", "report", "--auc", "--metric", str(a), "--metric", str(b), "--group-field", "corpus",
            "--resamples", "0", "--permutations", "10"]
    assert main(argv) == 0  # control: no key named, nothing to compare rows by
    capsys.readouterr()
    assert main([*argv, "--doc-field", "key"]) == 2
    assert "'key' differs from" in capsys.readouterr().err
