"""Rule: ``--baseline`` / ``baseline=`` means one thing in every command: compare against these only (repeatable).

Before: ``report --auc`` and ``benchmark`` took ``--baseline`` repeatable (API ``baselines=``), ``systems`` took a
single one (a second ``--baseline`` silently replaced the first) and its help said something else.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.benchmark import benchmark
from learned_metrics.meta_eval.systems import compare_systems, system_scores
from meta_eval.test_confidence_option import meta_eval_commands


def baseline_action(parser: argparse.ArgumentParser) -> argparse.Action | None:
    for action in parser._actions:
        if "--baseline" in action.option_strings:
            return action
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found = baseline_action(child)
                if found is not None:
                    return found
    return None


def test_every_command_declares_baseline_the_same_way():
    actions = {name: baseline_action(parser) for name, parser in meta_eval_commands().items()}
    actions = {name: action for name, action in actions.items() if action is not None}
    assert {"report", "benchmark", "systems"} <= set(actions)
    helps = {action.help for action in actions.values()}
    assert len(helps) == 1
    assert all(isinstance(action, argparse._AppendAction) for action in actions.values())


def _grid():
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(40) for _ in range(4)]
    systems = ["a", "b", "c", "d"] * 40
    scores = rng.normal(0, 1, 160) + np.tile([0.6, 0.3, 0.0, -0.3], 40)
    return system_scores(docs, systems, scores)


def test_systems_tests_every_system_against_each_baseline():
    result = compare_systems(_grid(), baseline=["c", "d"], resamples=50, permutations=50)
    pairs = {(p.a, p.b) for p in result.pairs}
    assert pairs == {(a, b) for b in ("c", "d") for a in "abcd" if a != b}
    assert result.settings["baseline"] == ["c", "d"]
    assert "baselines c, d" in result.caption


def test_one_name_is_a_list_of_one():
    one = compare_systems(_grid(), baseline="d", resamples=50, permutations=50)
    listed = compare_systems(_grid(), baseline=["d"], resamples=50, permutations=50)
    assert one.to_json() == listed.to_json()
    assert {(p.a, p.b) for p in one.pairs} == {("a", "d"), ("b", "d"), ("c", "d")}


@pytest.mark.parametrize("bad, words", [({"c", "d"}, "a list of names"), (["c", "c"], "twice"),
                                         (["c", 3], "a list of names"), (["zz"], "not one of the systems")])
def test_hostile_baselines_are_refused(bad, words):
    with pytest.raises(UserError, match=words):
        compare_systems(_grid(), baseline=bad, resamples=10, permutations=10)


def _benchmark_inputs():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 200)
    scores = {"good": labels + rng.normal(0, 0.7, 200), "weak": labels + rng.normal(0, 2.0, 200),
              "noise": rng.normal(0, 1, 200)}
    return scores, labels, ["x"] * 100 + ["y"] * 100


def test_benchmark_takes_the_cli_spelling_and_the_old_one_warns():
    scores, labels, datasets = _benchmark_inputs()
    settings = {"threshold_protocol": "same-split", "resamples": 20, "permutations": 20}
    new = benchmark(scores, labels, datasets, baseline="noise", **settings)
    with pytest.warns(DeprecationWarning, match="baselines"):
        old = benchmark(scores, labels, datasets, baselines=["noise"], **settings)
    assert new.to_json() == old.to_json()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserError, match="both"):
            benchmark(scores, labels, datasets, baseline="noise", baselines=["noise"], **settings)
