"""One significance default for every command that tests significance: Holm's correction and 1,000 permutations
(docs/meta_eval.md "Significance defaults"), and a caption that says so when no marker could ever appear."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from learned_metrics.meta_eval import options
from learned_metrics.meta_eval.options import resolution_note
from learned_metrics.meta_eval.report import correlation_report

SIGNIFICANCE_COMMANDS = [options.CompareCommand, options.ReportCommand, options.SystemsCommand,
                         options.ConfoundersCommand, options.BenchmarkCommand]


def _defaults(cls) -> dict:
    return {f.name: f.default for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("command", SIGNIFICANCE_COMMANDS, ids=lambda c: c.__name__)
def test_every_significance_command_corrects_with_holm_by_default(command):
    assert _defaults(command)["correction"] == "holm"


@pytest.mark.parametrize("command", [c for c in SIGNIFICANCE_COMMANDS if "permutations" in _defaults(c)],
                         ids=lambda c: c.__name__)
def test_every_permutation_test_runs_1000_permutations_by_default(command):
    assert _defaults(command)["permutations"] == 1000


def test_the_commands_without_significance_have_no_correction():
    """Control: a command that tests nothing has no correction to default."""
    assert "correction" not in _defaults(options.CorrelationsCommand)
    assert "correction" not in _defaults(options.AucCommand)


def test_resolution_note_when_the_correction_makes_every_marker_impossible():
    assert resolution_note(family=60, permutations=1000, correction="holm", alpha=0.05).startswith(
        "no pair can be significant")
    assert "--permutations 12000" in resolution_note(60, 1000, "holm", 0.05)
    assert resolution_note(family=40, permutations=1000, correction="holm", alpha=0.05) == ""  # control: 40 < 50
    assert resolution_note(family=60, permutations=1000, correction="none", alpha=0.05) == ""  # nothing multiplied


def test_a_paper_table_with_too_few_permutations_says_so_in_its_caption():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(20, 6))
    metrics = {f"m{i}": human + rng.normal(0, 0.5 + i, human.shape) for i in range(4)}
    few = correlation_report(human, metrics, stats=["tau_sys"], resamples=10, permutations=9, seed=1)
    enough = correlation_report(human, metrics, stats=["tau_sys"], resamples=10, permutations=999, seed=1)
    assert "no pair can be significant" in few.tables()[0].caption and "--permutations" in few.tables()[0].caption
    assert "no pair can be significant" not in enough.tables()[0].caption
