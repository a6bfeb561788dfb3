"""Every meta-eval result has to_frame() (issue 23 item 1); the bias matrix keeps system names everywhere (item 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from learned_metrics.meta_eval import (
    Estimate,
    auc_by_group,
    bias_matrix,
    compare,
    compare_systems,
    correlations,
    shuffle_test,
)
from learned_metrics.render import Cell, Column, Table, Tabular, table_frame


def _grids(seed: int = 0, docs: int = 12, systems: int = 4):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, (docs, systems)).astype(float)
    return human, human + rng.normal(0, 1, human.shape), rng.normal(size=human.shape)


def _results() -> dict[str, Tabular]:
    human, good, noise = _grids()
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 60)
    long = pd.DataFrame([{"doc_id": f"d{d}", "system_id": f"s{s}", "score": good[d, s]}
                         for d in range(good.shape[0]) for s in range(good.shape[1])])
    return {
        "correlations": correlations(human, good, resamples=20),
        "auc": auc_by_group(rng.normal(size=60) + labels, labels, ["a", "b"] * 30, resamples=20),
        "shuffle": shuffle_test(rng.normal(size=30), rng.normal(size=30), resamples=20),
        "compare": compare(human, {"good": good, "noise": noise}, resamples=20, permutations=20),
        "systems": compare_systems(long, resamples=20, permutations=20),
        "bias": bias_matrix(human, good, ["P", "Q", "R", "S"]),
    }


RESULTS = _results()


@pytest.mark.parametrize("name", list(RESULTS))
def test_every_result_has_a_frame_and_its_printed_table_as_a_frame(name):
    result = RESULTS[name]
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    printed = result.table_frame()
    table = result.tables()[0]
    assert isinstance(printed, pd.DataFrame) and len(printed) == len(table.rows)
    for column in table.columns:  # numbers come back as floats, CIs as two columns
        if column.kind in ("number", "p", "estimate"):
            assert printed[column.key].dtype == float
        if column.kind == "estimate":
            assert {f"{column.key}_ci_low", f"{column.key}_ci_high"} <= set(printed.columns)
        if column.kind == "ci":
            assert {f"{column.key}_low", f"{column.key}_high"} <= set(printed.columns)


def test_table_frame_keeps_row_names_values_and_intervals():
    table = Table([Column("metric", kind="text"), Column("tau", kind="estimate"), Column("n", kind="count"),
                   Column("ci", kind="ci"), Column("p", kind="p")],
                  [["ours", Cell(0.5, ci=(0.25, 0.75)), 10, Cell(None, ci=(0.1, 0.2)), 0.01],
                   ["theirs", Cell(None), None, Cell(None), None]])
    frame = table_frame(table)
    assert frame.index.name == "metric" and frame.index.tolist() == ["ours", "theirs"]
    assert frame.loc["ours", "tau"] == 0.5 and frame.loc["ours", "tau_ci_low"] == 0.25
    assert frame.loc["ours", "tau_ci_high"] == 0.75 and frame.loc["ours", "ci_high"] == 0.2
    assert np.isnan(frame.loc["theirs", "tau"]) and np.isnan(frame.loc["theirs", "p"])
    assert frame["n"].dtype == "Int64" and frame.loc["theirs", "n"] is pd.NA


def test_repeated_row_names_stay_a_column():
    frame = table_frame(Table([Column("group", kind="text"), Column("x")], [["a", 1.0], ["a", 2.0]]))
    assert list(frame.columns) == ["group", "x"] and frame["x"].tolist() == [1.0, 2.0]


def test_estimates_and_group_aucs_are_one_row_frames():
    estimate = Estimate(0.4, (0.1, 0.6), n=20, skipped=0, resamples=100, nan_resamples=0)
    row = estimate.to_frame()
    assert row.iloc[0][["value", "ci_low", "ci_high"]].tolist() == [0.4, 0.1, 0.6] and len(row) == 1
    undefined = Estimate(None, None, n=0, skipped=1, resamples=0, nan_resamples=0).to_frame()
    assert undefined["value"].dtype == float and np.isnan(undefined["ci_low"][0])
    stat = RESULTS["correlations"].stats["tau_sys"]
    assert stat.to_frame()["value"][0] == stat.value
    group = RESULTS["auc"].groups[0]
    assert group.to_frame().iloc[0].to_dict() == RESULTS["auc"].to_frame().iloc[0].to_dict()


# --- item 2: system names in the bias matrix -------------------------------------------------------------------


def _long(grid: np.ndarray, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame([{"doc_id": f"doc{d}", "system_id": names[s], "score": grid[d, s]}
                         for d in range(grid.shape[0]) for s in range(grid.shape[1])])


def test_bias_matrix_of_long_frames_keeps_the_system_names_in_result_tables_json_and_csv():
    human, good, _ = _grids(3)
    names = ["bart", "pegasus", "t5", "gold"]
    from_frames = bias_matrix(_long(human, names), _long(good, names))
    from_matrix = bias_matrix(human, good, names)
    assert from_frames.systems == from_matrix.systems and set(from_frames.systems) == set(names)
    np.testing.assert_array_equal(from_frames.pairs, from_matrix.pairs)
    assert json.loads(json.dumps(from_frames.to_json()))["systems"] == from_frames.systems
    header = from_frames.to_csv().splitlines()[0].split(",")
    assert header == ["#", "system", "mean_human", *from_frames.systems]
    assert [row[1].value for row in from_frames.tables()[0].rows] == from_frames.systems
    tau = from_frames.to_frame("tau")
    assert tau.index.tolist() == tau.columns.tolist() == from_frames.systems
    assert from_frames.to_frame("pairs").loc[from_frames.systems[0], from_frames.systems[1]] == from_frames.pairs[0, 1]


def test_bias_matrix_takes_names_from_a_wide_frame_and_numbers_only_for_plain_arrays():
    human, good, _ = _grids(4)
    wide = pd.DataFrame(human, columns=["A", "B", "C", "D"])
    matrix = bias_matrix(wide, pd.DataFrame(good, columns=["A", "B", "C", "D"]))
    assert sorted(matrix.systems) == ["A", "B", "C", "D"]
    assert sorted(bias_matrix(human, good).systems) == ["0", "1", "2", "3"]


def test_bias_matrix_plot_labels_are_the_system_names(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.axes

    from learned_metrics.render import figures

    human, good, _ = _grids(5)
    names = ["bart", "pegasus", "t5", "gold"]
    matrix = bias_matrix(_long(human, names), _long(good, names))
    seen = []
    original = matplotlib.axes.Axes.set_xticks

    def record(self, ticks, labels=None, **kwargs):
        seen.append(list(labels) if labels is not None else None)
        return original(self, ticks, labels, **kwargs)

    matplotlib.axes.Axes.set_xticks = record
    try:
        figures.plot_bias_matrix(matrix, tmp_path / "bias.png")
    finally:
        matplotlib.axes.Axes.set_xticks = original
    assert matrix.systems in seen
