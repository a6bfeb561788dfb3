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
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.correlations import correlations
from learned_metrics.meta_eval.options import CorrelationsCommand, CorrelationSettings, OutputStyle
from learned_metrics.settings import setting, takes

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
    style = {spec.name for spec in fields(OutputStyle)}  # the shared output policy: every command takes it
    assert declared <= dests and style <= dests
    assert dests - declared - style <= INPUTS, dests - declared - style - INPUTS
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


# Every API function that takes an analysis's settings: (module, function, its class, its own data arguments).
API = [
    ("correlations", "correlations", "CorrelationSettings", {"human", "metric", "axes"}),
    ("significance", "compare", "ComparisonSettings", {"human", "metrics", "axes"}),
    ("systems", "compare_systems", "SystemsSettings", {"scores", "baseline", "doc_field", "system_field",
                                                        "score_field"}),
    ("report", "correlation_report", "ReportSettings", {"human", "metrics", "axes"}),
    ("report", "auc_report", "AucReportSettings", {"scored", "baseline"}),
    ("auc", "auc_by_group", "AucSettings", {"scores", "labels", "groups", "systems"}),
    ("shuffle_test", "shuffle_test", "ShuffleTestSettings", {"original", "shuffled", "pair_index", "length_gap"}),
    ("system_level", "realistic_system_level", "SystemLevelSettings", {"human", "metric", "metric_full", "bands",
                                                                       "axes"}),
    ("confounders", "analyse", "ConfounderSettings", {"data"}),
    ("confounders", "confounders", "ConfounderSettings", {"data", "metric_fields", "names", "human_field",
                                                          "generation_field", "grounding_field", "proxy_fields",
                                                          "proxies", "by_label", "label_field", "splitter",
                                                          "first_person"}),
    ("benchmark", "benchmark", "BenchmarkSettings", {"scores", "labels", "datasets", "splits", "keys",
                                                     "benchmark_name"}),
]


def api_function(module: str, name: str, cls: str):
    from learned_metrics.meta_eval import options

    return getattr(importlib.import_module(f"learned_metrics.meta_eval.{module}"), name), getattr(options, cls)


@pytest.mark.parametrize(("module", "name", "cls", "own"), API, ids=[entry[1] for entry in API])
def test_an_api_function_s_keywords_are_its_class_s_fields(module, name, cls, own):
    function, settings = api_function(module, name, cls)
    parameters = inspect.signature(function).parameters
    declared = {spec.name: spec.default for spec in fields(settings)}
    assert set(parameters) == set(declared) | own | {"settings"}
    assert {key: parameters[key].default for key in declared} == declared  # the defaults are the fields'
    assert parameters["settings"].default is None


@pytest.mark.parametrize(("module", "name", "cls", "own"), API, ids=[entry[1] for entry in API])
def test_a_field_added_to_an_analysis_class_is_a_keyword_of_its_function(module, name, cls, own):
    function, settings = api_function(module, name, cls)
    wider = dataclass(frozen=True)(type("Wider", (settings,), {
        "__annotations__": {"window": "int"}, "window": setting(3, "documents per window", minimum=1)}))
    extended = takes(wider)(inspect.unwrap(function))  # the same function, declared with one field more
    parameters = inspect.signature(extended).parameters
    assert parameters["window"].default == 3 and parameters["window"].kind is inspect.Parameter.KEYWORD_ONLY
    assert set(parameters) == set(inspect.signature(function).parameters) | {"window"}
    with pytest.raises(UserError, match="window"):  # parsed by its declaration before any data is read
        extended(*[None] * len([p for p in parameters.values() if p.default is inspect.Parameter.empty]), window=0)


def test_a_field_added_to_the_report_class_reaches_the_table_settings():
    """The value of a new field reaches the analysis: the report table's settings block carries it."""
    import numpy as np

    function, settings = api_function("report", "correlation_report", "ReportSettings")
    wider = dataclass(frozen=True)(type("Wider", (settings,), {
        "__annotations__": {"window": "int"}, "window": setting(3, "documents per window", minimum=1)}))
    extended = takes(wider)(inspect.unwrap(function))
    human = np.arange(12, dtype=float).reshape(4, 3)
    table = extended(human, {"m": human + 0.5}, resamples=5, window=5, workers=1)
    assert table.settings["window"] == 5
    assert function(human, {"m": human + 0.5}, resamples=5, workers=1).settings.keys() == table.settings.keys() - {
        "window"}  # control: the declared class as it is
