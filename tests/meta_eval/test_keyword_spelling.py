"""One keyword spelling across the API, the CLI's field options (issue 23 item 4): ``doc_field``, ``system_field``,
``score_field``; the old ``doc=``/``system=``/``score=`` work one release with a DeprecationWarning."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import learned_metrics.meta_eval as meta_eval
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.systems import compare_systems, system_scores_from_frame
from learned_metrics.validate import renamed_keywords

OLD_SPELLINGS = {"doc", "document", "docs_field", "system", "score", "label", "doc_key", "system_key", "doc_col",
                 "system_col", "doc_column", "system_column", "score_column", "label_column", "id_field"}


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"id": f"d{d}", "model": f"m{s}", "bleurt": float(rng.normal() + s)}
                         for d in range(10) for s in range(3)])


def test_new_and_old_spellings_give_the_same_result_and_the_old_one_warns():
    frame = _frame()
    new = compare_systems(frame, doc_field="id", system_field="model", score_field="bleurt", resamples=20,
                          permutations=20)
    with pytest.warns(DeprecationWarning, match=r"compare_systems\(doc=\.\.\.\) is deprecated .* use doc_field="):
        old = compare_systems(frame, doc="id", system="model", score="bleurt", resamples=20, permutations=20)
    assert new.to_json() == old.to_json()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling is silent
        scores = system_scores_from_frame(frame, doc_field="id", system_field="model", score_field="bleurt")
    with pytest.warns(DeprecationWarning, match="use system_field="):
        old_scores = system_scores_from_frame(frame, doc_field="id", system="model", score_field="bleurt")
    np.testing.assert_array_equal(scores.grid, old_scores.grid)


def test_both_spellings_at_once_is_one_line():
    with pytest.raises(UserError, match=r"got both doc= and doc_field=; pass doc_field= only"):
        compare_systems(_frame(), doc="id", doc_field="id", system_field="model", score_field="bleurt")


def test_the_helper_keeps_the_signature_and_the_warning_points_at_the_caller():
    @renamed_keywords(old="new")
    def function(*, new: int = 0) -> int:
        """doc"""
        return new

    assert function.__doc__ == "doc" and list(inspect.signature(function).parameters) == ["new"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert function(old=3) == 3
    assert caught[0].category is DeprecationWarning and caught[0].filename == __file__


def test_no_public_function_uses_another_spelling_of_a_cli_field():
    for name in meta_eval.__all__:
        value = getattr(meta_eval, name)
        if not callable(value) or isinstance(value, type):
            continue
        parameters = set(inspect.signature(value).parameters)
        assert not parameters & OLD_SPELLINGS, f"{name} takes {parameters & OLD_SPELLINGS}"
        assert not any(p.endswith("_col") or p.endswith("_column") for p in parameters), name
