"""Rule: every meta-eval analysis that reports a bootstrap CI takes its level from ``--confidence`` / ``confidence=``.

Before this rule ``auc``, ``shuffle-test``, ``systems`` and ``confounders`` fixed 95% (the flag did not exist there,
and the API of three of them had no keyword) while ``correlations``, ``report`` and ``benchmark`` offered it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.cli import build_parser, main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.confounders import confounders
from learned_metrics.meta_eval.shuffle_test import shuffle_test
from learned_metrics.meta_eval.systems import compare_systems, system_scores

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def meta_eval_commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    meta = top.choices["meta-eval"]
    sub = next(a for a in meta._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def flags(parser: argparse.ArgumentParser) -> set[str]:
    found = {flag for action in parser._actions for flag in action.option_strings}
    for action in parser._actions:  # report auc and other nested commands
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= flags(child)
    return found


@pytest.mark.parametrize("command", sorted(meta_eval_commands()))
def test_every_command_with_resamples_offers_confidence(command):
    offered = flags(meta_eval_commands()[command])
    if "--resamples" in offered:
        assert "--confidence" in offered, f"meta-eval {command} bootstraps CIs but fixes their level"


def test_the_walk_sees_the_commands_that_fixed_95():
    """A control: the walk finds the four commands of the old defect, each with --resamples."""
    commands = meta_eval_commands()
    for name in ("auc", "shuffle-test", "systems", "confounders"):
        assert "--resamples" in flags(commands[name])


def _shuffle_scores():
    rng = np.random.default_rng(0)
    original = rng.normal(0.3, 1.0, 300)
    return original, rng.normal(0.0, 1.0, 300)


def test_shuffle_test_confidence_narrows_the_interval_and_names_its_level():
    original, shuffled = _shuffle_scores()
    wide = shuffle_test(original, shuffled, resamples=400, seed=1)
    narrow = shuffle_test(original, shuffled, resamples=400, seed=1, confidence=0.8)
    assert wide.accuracy.value == narrow.accuracy.value
    assert narrow.accuracy.ci[0] > wide.accuracy.ci[0] and narrow.accuracy.ci[1] < wide.accuracy.ci[1]
    assert "80%" in narrow.tables()[0].caption and "95%" in wide.tables()[0].caption


def test_compare_systems_confidence_reaches_every_interval():
    rng = np.random.default_rng(2)
    docs = [f"d{i}" for i in range(60) for _ in range(3)]
    systems = ["a", "b", "c"] * 60
    scores = rng.normal(0, 1, 180) + np.tile([0.3, 0.0, -0.2], 60)
    data = system_scores(docs, systems, scores)
    wide = compare_systems(data, resamples=300, permutations=50)
    narrow = compare_systems(data, resamples=300, permutations=50, confidence=0.5)
    for w, n in zip(wide.systems, narrow.systems, strict=True):
        assert n.ci[1] - n.ci[0] < w.ci[1] - w.ci[0]
    for w, n in zip(wide.pairs, narrow.pairs, strict=True):
        assert n.ci[1] - n.ci[0] < w.ci[1] - w.ci[0]
    assert narrow.settings["confidence"] == 0.5 and "50% bootstrap CIs" in narrow.caption
    assert "95% bootstrap CIs" in wide.caption


def test_confounders_confidence_narrows_the_interval():
    rows = [json.loads(line) for line in (EXAMPLES / "confounders.jsonl").read_text().splitlines()]
    wide = confounders(rows, metric_fields=("score_nli", "score_overlap"), resamples=200)
    narrow = confounders(rows, metric_fields=("score_nli", "score_overlap"), resamples=200, confidence=0.5)
    key = next(iter(wide.correlations))
    w, n = wide.correlations[key].tau, narrow.correlations[key].tau
    assert n.ci[1] - n.ci[0] < w.ci[1] - w.ci[0]
    assert "50%" in narrow.caption and narrow.settings["confidence"] == 0.5


@pytest.mark.parametrize("bad", [1.0, 0.0, 1.5, float("nan"), True])
def test_a_level_outside_0_1_is_refused_by_every_api(bad):
    original, shuffled = _shuffle_scores()
    with pytest.raises(UserError, match="confidence"):
        shuffle_test(original, shuffled, resamples=10, confidence=bad)
    data = system_scores(["d1", "d1", "d2", "d2"], ["a", "b", "a", "b"], [1.0, 0.0, 1.0, 0.5])
    with pytest.raises(UserError, match="confidence"):
        compare_systems(data, resamples=10, permutations=10, confidence=bad)


@pytest.mark.parametrize("command, inputs", [
    ("shuffle-test", ["--input", str(EXAMPLES / "shuffle.jsonl")]),
    ("auc", ["--input", str(EXAMPLES / "faithfulness.jsonl")]),
])
def test_cli_records_the_level_in_json_and_caption(tmp_path, command, inputs, capsys):
    out, markdown = tmp_path / "out.json", tmp_path / "out.md"
    assert main(["meta-eval", command, *inputs, "--resamples", "100", "--confidence", "0.9", "--json",
                 str(out), "--markdown", str(markdown)]) == 0
    assert json.loads(out.read_text())["settings"]["confidence"] == 0.9
    assert "90%" in markdown.read_text() and "95%" not in markdown.read_text()


@pytest.mark.parametrize("command, inputs", [
    ("shuffle-test", ["--input", str(EXAMPLES / "shuffle.jsonl")]),
    ("correlations", ["--human", str(EXAMPLES / "human.jsonl"), "--metric", str(EXAMPLES / "metric_good.jsonl")]),
    ("systems", ["--input", str(EXAMPLES / "metric_good.jsonl"), "--score-field", "score"]),
])
def test_a_level_between_whole_percents_is_printed_as_asked(tmp_path, command, inputs, capsys):
    """99.9% was printed as 100% (and 1e-9 as 0%), one format per module: one formatter names every level."""
    markdown = tmp_path / "out.md"
    assert main(["meta-eval", command, *inputs, "--resamples", "50", "--confidence", "0.999", "--markdown",
                 str(markdown)]) == 0
    assert "99.9%" in markdown.read_text() and "100%" not in markdown.read_text()
