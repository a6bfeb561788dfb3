"""Class 8: the Python API fails like the CLI.

Rule: a public API function refuses bad input with the project's own error, ``UserError`` (a ``ValueError``
subclass, so ``except ValueError`` keeps working), in one line that names the argument and the position, before
any work. Enforced where every meta-eval input enters: ``meta_eval.frames.input_grids`` (matrices and long
DataFrames: numbers checked by ``validate.numbers``, metrics as a mapping, at least one cell scored by both) and
``validate.numbers`` for the 1-D scores of ``auc_by_group`` and ``shuffle_test``; options through
``meta_eval.options.check``.

Found before: ``'n/a'`` scores, an empty DataFrame and a list where a mapping is expected raised bare
``ValueError``s from numpy and ``dict()`` deep inside ("could not convert string to float", "cannot reshape array
of size 0", "dictionary update sequence element #0"), and ``bias_matrix`` of two empty inputs, like
``correlations`` of inputs without a common cell, returned an empty result instead of an error. A 400-digit integer
score in a JSON row was an ``OverflowError`` traceback in ``report``, ``systems`` and ``system-level``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import auc_by_group, bias_matrix, compare, correlations, shuffle_test
from learned_metrics.meta_eval.report import correlation_report
from learned_metrics.meta_eval.system_level import realistic_system_level

HUMAN = np.random.default_rng(0).normal(size=(6, 4))
METRIC = HUMAN + np.random.default_rng(1).normal(0, 0.5, size=(6, 4))
EMPTY = pd.DataFrame(columns=["doc_id", "system_id", "score"])
TEXT = np.array([["n/a"] * 4] * 6, dtype=object)

CASES = {
    "text scores": (lambda: correlations(HUMAN, TEXT), "field 'metric[1]': expected a number, got 'n/a'"),
    "text in a nested list": (lambda: correlations(HUMAN, [[0.1, "x", 0.2, 0.3]] * 6), "metric[2]"),
    "infinite score": (lambda: correlations(HUMAN, np.full((6, 4), np.inf)), "infinite"),
    "empty DataFrames": (lambda: correlations(EMPTY, EMPTY), "no (document, system) cell has both"),
    "text in a long DataFrame": (
        lambda: correlations(pd.DataFrame({"doc_id": ["d"], "system_id": ["s"], "score": [1.0]}),
                             pd.DataFrame({"doc_id": ["d"], "system_id": ["s"], "score": ["high"]})),
        "metric, row 1, field 'score': expected a number, got 'high'"),  # named as a file's rows are
    "a list of metrics for compare": (lambda: compare(HUMAN, [METRIC, METRIC]), "metrics must be a mapping"),
    "a list of metrics for report": (lambda: correlation_report(HUMAN, [METRIC]), "metrics must be a mapping"),
    "fractional resamples": (lambda: correlations(HUMAN, METRIC, resamples=2.5),
                             "--resamples must be an integer >= 0, got 2.5"),
    "unknown coefficient": (lambda: correlations(HUMAN, METRIC, coefficient="cosine"), "unknown coefficient"),
    "empty bias matrix": (lambda: bias_matrix(np.empty((0, 0)), np.empty((0, 0))),
                          "no (document, system) cell has both"),
    "disjoint inputs": (lambda: correlations(np.where(np.eye(4)[:, :4].astype(bool), 1.0, np.nan),
                                             np.where(np.eye(4)[:, :4].astype(bool), np.nan, 1.0)),
                        "no (document, system) cell has both"),
    "text AUC scores": (lambda: auc_by_group(["n/a", 0.2], [1, 0]), "field 'scores[1]'"),
    "text shuffle scores": (lambda: shuffle_test(["a"], [0.1]), "field 'original[1]'"),
    "system-level one row": (lambda: realistic_system_level([1, 2, 3], [1, 2, 3]), "expected a 2-D"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_api_input_is_one_user_error_that_is_a_value_error(case):
    call, fragment = CASES[case]
    with pytest.raises(UserError) as caught:
        call()
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert fragment in message and "\n" not in message


def test_controls_good_input_of_the_same_shapes_works():
    frame = pd.DataFrame({"doc_id": [d for d in "abcd" for _ in range(3)], "system_id": list("xyz") * 4,
                          "score": np.arange(12.0) % 5})
    assert correlations(frame, frame.assign(score=frame.score + 0.5), resamples=0).stats["tau_sum"].value == 1.0
    assert correlations(HUMAN, METRIC.astype(object), resamples=0).stats["tau_sys"].value is not None
    assert compare(HUMAN, {"a": METRIC, "b": HUMAN}, permutations=10, resamples=0, workers=1).comparisons
    assert auc_by_group(["0.9", 0.1], [1, 0], resamples=0).mean.value == 1.0  # numeric text is a number
    assert bias_matrix(HUMAN, METRIC).tau.shape == (4, 4)


BIG = int("9" * 400)


@pytest.mark.parametrize("command", ["report", "systems", "system-level", "correlations"])
def test_a_400_digit_score_is_one_line_not_an_overflow(tmp_path, capsys, command):
    rows = [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": float(d + s)} for d in range(4) for s in range(4)]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps(r) + "\n" for r in rows))
    metric = tmp_path / "metric.jsonl"
    metric.write_text("".join(json.dumps({**r, "score": BIG if i == 2 else r["score"]}) + "\n"
                              for i, r in enumerate(rows)))
    args = {"systems": ["--input", str(metric)]}.get(command, ["--human", str(human), "--metric", str(metric)])
    code = main(["meta-eval", command, *args, "--resamples", "0"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "row 3" in err and "number out of range (400 digits)" in err
