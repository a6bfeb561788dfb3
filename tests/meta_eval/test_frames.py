"""Notebook use: long DataFrames give the same statistics as matrices; matrix axes are named, not guessed."""

from __future__ import annotations

import numpy as np
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import correlations
from learned_metrics.meta_eval.bias import bias_matrix
from learned_metrics.meta_eval.report import correlation_report
from learned_metrics.meta_eval.significance import compare

pd = pytest.importorskip("pandas")
STATS = ["tau_sys", "tau_sum", "tau_pair"]


def long_frame(grid: np.ndarray, column: str = "score") -> pd.DataFrame:
    return pd.DataFrame([{"doc_id": f"d{d}", "system_id": f"s{s}", column: grid[d, s]}
                         for d in range(grid.shape[0]) for s in range(grid.shape[1]) if not np.isnan(grid[d, s])])


@pytest.fixture(scope="module")
def grids():
    rng = np.random.default_rng(3)
    human = rng.normal(size=(30, 5)) + np.linspace(-1, 1, 5)
    metric = human + rng.normal(0, 0.5, human.shape)
    other = rng.normal(size=human.shape)
    metric[4, 2] = np.nan  # one summary the metric did not score
    return human, metric, other


def test_long_frames_in_any_row_order_equal_the_matrices(grids):
    human, metric, _ = grids
    shuffled = long_frame(metric, "ours").sample(frac=1.0, random_state=0)  # rows in another order
    from_frames = correlations(long_frame(human), shuffled, stats=STATS, resamples=50)
    from_arrays = correlations(human, metric, stats=STATS, resamples=50)
    for statistic in STATS:
        assert from_frames.stats[statistic].value == pytest.approx(from_arrays.stats[statistic].value)
        assert from_frames.stats[statistic].n == from_arrays.stats[statistic].n
    frame = from_frames.to_frame()
    assert list(frame["statistic"]) == STATS and {"value", "ci_low", "ci_high", "n"} <= set(frame.columns)


def test_named_axes_transpose_nlpstats_orientation(grids):
    human, metric, other = grids
    upright = correlations(human, metric, stats=STATS, resamples=0)
    turned = correlations(human.T, metric.T, stats=STATS, resamples=0, axes="systems x documents")
    assert {s: upright.stats[s].value for s in STATS} == {s: turned.stats[s].value for s in STATS}
    # the same matrices without naming the axes are read as 5 documents x 30 systems: another statistic
    assert correlations(human.T, metric.T, stats=["tau_sys"], resamples=0).stats["tau_sys"].n == 30
    both = compare(human.T, {"a": metric.T, "b": other.T}, stats=STATS, permutations=20, axes="systems x documents")
    assert len(both.to_frame()) == 2 * len(STATS)
    matrix = bias_matrix(long_frame(human), long_frame(metric))
    assert len(matrix.systems) == 5
    with pytest.raises(UserError, match="axes must be one of"):
        correlations(human, metric, axes="rows x columns")


def test_report_accepts_frames_and_refuses_mixed_or_duplicate_inputs(grids):
    human, metric, other = grids
    table = correlation_report(long_frame(human), {"ours": long_frame(metric), "rand": long_frame(other)},
                               stats=STATS, resamples=20, permutations=20)
    assert table.metrics == ["ours", "rand"] and len(table.to_frame()) == 2 * len(STATS)
    with pytest.raises(UserError, match="every input as a long DataFrame"):
        correlations(long_frame(human), metric)
    duplicated = pd.concat([long_frame(metric), long_frame(metric).head(1)])
    with pytest.raises(UserError, match="more than one row for"):
        correlations(long_frame(human), duplicated)
