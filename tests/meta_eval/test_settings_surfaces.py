"""Rule: each meta-eval command's settings class is its one declaration: the command's flags are exactly the class's
fields (beside its input files and outputs), and a field added to the class is a flag, an API keyword and an entry of
the JSON settings block with no other edit."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from learned_metrics.cli import build_parser, main
from learned_metrics.cli.meta_eval import SUBCOMMANDS
from learned_metrics.meta_eval.correlations import correlations
from learned_metrics.meta_eval.options import CorrelationsCommand, CorrelationSettings, takes
from learned_metrics.settings import setting

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
# what a command declares by hand: its input files, its outputs, switches that choose what is read
INPUTS = {"help", "human", "metric", "input", "metric_full", "system_field", "auc", "no_human", "proxy_field",
          "by_label", "length_gap", "json", "markdown", "latex", "csv", "pairs_csv", "plot", "roc_plot"}


def meta_parsers() -> dict[str, argparse.ArgumentParser]:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    meta = next(a for a in subparsers.choices["meta-eval"]._actions if isinstance(a, argparse._SubParsersAction))
    return meta.choices


@pytest.mark.parametrize("name", sorted(meta_parsers()))
def test_every_flag_of_a_command_is_a_field_of_its_settings_class(name):
    parser = meta_parsers()[name]
    settings = parser.get_default("settings_class")
    declared = {spec.name for spec in fields(settings) if spec.metadata["cli"]}
    dests = {action.dest for action in parser._actions}
    auc_system_field = name == "auc"  # auc's --system-field is an input switch (intra-system AUC), not a key
    assert declared <= dests
    assert dests - declared <= INPUTS, dests - declared - INPUTS
    if not auc_system_field:
        assert "system_field" not in dests or "system_field" in declared


def test_every_command_module_points_at_its_settings_class():
    for module in SUBCOMMANDS:
        command = importlib.import_module(f"learned_metrics.cli.meta_eval.{module}")
        assert command.SETTINGS.__module__ == "learned_metrics.meta_eval.options", module


@dataclass(frozen=True)
class Extended(CorrelationsCommand):
    window: int = setting(3, "documents per window", minimum=1)


def test_a_field_added_to_a_command_is_a_flag_a_keyword_and_a_json_entry(tmp_path, capsys, monkeypatch):
    from learned_metrics.cli.meta_eval import correlations as command

    monkeypatch.setattr(command, "SETTINGS", Extended)
    help_text = meta_parsers()["correlations"].format_help()
    assert "--window N" in help_text and "documents per window (default: 3)" in help_text  # the flag, its help
    out = tmp_path / "out.json"
    assert main(["meta-eval", "correlations", "--human", str(EXAMPLES / "human.jsonl"), "--metric",
                 str(EXAMPLES / "metric_good.jsonl"), "--resamples", "5", "--window", "7", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["settings"]["window"] == 7  # the settings block
    with pytest.raises(SystemExit) as refused:  # its range, on the command line
        main(["meta-eval", "correlations", "--human", str(EXAMPLES / "human.jsonl"), "--metric",
              str(EXAMPLES / "metric_good.jsonl"), "--window", "0"])
    assert refused.value.code == 2
    assert "--window" in capsys.readouterr().err


def test_a_field_added_to_an_analysis_is_an_api_keyword_with_its_default():
    @dataclass(frozen=True)
    class Wider(CorrelationSettings):
        window: int = setting(3, "documents per window", minimum=1)

    seen = {}
    analysis = takes(Wider)(lambda human, metric, *, settings: seen.setdefault("settings", settings))
    parameters = inspect.signature(analysis).parameters
    assert parameters["window"].default == 3 and parameters["resamples"].default == 1000
    assert analysis(None, None, window=5, resamples=20).window == 5
    with pytest.raises(Exception, match="window"):
        analysis(None, None, window=0)


def test_the_api_keeps_its_keywords_and_defaults():
    """Control: correlations(h, m, resamples=200, seed=1) as before; a settings object works too."""
    parameters = inspect.signature(correlations).parameters
    assert {spec.name for spec in fields(CorrelationSettings)} <= set(parameters)
    assert parameters["resamples"].default == 1000 and parameters["coefficient"].default == "kendall"
    import numpy as np

    human = np.arange(12, dtype=float).reshape(4, 3)
    by_keywords = correlations(human, human + 0.5, resamples=20, seed=1, stats="tau_sys")
    by_object = correlations(human, human + 0.5, settings=CorrelationSettings(resamples=20, seed=1, stats=("tau_sys",)))
    assert by_keywords.to_json() == by_object.to_json()
    with pytest.raises(Exception, match="resamples"):
        correlations(human, human, resamples=True)
