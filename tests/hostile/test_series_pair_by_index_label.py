"""Rule: two pandas Series given to ``Scorer.score`` are paired by index label, never by position. ``score(groundings,
generations)`` with the same labels in another order (``df.b.sort_values()``, a reversed Series) paired row *i* of one
with row *i* of the other, exit 0: every score was of a grounding with another row's generation, and ``to_frame()``
put it under the groundings' label. Series with different labels were paired by position too. The same labels are
now put in the groundings' order; other labels, or repeated labels in another order, are one error line. A list beside
a Series has no labels and pairs by position (control)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import learned_metrics
from learned_metrics.errors import UserError

GROUNDINGS = ["The cat sat on the mat all day long.", "Paris is the capital of France.", "Dogs bark.",
              "The meeting was moved to Friday afternoon at three.", "Rain fell."]
GENERATIONS = ["A cat sat.", "Paris is in Germany and it is small.", "Dogs are always silent at night.", "x",
               "It was sunny and dry all week."]
LABELS = ["r1", "r2", "r3", "r4", "r5"]


@pytest.fixture(scope="module")
def scorer(nli_export):
    return learned_metrics.load_scorer(nli_export)


@pytest.fixture(scope="module")
def truth(scorer) -> dict[str, float]:
    """Each label's score, paired by position in plain lists (no labels involved)."""
    return dict(zip(LABELS, scorer.score(GROUNDINGS, GENERATIONS).scores, strict=True))


def by_label(result) -> dict:
    return result.to_frame()["score"].to_dict()


def assert_paired_by_label(result, truth, index) -> None:
    assert list(result.to_frame().index) == list(index)
    got = by_label(result)
    assert got.keys() == truth.keys()
    for label in truth:
        assert got[label] == pytest.approx(truth[label], rel=0, abs=1e-9), label


@pytest.mark.parametrize("order", [[4, 3, 2, 1, 0], [2, 0, 4, 1, 3]], ids=["reversed", "shuffled"])
@pytest.mark.parametrize("keyword", [False, True], ids=["positional", "keywords"])
def test_same_labels_in_another_order_are_paired_by_label(scorer, truth, order, keyword):
    groundings = pd.Series(GROUNDINGS, index=LABELS)
    generations = pd.Series(GENERATIONS, index=LABELS).iloc[order]
    result = (scorer.score(groundings=groundings, generations=generations) if keyword
              else scorer.score(groundings, generations))
    assert_paired_by_label(result, truth, LABELS)
    assert len(result.rows()) == len(LABELS)


def test_groundings_reordered_keep_their_order_and_labels(scorer, truth):
    order = [3, 1, 4, 0, 2]
    groundings = pd.Series(GROUNDINGS, index=LABELS).iloc[order]
    result = scorer.score(groundings, pd.Series(GENERATIONS, index=LABELS))
    assert_paired_by_label(result, truth, [LABELS[i] for i in order])


def test_details_follow_the_label(scorer):
    groundings = pd.Series(GROUNDINGS, index=LABELS)
    generations = pd.Series(GENERATIONS, index=LABELS).iloc[::-1]
    frame = scorer.score(groundings, generations, details=True).to_frame()
    for label, generation in zip(LABELS, GENERATIONS, strict=True):
        assert frame.loc[label, "details"][0]["sentence"] == generation


@pytest.mark.parametrize("other", [["a", "b", "c", "d", "e"], ["r1", "r2", "r3", "r4", "r9"], ["r1", "r2", "r3", "r4"]],
                         ids=["disjoint", "one-differs", "fewer"])
def test_different_labels_are_one_error_line(scorer, other):
    generations = pd.Series(GENERATIONS[: len(other)], index=other)
    with pytest.raises(UserError) as error:
        scorer.score(pd.Series(GROUNDINGS, index=LABELS), generations)
    assert "\n" not in str(error.value) and "label" in str(error.value)


def test_repeated_labels_in_another_order_are_refused(scorer):
    index = ["a", "a", "b", "c", "c"]
    with pytest.raises(UserError, match="duplicate index label"):
        scorer.score(pd.Series(GROUNDINGS, index=index), pd.Series(GENERATIONS, index=index[::-1]))


def test_control_same_index_and_repeated_labels_pair_as_given(scorer, truth):
    index = [7, 7, 3, 1, 1]
    result = scorer.score(pd.Series(GROUNDINGS, index=index), pd.Series(GENERATIONS, index=index))
    assert list(result.to_frame().index) == index
    assert np.allclose(result.scores, list(truth.values()), rtol=0, atol=1e-9)


def test_control_list_beside_series_pairs_by_position(scorer, truth):
    order = [4, 3, 2, 1, 0]
    generations = pd.Series(GENERATIONS, index=LABELS).iloc[order]
    result = scorer.score([GROUNDINGS[i] for i in order], generations)  # the list is already in the Series' order
    assert_paired_by_label(result, truth, [LABELS[i] for i in order])


def test_control_dataframe_rows_stay_paired(scorer, truth):
    frame = pd.DataFrame({"grounding": GROUNDINGS, "generation": GENERATIONS}, index=LABELS).iloc[[2, 4, 0, 3, 1]]
    assert_paired_by_label(scorer.score(frame), truth, frame.index)


def test_a_nan_label_in_both_indexes_is_one_label(scorer, truth):
    """Python sets hold two NaN objects as two labels: two Series with NaN in both indexes were refused with 'nan is
    in one only'. pandas' set operation pairs them; a label in one index only is still refused (control)."""
    index = [np.nan, 1.0, 2.0, 3.0, 4.0]  # a float index: each NaN read from it is a new object
    order = [4, 3, 2, 1, 0]
    result = scorer.score(pd.Series(GROUNDINGS, index=index),
                          pd.Series(GENERATIONS, index=index).iloc[order])
    assert np.allclose(result.scores, list(truth.values()), rtol=0, atol=1e-9)
    with pytest.raises(UserError, match="5.0 is in one only"):
        scorer.score(pd.Series(GROUNDINGS, index=index), pd.Series(GENERATIONS, index=[*index[1:], 5.0]))
