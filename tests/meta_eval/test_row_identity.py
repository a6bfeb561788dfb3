"""Rule: rows are paired by who they are, never by where they sit (meta_eval.rows).

Before: two pandas inputs whose indexes held the same labels in other orders were paired by position; ``benchmark
--names a,a`` kept one metric's results; two metric files with the same rows but other texts were paired row by
row; a benchmark row present twice was judged twice although ``--on-missing error`` (the default) refuses
duplicates. Each refusal stands beside the valid case working.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import auc_by_group, benchmark, bias_matrix, correlations, shuffle_test
from learned_metrics.meta_eval.benchmarks_io import read_benchmark

FAST = ["--resamples", "20", "--permutations", "20"]
LABELS = list("abcdefgh")


def _series(values, labels=LABELS) -> pd.Series:
    return pd.Series(values, index=labels)


def _reordered(series: pd.Series) -> pd.Series:
    return series.iloc[::-1]  # the same labels and values, the rows in another order


# --- pandas inputs are aligned by index --------------------------------------------------------------------------


def test_series_in_other_index_orders_give_the_numbers_of_aligned_series():
    original = _series([0.9, 0.8, 0.1, 0.7, 0.6, 0.2, 0.95, 0.5])
    shuffled = original - 0.05  # every original wins
    aligned = shuffle_test(original, shuffled, resamples=0).accuracy.value
    assert aligned == 1.0
    assert shuffle_test(original, _reordered(shuffled), resamples=0).accuracy.value == aligned
    # control: the same values paired by position are another test, so the check above can fail
    assert shuffle_test(original.to_numpy(), _reordered(shuffled).to_numpy(), resamples=0).accuracy.value != aligned


def test_auc_and_benchmark_align_labels_groups_and_scores_by_index():
    scores = _series([0.9, 0.8, 0.1, 0.7, 0.6, 0.2, 0.95, 0.5])
    labels = _series([1, 1, 0, 1, 0, 0, 1, 0])
    groups = _series(["x", "x", "x", "x", "y", "y", "y", "y"])
    aligned = auc_by_group(scores, labels, groups, resamples=0)
    moved = auc_by_group(scores, _reordered(labels), _reordered(groups), resamples=0)
    assert [g.auc.value for g in moved.groups] == [g.auc.value for g in aligned.groups]
    assert auc_by_group(scores.to_numpy(), _reordered(labels).to_numpy(), resamples=0).mean.value != \
        auc_by_group(scores, labels, resamples=0).mean.value  # control: by position it is another AUC
    base = benchmark({"m": scores}, labels, groups, threshold_protocol="fixed", resamples=0, permutations=1)
    other = benchmark({"m": _reordered(scores)}, labels, _reordered(groups), threshold_protocol="fixed",
                      resamples=0, permutations=1)
    assert other.results["m"].mean["bacc"].value == base.results["m"].mean["bacc"].value


def test_wide_frames_in_other_orders_are_aligned_on_documents_and_systems():
    rng = np.random.default_rng(0)
    human = pd.DataFrame(rng.normal(size=(6, 4)), index=[f"d{i}" for i in range(6)], columns=list("ABCD"))
    metric = human + rng.normal(scale=0.5, size=human.shape)
    moved = metric.loc[human.index[::-1], ["C", "A", "D", "B"]]
    expected = correlations(human, metric, resamples=0).stats
    got = correlations(human, moved, resamples=0).stats
    assert {k: v.value for k, v in got.items()} == {k: v.value for k, v in expected.items()}
    assert correlations(human.to_numpy(), moved.to_numpy(), resamples=0).stats["tau_sys"].value != \
        expected["tau_sys"].value  # control: by position the systems are other systems
    assert bias_matrix(human, moved).systems == bias_matrix(human, metric).systems


def test_pandas_inputs_with_other_labels_are_refused_naming_both():
    original = _series([0.9, 0.8, 0.1, 0.7, 0.6, 0.2, 0.95, 0.5])
    shuffled = _series([0.1, 0.2, 0.5, 0.3, 0.9, 0.4, 0.3, 0.1], labels=[*LABELS[:-1], "z"])
    with pytest.raises(UserError, match=r"original.*shuffled.*index") as error:
        shuffle_test(original, shuffled, resamples=0)
    assert "\n" not in str(error.value) and "'z'" in str(error.value)
    human = pd.DataFrame(np.eye(3), index=["d0", "d1", "d2"], columns=list("ABC"))
    with pytest.raises(UserError, match=r"human.*metric.*columns"):
        correlations(human, human.rename(columns={"C": "E"}), resamples=0)


def test_a_duplicate_index_label_is_refused():
    labels = [*LABELS[:-1], "a"]
    with pytest.raises(UserError, match=r"shuffled.*duplicate.*'a'"):
        shuffle_test(_series(np.arange(8.0)), _series(np.arange(8.0), labels=labels), resamples=0)
    with pytest.raises(UserError, match=r"scores.*duplicate.*'a'"):
        auc_by_group(_series([0.1, 0.9] * 4, labels=labels), _series([0, 1] * 4), resamples=0)


# --- benchmark files ---------------------------------------------------------------------------------------------


def _benchmark_file(folder: Path, rows: list[dict] | None = None, **change: str) -> Path:
    """An LLM-AggreFact test split, scored; ``change`` replaces one field of the third row."""
    folder.mkdir(parents=True, exist_ok=True)
    if rows is None:
        rows = [{"dataset": "ds" if i < 10 else "other", "doc": f"document {i}", "claim": f"claim {i}",
                 "label": i % 2, "score": round((i % 2) * 0.5 + (i % 5) / 10, 2)} for i in range(20)]
    rows = [dict(row) for row in rows]
    rows[2].update(change)
    path = folder / "test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_benchmark_names_must_be_distinct(tmp_path, capsys):
    first, second = _benchmark_file(tmp_path / "a"), _benchmark_file(tmp_path / "b")
    arguments = ["meta-eval", "benchmark", "--metric", str(first), "--metric", str(second),
                 "--threshold-protocol", "fixed", *FAST]
    assert main([*arguments, "--names", "a,b"]) == 0  # control
    capsys.readouterr()
    assert main([*arguments, "--names", "a,a"]) != 0
    error = capsys.readouterr().err.strip()
    assert "--names" in error and "distinct" in error and "\n" not in error
    with pytest.raises(UserError, match="distinct"):
        read_benchmark([first, second], ["a", "a"])


def test_metric_files_with_the_same_keys_but_other_texts_are_refused(tmp_path, capsys):
    first = _benchmark_file(tmp_path / "a")
    same = _benchmark_file(tmp_path / "same")
    assert set(read_benchmark([first, same], ["a", "b"]).scores) == {"a", "b"}  # control
    other = _benchmark_file(tmp_path / "b", claim="another claim")
    with pytest.raises(UserError) as error:
        read_benchmark([first, other], ["a", "b"])
    message = str(error.value)
    assert str(first) in message and str(other) in message and "row 3" in message and "claim" in message
    assert "\n" not in message
    document = _benchmark_file(tmp_path / "c", doc="another document")
    with pytest.raises(UserError, match=r"row 3.*'doc'"):
        read_benchmark([first, document], ["a", "b"])
    assert main(["meta-eval", "benchmark", "--metric", str(first), "--metric", str(other),
                 "--threshold-protocol", "fixed", *FAST]) != 0
    assert "claim" in capsys.readouterr().err


def test_a_benchmark_row_present_twice_is_refused_or_dropped_as_documented(tmp_path, capsys):
    plain = _benchmark_file(tmp_path / "plain")
    rows = [json.loads(line) for line in plain.read_text().splitlines()]
    twice = _benchmark_file(tmp_path / "twice", rows=[*rows, rows[4]])
    assert len(read_benchmark([plain]).labels) == 20  # control
    with pytest.raises(UserError, match=r"row 21.*duplicate.*row 5.*--on-missing drop") as error:
        read_benchmark([twice])
    assert "\n" not in str(error.value)
    arguments = ["meta-eval", "benchmark", "--threshold-protocol", "fixed", *FAST, "--json"]
    assert main(["meta-eval", "benchmark", "--metric", str(twice), "--threshold-protocol", "fixed", *FAST]) != 0
    assert "duplicate" in capsys.readouterr().err
    # --on-missing drop: duplicated rows are left out (every copy, as duplicated metric keys are) with a note
    dropped = read_benchmark([twice], on_missing="drop")
    assert len(dropped.labels) == 19 and any("duplicate" in note for note in dropped.notes)
    without = _benchmark_file(tmp_path / "without", rows=[r for i, r in enumerate(rows) if i != 4])
    assert main([*arguments, str(tmp_path / "x.json"), "--metric", str(twice), "--on-missing", "drop"]) == 0
    assert main([*arguments, str(tmp_path / "y.json"), "--metric", str(without)]) == 0
    got, expected = (json.loads((tmp_path / name).read_text()) for name in ("x.json", "y.json"))
    assert got["results"] == expected["results"]


def _true_folder(folder: Path, **change: str) -> Path:
    """TRUE files as published (one CSV per corpus); ``change`` replaces one field of frank's second row."""
    folder.mkdir(parents=True, exist_ok=True)
    for corpus in ("frank", "paws"):
        rows = [{"grounding": f"{corpus} source {i}", "generated_text": f"{corpus} output {i}", "label": i % 2,
                 "score": round(0.2 + 0.6 * (i % 2) + 0.03 * i, 2)} for i in range(8)]
        if corpus == "frank":
            rows[1].update(change)
        pd.DataFrame(rows).to_csv(folder / f"{corpus}_download.csv")
    return folder


def test_auc_report_pairs_true_rows_only_when_their_texts_agree(tmp_path, capsys):
    first, same = _true_folder(tmp_path / "a"), _true_folder(tmp_path / "same")
    arguments = ["meta-eval", "report", "--auc", "--format", "true", *FAST, "--metric", str(first), "--metric"]
    assert main([*arguments, str(same), "--names", "a,b"]) == 0  # control
    capsys.readouterr()
    other = _true_folder(tmp_path / "b", generated_text="another output")
    assert main([*arguments, str(other), "--names", "a,b"]) != 0
    error = capsys.readouterr().err.strip()
    assert "'generated_text'" in error and "frank_download.csv" in error and "row 2" in error and "\n" not in error
