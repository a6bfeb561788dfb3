"""Rule: a command's --json settings block names every option that shaped the result. The flags a command declares
beside its settings class (auc --system-field, confounders --no-human/--proxy-field/--by-label, shuffle-test
--length-gap, report --auc) were missing from it: an auc JSON with intra-system AUCs did not say which field named
the systems, a confounders JSON run with --no-human said human_field 'label'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_metrics.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
CASES = {
    "auc --system-field": (["auc", "--input", str(EXAMPLES / "faithfulness.jsonl"), "--group-field", "corpus",
                            "--system-field", "system", "--resamples", "0"], {"system_field": "system"}),
    "confounders flags": (["confounders", "--input", str(EXAMPLES / "confounders.jsonl"), "--metric-field",
                           "score_nli", "--no-human", "--proxy-field", "first_error", "--by-label", "--proxies",
                           "chars", "--resamples", "0"],
                          {"no_human": True, "proxy_field": ["first_error"], "by_label": True,
                           "generation_field": "generation"}),  # the field read, not the default's None
    "shuffle-test --length-gap": (["shuffle-test", "--input", str(EXAMPLES / "shuffle.jsonl"), "--length-gap",
                                   "--resamples", "0"], {"length_gap": True}),
    "report --auc": (["report", "--auc", "--metric", str(EXAMPLES / "true_scored" / "nli_aug"), "--metric",
                      str(EXAMPLES / "true_scored" / "nli_base"), "--format", "true", "--on-missing", "drop",
                      "--resamples", "0", "--permutations", "10"], {"auc": True}),
}
CONTROL = (["correlations", "--human", str(EXAMPLES / "human.jsonl"), "--metric", str(EXAMPLES / "metric_good.jsonl"),
            "--resamples", "0", "--coefficient", "pearson"], {"coefficient": "pearson", "resamples": 0})


def _settings(arguments: list[str], tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    assert main(["meta-eval", *arguments, "--json", str(out)]) == 0
    return json.loads(out.read_text())["settings"]


def test_control_settings_fields_recorded(tmp_path):
    arguments, expected = CONTROL
    settings = _settings(arguments, tmp_path)
    assert {key: settings.get(key) for key in expected} == expected
    assert all(record["path"] != "human" for record in settings["inputs"])  # inputs stay under inputs


@pytest.mark.parametrize("case", CASES)
def test_declared_flags_recorded(case, tmp_path):
    arguments, expected = CASES[case]
    settings = _settings(arguments, tmp_path)
    assert {key: settings.get(key, "absent") for key in expected} == expected
    assert "input" not in settings and "metric" not in settings  # input paths are recorded under inputs
