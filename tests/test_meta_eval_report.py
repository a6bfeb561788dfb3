"""`meta-eval report`: the multi-metric paper table agrees with correlations/compare and renders to every format."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.cli import main
from learned_metrics.meta_eval import correlations
from learned_metrics.meta_eval.report import correlation_report
from learned_metrics.meta_eval.significance import compare

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "meta_eval"
STATS = ["tau_sys", "tau_sum", "tau_pair"]


@pytest.fixture(scope="module")
def grids():
    rng = np.random.default_rng(4)
    quality = np.linspace(-1, 1, 6)[None, :] + rng.normal(0, 0.6, (20, 6))
    human = quality + rng.normal(0, 0.3, quality.shape)
    metrics = {"close_metric": quality + rng.normal(0, 0.2, quality.shape),
               "noisy_metric": quality + rng.normal(0, 1.5, quality.shape),
               "random_metric": rng.normal(0, 1, quality.shape)}
    return human, metrics


def test_cells_are_the_correlations_and_markers_the_significant_comparisons(grids):
    human, metrics = grids
    table = correlation_report(human, metrics, stats=STATS, resamples=100, permutations=200, alpha=0.05, seed=1)
    names = list(metrics)
    for name, values in metrics.items():
        single = correlations(human, values, stats=STATS, resamples=100, seed=1)
        for statistic in STATS:
            cell = table.cell(name, statistic)
            assert cell.value == pytest.approx(single.stats[statistic].value)
            assert cell.ci == pytest.approx(single.stats[statistic].ci)
    tests = compare(human, metrics, stats=STATS, permutations=200, seed=1)
    for statistic, items in tests.comparisons.items():
        for c in items:
            beaten = names.index(c.metric_b) + 1 in table.cell(c.metric_a, statistic).beats
            assert beaten == (c.p_permutation is not None and c.p_permutation < 0.05)
    assert 3 in table.cell("close_metric", "tau_sum").beats  # the good metric beats the random one
    for statistic in STATS:
        best = [n for n in names if table.cell(n, statistic).best]
        values = {n: table.cell(n, statistic).value for n in names}
        assert best == [n for n in names if values[n] == max(values.values())]  # ties are all bold


def test_one_metric_has_no_markers(grids):
    human, metrics = grids
    table = correlation_report(human, {"only": metrics["close_metric"]}, stats=STATS, resamples=20)
    assert all(not table.cell("only", s).beats and table.cell("only", s).best for s in STATS)


def test_report_command_writes_every_format(tmp_path, capsys):
    outputs = {kind: tmp_path / f"table.{suffix}" for kind, suffix in
               (("markdown", "md"), ("latex", "tex"), ("csv", "csv"), ("json", "json"))}
    code = main(["meta-eval", "report", "--human", str(EXAMPLES / "human.jsonl"),
                 "--metric", str(EXAMPLES / "metric_good.jsonl"), "--metric", str(EXAMPLES / "metric_weak.csv"),
                 "--names", "good_%metric,weak&metric", "--resamples", "50", "--permutations", "50",
                 *(arg for kind, path in outputs.items() for arg in (f"--{kind}", str(path)))])
    assert code == 0
    printed = capsys.readouterr().out
    assert "good_%metric" in printed and "significantly better" in printed
    report = json.loads(outputs["json"].read_text())
    assert report["metrics"] == ["good_%metric", "weak&metric"]
    assert report["cells"]["good_%metric"]["tau_sum"]["better_than"] == ["weak&metric"]
    rows = list(csv.DictReader(io.StringIO(outputs["csv"].read_text())))
    assert float(rows[0]["tau_sum"]) == pytest.approx(report["cells"]["good_%metric"]["tau_sum"]["value"], abs=1e-5)
    assert rows[0]["tau_sum_better_than"] == "weak&metric"
    markdown = outputs["markdown"].read_text()
    assert markdown.startswith("| # | metric | tau_sys | tau_sum |") and "<sup>2</sup>" in markdown
    latex = outputs["latex"].read_text()
    for command in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}", r"\end{table}"):
        assert command in latex
    assert r"good\_\%metric" in latex and r"weak\&metric" in latex and r"p $<$ 0.05" in latex
    body = re.sub(r"\\[{}&%_$#]", "", latex)
    assert body.count("{") == body.count("}")  # balanced groups: it compiles as far as braces go
    rows_with_values = [line for line in latex.splitlines() if line[:1].isdigit()]
    assert all(line.replace(r"\&", "").count("&") == 1 + 5 for line in rows_with_values)  # number, name, 5 stats
