"""Rule: scored rows are read by one reader (``meta_eval.rows.read_scored``), so every analysis that reads labelled
rows checks a row the same way and refuses the same bad row with the same words (file, row and field named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import read_labelled_scores, read_shuffle_rows

GOOD = [{"doc_id": "d1", "label": 1, "score": 0.9, "text": "A. B."},
        {"doc_id": "d1", "label": 0, "score": 0.2, "text": "B. A."}]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _refusal(read, path: Path) -> str:
    with pytest.raises(UserError) as refused:
        read(path)
    return str(refused.value)


@pytest.mark.parametrize("bad", [{"doc_id": "d2", "text": "C."},  # neither score nor label
                                 {"doc_id": "d2", "label": 1, "text": "C."},  # no score
                                 {"doc_id": "d2", "score": 0.4, "text": "C."},  # no label
                                 {"doc_id": "d2", "label": "maybe", "score": "high", "text": "C."}])
def test_a_bad_row_is_refused_with_the_same_words_by_every_labelled_reader(tmp_path, bad):
    good = _jsonl(tmp_path / "good.jsonl", GOOD)
    assert len(read_labelled_scores(good).scores) == len(read_shuffle_rows(good).scores) == 2  # control
    path = _jsonl(tmp_path / "bad.jsonl", [*GOOD, bad])
    auc, shuffle = _refusal(read_labelled_scores, path), _refusal(read_shuffle_rows, path)
    assert auc == shuffle
    assert "row 3" in auc and "\n" not in auc
