"""`learned-metrics meta-eval ...` end to end: outputs, input formats, and one-line errors on bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.cli import main
from learned_metrics.meta_eval import STATISTICS, correlations

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def grid_rows(values: np.ndarray, **extra) -> list[dict]:
    return [
        {"doc_id": f"d{d}", "system_id": f"s{s}", "score": float(values[d, s]), **extra}
        for d in range(values.shape[0])
        for s in range(values.shape[1])
    ]


@pytest.fixture
def scores(tmp_path):
    """A 12-document x 5-system human file (two annotators per summary) and a metric file."""
    rng = np.random.default_rng(0)
    quality = np.linspace(-1, 1, 5)[None, :] + rng.normal(0, 0.7, (12, 5))
    first = np.rint(3 + quality + rng.normal(0, 0.5, quality.shape))
    second = np.rint(3 + quality + rng.normal(0, 0.5, quality.shape))
    metric = quality + rng.normal(0, 0.5, quality.shape)
    human = write_jsonl(tmp_path / "human.jsonl", grid_rows(first, annotator=1) + grid_rows(second, annotator=2))
    metric_path = write_jsonl(tmp_path / "metric.jsonl", grid_rows(metric))
    return {"human": human, "metric": metric_path, "H": (first + second) / 2, "P": metric, "dir": tmp_path}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["meta-eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_correlations_prints_a_table_and_writes_the_documented_json(scores, capsys):
    out_json = scores["dir"] / "out" / "corr.json"
    code, out, _ = run(
        capsys, "correlations", "--human", scores["human"], "--metric", scores["metric"],
        "--resamples", "100", "--seed", "3", "--json", out_json,
    )  # fmt: skip
    assert code == 0
    assert "tau_pair" in out and "95% CI" in out and "averaged 120 rows into 60" in out
    data = json.loads(out_json.read_text())
    assert [key for key in data if key != "settings"] == list(STATISTICS)
    expected = correlations(scores["H"], scores["P"], resamples=100, seed=3)
    for name in STATISTICS:
        assert set(data[name]) >= {"value", "ci", "n", "skipped"}
        assert data[name]["value"] == pytest.approx(expected.stats[name].value)
        assert data[name]["ci"] == pytest.approx(list(expected.stats[name].ci))


def test_correlations_options_coefficient_stats_and_resample(scores, capsys):
    out_json = scores["dir"] / "c.json"
    code, _, _ = run(
        capsys, "correlations", "--human", scores["human"], "--metric", scores["metric"], "--coefficient", "spearman",
        "--stats", "tau_sys,tau_intra", "--resample", "systems", "--resamples", "50", "--json", out_json,
    )  # fmt: skip
    assert code == 0
    data = json.loads(out_json.read_text())
    expected = correlations(scores["H"], scores["P"], coefficient="spearman", stats=["tau_sys", "tau_intra"],
                            resamples=50, resample="systems")  # fmt: skip
    assert [key for key in data if key != "settings"] == ["tau_sys", "tau_intra"]
    assert data["tau_intra"]["ci"] == pytest.approx(list(expected.stats["tau_intra"].ci))


def test_summeval_release_format_averages_expert_annotations(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows, metric_rows, coherence = [], [], np.zeros((6, 4))
    for d in range(6):
        for s in range(4):
            experts = [{dim: int(rng.integers(1, 6)) for dim in ("coherence", "consistency", "fluency", "relevance")}
                       for _ in range(3)]  # fmt: skip
            coherence[d, s] = np.mean([e["coherence"] for e in experts])
            rows.append({"id": f"doc{d}", "model_id": f"M{s}", "expert_annotations": experts, "decoded": "text"})
            metric_rows.append({"doc_id": f"doc{d}", "system_id": f"M{s}", "score": float(rng.normal())})
    human = write_jsonl(tmp_path / "model_annotations.aligned.paired.jsonl", rows)
    metric = write_jsonl(tmp_path / "metric.jsonl", metric_rows)
    out_json = tmp_path / "c.json"
    code, _, _ = run(
        capsys, "correlations", "--human", human, "--human-format", "summeval", "--human-field", "coherence",
        "--metric", metric, "--resamples", "0", "--json", out_json,
    )  # fmt: skip
    assert code == 0
    grid = np.array([[r["score"] for r in metric_rows[d * 4 : d * 4 + 4]] for d in range(6)])
    expected = correlations(coherence, grid, resamples=0)
    data = json.loads(out_json.read_text())
    for name in STATISTICS:
        assert data[name]["value"] == pytest.approx(expected.stats[name].value)


def test_csv_input_and_custom_key_fields(scores, capsys):
    path = scores["dir"] / "metric.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["article", "model", "value"])
        for d in range(12):
            for s in range(5):
                writer.writerow([f"d{d}", f"s{s}", scores["P"][d, s]])
    human = write_jsonl(
        scores["dir"] / "h.jsonl",
        [{"article": r["doc_id"], "model": r["system_id"], "score": r["score"]} for r in grid_rows(scores["H"])],
    )
    code, out, _ = run(
        capsys, "correlations", "--human", human, "--metric", path, "--metric-field", "value",
        "--doc-field", "article", "--system-field", "model", "--resamples", "0",
    )  # fmt: skip
    assert code == 0 and "5 systems x 12 documents" in out


def bad_metric_rows(kind: str, values: np.ndarray) -> list[dict]:
    rows = grid_rows(values)
    if kind == "missing key field":
        del rows[7]["system_id"]
    elif kind == "duplicate":
        rows.append(dict(rows[3]))
    elif kind == "nan":
        rows[5]["score"] = float("nan")
    elif kind == "null":
        rows[5]["score"] = None
    elif kind == "mismatched":
        rows[9]["doc_id"] = "d_unknown"
    elif kind == "text score":
        rows[2]["score"] = "high"
    return rows


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing key field", "row 8, field 'system_id': missing field"),
        ("duplicate", "row 61: duplicate key"),
        ("nan", "row 6, field 'score': score is missing or NaN"),
        ("null", "row 6, field 'score': score is missing or NaN"),
        ("mismatched", "has no score in"),
        ("text score", "row 3, field 'score': expected a number"),
    ],
)
def test_bad_metric_files_give_one_line_errors_and_no_json(scores, capsys, kind, message):
    bad = write_jsonl(scores["dir"] / "bad.jsonl", bad_metric_rows(kind, scores["P"]))
    out_json = scores["dir"] / "never.json"
    code, _, err = run(
        capsys, "correlations", "--human", scores["human"], "--metric", bad, "--resamples", "10", "--json", out_json,
    )  # fmt: skip
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("learned-metrics meta-eval: error: ")
    assert message in err and ("bad.jsonl" in err or "human.jsonl" in err)
    assert not out_json.exists() and not list(scores["dir"].glob(".never.json*"))


def test_empty_and_missing_files_are_one_line_errors(scores, capsys):
    empty = scores["dir"] / "empty.jsonl"
    empty.write_text("")
    for path, message in [(empty, "file is empty"), (scores["dir"] / "nope.csv", "file not found")]:
        code, _, err = run(capsys, "correlations", "--human", scores["human"], "--metric", path)
        assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("kind", ["duplicate", "nan", "mismatched"])
def test_on_missing_drop_continues_and_prints_the_count(scores, capsys, kind):
    bad = write_jsonl(scores["dir"] / "bad.jsonl", bad_metric_rows(kind, scores["P"]))
    out_json = scores["dir"] / "dropped.json"
    code, out, _ = run(
        capsys, "correlations", "--human", scores["human"], "--metric", bad, "--on-missing", "drop",
        "--resamples", "20", "--json", out_json,
    )  # fmt: skip
    assert code == 0 and "note:" in out and "dropped" in out
    assert json.loads(out_json.read_text())["tau_sum"]["n"] == 59


def test_compare_reports_both_directions_with_permutation_and_williams_p(scores, capsys):
    rng = np.random.default_rng(5)
    noise = write_jsonl(scores["dir"] / "noise.jsonl", grid_rows(rng.normal(size=(12, 5))))
    out_json = scores["dir"] / "cmp.json"
    code, out, _ = run(
        capsys, "compare", "--human", scores["human"], "--metric", scores["metric"], "--metric", noise,
        "--names", "good,noise", "--permutations", "100", "--swap", "document", "--json", out_json,
    )  # fmt: skip
    assert code == 0 and "p Williams" in out
    data = json.loads(out_json.read_text())
    assert [key for key in data if key != "settings"] == list(STATISTICS)
    forward = next(c for c in data["tau_sum"] if c["metric_a"] == "good")
    assert forward["p_permutation"] < 0.05 and forward["p_williams"] < 0.05
    assert all(c["p_williams"] is None for c in data["acc_pair"])


def test_bias_matrix_command_writes_plot_and_json(scores, capsys):
    plot, out_json = scores["dir"] / "bias.png", scores["dir"] / "bias.json"
    code, out, _ = run(
        capsys, "bias-matrix", "--human", scores["human"], "--metric", scores["metric"],
        "--plot", plot, "--json", out_json,
    )  # fmt: skip
    assert code == 0 and "tau+" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(out_json.read_text())
    means = data["mean_human"]
    assert means == sorted(means, reverse=True) and len(data["tau"]) == 5 and data["tau"][0][0] is None


def test_bad_plot_suffix_fails_before_any_output(scores, capsys):
    out_json = scores["dir"] / "b.json"
    code, _, err = run(
        capsys, "bias-matrix", "--human", scores["human"], "--metric", scores["metric"],
        "--plot", scores["dir"] / "bias.jpg2", "--json", out_json,
    )  # fmt: skip
    assert code == 2 and "unsupported plot type" in err and not out_json.exists()


@pytest.mark.slow
def test_auc_command_on_the_shipped_example(tmp_path, capsys):
    out_json, plot, roc = tmp_path / "auc.json", tmp_path / "auc.png", tmp_path / "roc.png"
    code, out, _ = run(
        capsys, "auc", "--input", EXAMPLES / "faithfulness.jsonl", "--group-field", "corpus",
        "--system-field", "system", "--resamples", "100", "--json", out_json, "--plot", plot, "--roc-plot", roc,
    )  # fmt: skip
    assert code == 0 and "mean (unweighted)" in out
    data = json.loads(out_json.read_text())
    assert set(data["groups"]) == {"frank", "summeval", "qags_x", "paws"}
    group_values = [g["value"] for g in data["groups"].values()]
    assert data["mean"]["value"] == pytest.approx(np.mean(group_values))
    assert "intra_system" in data["groups"]["frank"] and plot.read_bytes()[:4] == b"\x89PNG"
    assert roc.read_bytes()[:4] == b"\x89PNG"


def test_auc_bad_label_is_a_one_line_error(tmp_path, capsys):
    path = write_jsonl(tmp_path / "t.jsonl", [{"score": 0.1, "label": 1}, {"score": 0.3, "label": "maybe"}])
    code, _, err = run(capsys, "auc", "--input", path)
    assert code == 2 and "row 2, field 'label': expected a 0/1 label" in err


@pytest.mark.slow
def test_shuffle_test_command_and_length_gap_plot(tmp_path, capsys):
    out_json, plot = tmp_path / "s.json", tmp_path / "gap.png"
    code, out, _ = run(
        capsys, "shuffle-test", "--input", EXAMPLES / "shuffle_length_gap.jsonl", "--length-gap",
        "--resamples", "100", "--json", out_json, "--plot", plot,
    )  # fmt: skip
    assert code == 0 and "accuracy by length gap" in out
    data = json.loads(out_json.read_text())
    # buckets under --min-bucket-pairs (30) comparisons merged with a neighbour
    assert 0 <= data["accuracy"]["value"] <= 1 and all(b["pairs"] >= 30 for b in data["by_length_gap"])
    assert sum(b["pairs"] for b in data["by_length_gap"]) == data["accuracy"]["n"]
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_shuffle_test_rejects_a_pair_without_original(tmp_path, capsys):
    rows = [{"doc_id": "a", "label": 1, "score": 0.9}, {"doc_id": "a", "label": 0, "score": 0.2},
            {"doc_id": "b", "label": 0, "score": 0.4}]  # fmt: skip
    code, _, err = run(capsys, "shuffle-test", "--input", write_jsonl(tmp_path / "s.jsonl", rows))
    assert code == 2 and "row 3" in err and "has no original" in err


@pytest.mark.parametrize("command", ["correlations", "compare", "bias-matrix", "auc", "shuffle-test"])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta-eval", command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: learned-metrics meta-eval " + command in capsys.readouterr().out
