"""Scoring from a notebook: lists, numpy arrays, pandas Series and a DataFrame alike; results keep the caller's
index and come back as a DataFrame (issue 23: a notebook API that feels native)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from learned_metrics.errors import UserError
from learned_metrics.scoring import load_scorer

GROUNDINGS = ["Anna bought six apples at the market.", "Ben slept all day.", "The cat sat on the mat."]
GENERATIONS = ["Anna bought apples.", "Ben ran a marathon.", "A cat sat."]


@pytest.fixture(scope="module")
def scorer(nli_export):
    return load_scorer(nli_export)


def test_lists_arrays_series_and_a_dataframe_give_the_same_scores(scorer):
    expected = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS).scores
    index = pd.Index(["x", "y", "z"], name="item")
    frame = pd.DataFrame({"grounding": GROUNDINGS, "generation": GENERATIONS, "other": [1, 2, 3]}, index=index)
    for result in (scorer.score(groundings=np.array(GROUNDINGS), generations=np.array(GENERATIONS)),
                   scorer.score(groundings=frame["grounding"], generations=frame["generation"]),
                   scorer.score(frame)):
        np.testing.assert_allclose(result.scores, expected, atol=1e-6)
    table = scorer.score(frame).to_frame()
    assert list(table.index) == ["x", "y", "z"] and table.index.name == "item"
    assert table.columns[0] == "score" and table["score"].tolist() == pytest.approx(list(expected), abs=1e-6)
    assert scorer.score(groundings=GROUNDINGS, generations=GENERATIONS).to_frame().index.tolist() == [0, 1, 2]


def test_a_dataframe_without_the_columns_is_one_line(scorer):
    with pytest.raises(UserError, match="needs 'grounding' and 'generation' columns; it has"):
        scorer.score(pd.DataFrame({"premise": GROUNDINGS, "hypothesis": GENERATIONS}))
    with pytest.raises(UserError, match="must be a list of strings"):
        scorer.score(groundings="one text", generations="another")


def test_positional_call_as_other_faithfulness_scorers_take_it(scorer, coherence_export):
    """``score(groundings, generations)`` as MiniCheck's score(docs, claims) and AlignScore's score(contexts,
    claims) are called; ``score(texts)`` for a coherence model; mixing or miscounting is one line."""
    expected = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS).scores
    np.testing.assert_array_equal(scorer.score(GROUNDINGS, GENERATIONS).scores, expected)
    index = pd.Index([7, 8, 9])
    series = scorer.score(pd.Series(GROUNDINGS, index=index), pd.Series(GENERATIONS, index=index))
    assert series.to_frame().index.tolist() == [7, 8, 9]
    coherence = load_scorer(coherence_export)
    np.testing.assert_array_equal(coherence.score(GROUNDINGS).scores, coherence.score(texts=GROUNDINGS).scores)
    for call, message in [(lambda: scorer.score(GROUNDINGS), r"takes score\(groundings, generations\)"),
                          (lambda: scorer.score(GROUNDINGS, GENERATIONS, GENERATIONS), "got 3 positional"),
                          (lambda: scorer.score(GROUNDINGS, generations=GENERATIONS), "not both"),
                          (lambda: coherence.score(GROUNDINGS, GENERATIONS), r"takes score\(texts\)")]:
        with pytest.raises(UserError, match=message):
            call()
