"""Rule: every reader of keyed rows (human, SummEval, metric, systems, frames, shuffle files) follows the one
row-identity rule of meta_eval.rows: rows pair by key, a row present twice follows ``--on-missing`` (error names
both rows; drop leaves out every copy with a note), names are distinct. Each refusal stands beside a control."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import correlations, load_grid, read_human_scores, read_shuffle_rows
from learned_metrics.meta_eval.systems import SystemScores, compare_systems, read_system_scores


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _summeval(path: Path, extra: list[dict] = ()) -> Path:
    rows = [{"id": f"d{d}", "model_id": f"M{m}", "expert_annotations": [{"coherence": 1 + (d + m) % 5}] * 3}
            for d in range(3) for m in range(2)]
    return _jsonl(path, [*rows, *extra])


def test_a_summeval_summary_present_twice_follows_on_missing(tmp_path):
    plain = read_human_scores(_summeval(tmp_path / "plain.jsonl"), "coherence", fmt="summeval")
    assert len(plain.values) == 6  # control
    twice = _summeval(tmp_path / "twice.jsonl", [{"id": "d1", "model_id": "M0",
                                                  "expert_annotations": [{"coherence": 5}]}])
    with pytest.raises(UserError, match=r"row 7: duplicate key \(id='d1', model_id='M0'\), first at row 3"):
        read_human_scores(twice, "coherence", fmt="summeval")
    dropped = read_human_scores(twice, "coherence", fmt="summeval", on_missing="drop")
    assert set(dropped.values) == set(plain.values) - {("d1", "M0")}
    assert any("duplicated key" in note for note in dropped.notes)


def _cells(docs: range, system: str, offset: float = 0.0) -> list[dict]:
    return [{"doc_id": f"d{d}", "system_id": system, "score": d + offset} for d in docs]


def test_a_system_key_present_three_times_across_files_is_left_out_every_copy(tmp_path):
    first = _jsonl(tmp_path / "a.jsonl", [*_cells(range(5), "a"), _cells([2], "a", 9.0)[0]])
    second = _jsonl(tmp_path / "b.jsonl", [*_cells(range(5), "b", 1.0), _cells([2], "a", 7.0)[0]])
    with pytest.raises(UserError, match=r"row 6: duplicate key \(doc_id='d2', system_id='a'\), first at row 3"):
        read_system_scores([first, second])
    data = read_system_scores([first, second], on_missing="drop")
    a = data.systems.index("a")
    assert np.isnan(data.grid[data.docs.index("d2"), a])  # every copy left out, the one in b.jsonl too
    assert not np.isnan(data.grid[data.docs.index("d1"), a])  # control: the other keys stay
    assert any("duplicated key" in note for note in data.notes)


def test_system_names_must_be_distinct_naming_the_repeated_one():
    grid = np.arange(6.0).reshape(3, 2)
    assert compare_systems(SystemScores(["d0", "d1", "d2"], ["a", "b"], grid), resamples=0,
                           permutations=10).systems  # control
    with pytest.raises(UserError, match=r"system names must be distinct.*'a'"):
        compare_systems(SystemScores(["d0", "d1", "d2"], ["a", "a"], grid), resamples=0, permutations=10)


def _long(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame([{"doc_id": f"d{i}", "system_id": f"s{j}", "score": float(values[i, j])}
                         for i in range(values.shape[0]) for j in range(values.shape[1])])


def test_a_metric_frame_row_present_twice_names_both_rows():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(5, 4))
    metric = _long(human + rng.normal(scale=0.3, size=human.shape))
    assert correlations(_long(human), metric, resamples=0).stats  # control
    doubled = pd.concat([metric, metric.iloc[[5]]], ignore_index=True)
    with pytest.raises(UserError, match=r"row 21: duplicate key \(doc_id='d1', system_id='s1'\), first at row 6"):
        correlations(_long(human), doubled, resamples=0)


def test_human_and_metric_files_pair_by_key_not_by_position(tmp_path):
    rows = [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": float((d * 3 + s * 5) % 7)}
            for d in range(6) for s in range(4)]
    metric = [{**row, "score": row["score"] + (row["doc_id"] == "d0")} for row in rows]
    human = _jsonl(tmp_path / "human.jsonl", rows)
    aligned = load_grid(human, [_jsonl(tmp_path / "m.jsonl", metric)])
    moved = load_grid(human, [_jsonl(tmp_path / "moved.jsonl", metric[::-1])])
    np.testing.assert_array_equal(moved.metrics["moved"], aligned.metrics["m"])
    by_position = [{**row, "score": other["score"]} for row, other in zip(rows, metric[::-1], strict=True)]
    shifted = load_grid(human, [_jsonl(tmp_path / "p.jsonl", by_position)])
    assert not np.array_equal(shifted.metrics["p"], aligned.metrics["m"])  # control: the check can fail


def _shuffle_rows(extra: list[dict] = ()) -> list[dict]:
    rows = []
    for d in range(6):
        rows.append({"doc_id": f"d{d}", "label": 1, "score": 0.9, "text": f"A{d}. B{d}. C{d}."})
        rows.append({"doc_id": f"d{d}", "label": 0, "score": 0.2 + d / 10, "text": f"C{d}. A{d}. B{d}."})
        rows.append({"doc_id": f"d{d}", "label": 0, "score": 0.5, "text": f"B{d}. C{d}. A{d}."})
    return [*rows, *extra]


def test_a_shuffled_row_present_twice_is_refused_naming_both_rows(tmp_path, capsys):
    plain = _jsonl(tmp_path / "plain.jsonl", _shuffle_rows())
    assert len(read_shuffle_rows(plain).pair_ids) == 18  # control: two different shuffles per document
    tie = _jsonl(tmp_path / "tie.jsonl", _shuffle_rows([{"doc_id": "d0", "label": 0, "score": 0.9,
                                                         "text": "A0. B0. C0."}]))
    with pytest.raises(UserError, match=r"row 19, field 'text': this shuffled row's text is its original's"):
        read_shuffle_rows(tie)  # not a duplicate row (another kind), but no negative either
    twice = _jsonl(tmp_path / "twice.jsonl", _shuffle_rows([_shuffle_rows()[4]]))
    with pytest.raises(UserError, match=r"row 19: duplicate row .*'d1'.*first at row 5"):
        read_shuffle_rows(twice)
    assert main(["meta-eval", "shuffle-test", "--input", str(twice), "--resamples", "10"]) != 0
    error = capsys.readouterr().err.strip()
    assert "duplicate" in error and "row 19" in error and "\n" not in error
