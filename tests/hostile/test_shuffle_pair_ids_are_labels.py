"""Rule: shuffle_test's ``pair_index`` names which original each comparison comes from; it is a label, never a
position. It was cast to int and used as an array index: ids 10 and 20 counted 21 pair ids and resampled 19 empty
ones, -1 wrapped onto the last id (two originals resampled as one: a CI of zero width), 0.2 and 0.7 became one id,
document names were a ValueError traceback and a short list an IndexError traceback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import shuffle_test

ORIGINAL = np.array([0.9, 0.8, 0.3, 0.7, 0.6, 0.2])
SHUFFLED = np.array([0.1, 0.2, 0.5, 0.6, 0.1, 0.4])
GROUPED = [0, 0, 1, 1, 2, 2]  # three originals, two shuffles each


def _numbers(**kwargs):
    report = shuffle_test(ORIGINAL, SHUFFLED, resamples=200, seed=3, **kwargs)
    return report.accuracy.value, report.accuracy.ci, report.pair_ids, report.accuracy.nan_resamples


def test_control_contiguous_ids():
    value, ci, pair_ids, dropped = _numbers(pair_index=GROUPED)
    assert (value, pair_ids, dropped) == (pytest.approx(4 / 6), 3, 0)
    assert ci[0] < ci[1]


def test_control_no_index_is_one_pair_per_comparison():
    assert _numbers()[2] == 6


@pytest.mark.parametrize("ids", [
    [10, 10, 20, 20, 30, 30],
    [-1, -1, 0, 0, 1, 1],
    [0.2, 0.2, 0.7, 0.7, 1.5, 1.5],
    ["doc7", "doc7", "doc1", "doc1", "doc3", "doc3"],
    [7, 7, "1", "1", 3.0, 3.0],
    pd.Series(["a", "a", "b", "b", "c", "c"]),
], ids=["sparse", "negative", "fractional", "names", "mixed types", "series"])
def test_ids_are_labels(ids):
    assert _numbers(pair_index=ids) == _numbers(pair_index=GROUPED)


@pytest.mark.parametrize("ids, words", [
    ([0, 0, 1, 1, 2], "pair_index"),
    ([0, 0, 1, None, 2, 2], "pair_index[4]"),
    ([[0], [0], [1], [1], [2], [2]], "pair_index[1]"),
], ids=["short", "missing id", "nested"])
def test_bad_ids_are_one_line(ids, words):
    with pytest.raises(UserError) as caught:
        shuffle_test(ORIGINAL, SHUFFLED, pair_index=ids, resamples=10)
    assert words in str(caught.value) and "\n" not in str(caught.value)
