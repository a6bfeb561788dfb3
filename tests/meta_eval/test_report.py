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

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
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
            p = c.p("permutation")  # both Holm-corrected by default, over the same family
            assert beaten == (p is not None and p < 0.05)
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
    for command in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}", r"\end{table*}"):  # wide
        assert command in latex
    assert r"good\_\%metric" in latex and r"weak\&metric" in latex and r"p $<$ 0.05" in latex
    body = re.sub(r"\\[{}&%_$#]", "", latex)
    assert body.count("{") == body.count("}")  # balanced groups: it compiles as far as braces go
    rows_with_values = [line for line in latex.splitlines() if line[:1].isdigit()]
    assert all(line.replace(r"\&", "").count("&") == 1 + 5 for line in rows_with_values)  # number, name, 5 stats


# -- AUC mode ------------------------------------------------------------------------------------


def write_corpora(folder: Path, scores: dict[str, np.ndarray], labels: dict[str, np.ndarray]) -> Path:
    folder.mkdir()
    for corpus, values in scores.items():
        (folder / f"{corpus}.jsonl").write_text("".join(
            json.dumps({"id": i, "label": int(y), "score": float(s)}) + "\n"
            for i, (s, y) in enumerate(zip(values, labels[corpus], strict=True))))
    return folder


@pytest.fixture
def scored_folders(tmp_path):
    rng = np.random.default_rng(2)
    labels = {c: rng.integers(0, 2, n) for c, n in (("frank", 120), ("summeval", 90), ("qags", 60))}
    strong = {c: y + rng.normal(0, 0.6, len(y)) for c, y in labels.items()}
    weak = {c: y + rng.normal(0, 2.5, len(y)) for c, y in labels.items()}
    return (write_corpora(tmp_path / "strong", strong, labels), write_corpora(tmp_path / "weak", weak, labels),
            strong, weak, labels)


def test_auc_table_from_folders_of_scored_corpora(scored_folders, tmp_path, capsys):
    from sklearn.metrics import roc_auc_score

    strong_dir, weak_dir, strong, weak, labels = scored_folders
    out = tmp_path / "auc.json"
    assert main(["meta-eval", "report", "--auc", "--metric", str(strong_dir), "--metric", str(weak_dir),
                 "--baseline", "weak", "--resamples", "100", "--permutations", "200", "--json", str(out),
                 "--latex", str(tmp_path / "auc.tex")]) == 0
    report = json.loads(out.read_text())
    assert report["columns"] == ["frank", "qags", "summeval", "mean"]  # files in name order, then the mean
    for name, scores in (("strong", strong), ("weak", weak)):
        aucs = {c: roc_auc_score(labels[c], scores[c]) for c in labels}
        for corpus, auc in aucs.items():
            assert report["cells"][name][corpus]["value"] == pytest.approx(auc, abs=1e-12)
        assert report["cells"][name]["mean"]["value"] == pytest.approx(np.mean(list(aucs.values())), abs=1e-12)
    assert report["cells"]["strong"]["mean"]["better_than"] == ["weak"] and report["cells"]["strong"]["mean"]["best"]
    assert report["cells"]["weak"]["mean"]["better_than"] == []
    (test,) = report["tests"]
    assert test["metric"] == "strong" and test["baseline"] == "weak"
    mean = test["columns"]["mean"]
    assert mean["p_randomization"] < 0.01 and mean["delta_ci"][0] <= mean["delta"] <= mean["delta_ci"][1]
    assert "ROC AUC per corpus" in capsys.readouterr().out


def test_paired_auc_test_of_a_metric_against_itself_finds_nothing():
    from learned_metrics.meta_eval.report import paired_auc_test

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    scores = y + rng.normal(0, 1, 80)
    test = paired_auc_test(scores, scores.copy(), y, ["c"] * 80, permutations=99, resamples=50)
    assert test.delta["c"] == 0 and test.p["c"] == 1.0 and test.ci["c"] == (0.0, 0.0)


def test_auc_mode_refuses_metrics_scored_on_other_rows(scored_folders, tmp_path, capsys):
    strong_dir, *_ = scored_folders
    other = tmp_path / "other"
    other.mkdir()
    (other / "frank.jsonl").write_text('{"label": 1, "score": 0.3}\n{"label": 0, "score": 0.1}\n')
    assert main(["meta-eval", "report", "--auc", "--metric", str(strong_dir), "--metric", str(other)]) == 2
    err = capsys.readouterr().err
    assert "score the same files with every metric" in err and err.count("\n") == 1


def test_table_numbers_are_fixed_width_and_never_negative_zero():
    from learned_metrics.render.formats import format_ci, format_number, format_p

    assert format_number(-0.004, 2) == "0.00" and format_number(-0.0049, 3) == "-0.005"
    assert format_number(float("nan")) == format_number(None) == "—"
    assert format_ci((-0.2249, -0.0001), 2) == "[-0.22, 0.00]" and format_ci(None) == "—"
    assert format_p(0.00001) == "1.0e-05" and format_p(0.5) == "0.5000"
