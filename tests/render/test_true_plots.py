"""TRUE benchmark files as AUC inputs, the figures (formats, shared ranges, CI bars), and to_frame() of the reports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import auc_by_group, bias_matrix, shuffle_test
from learned_metrics.meta_eval.data import read_scored_corpora, true_corpus
from learned_metrics.meta_eval.resampling import bootstrap_indices
from learned_metrics.meta_eval.shuffle_test import BUCKET_CENTRES, gap_buckets
from learned_metrics.render.figures import (
    length_gap_figure,
    plot_bias_matrix,
    plot_length_gap,
    plot_roc_curves,
    plot_score_histograms,
    score_histogram_figure,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
TRUE_FILES = {"frank_valid_download.csv": 40, "summeval_download.csv": 30, "qags_c.csv": 25, "mnbm.csv": 20}
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}


def results(path) -> dict:
    """A command's JSON without its settings block (which names the command line and input files)."""
    data = json.loads(path.read_text())
    data.pop("settings", None)
    return data


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def true_rows(rng: np.random.Generator, n: int, positive_rate: float) -> list[dict]:
    """TRUE columns plus a score, as `score faithfulness` leaves them; scores rounded so that ties occur."""
    labels = (rng.random(n) < positive_rate).astype(int)
    labels[:2] = [0, 1]  # both classes in every corpus
    scores = np.round(labels * 0.6 + rng.normal(0, 0.5, n), 1)
    return [{"grounding": f"source text {i}", "generated_text": f"claim {i}", "label": int(y), "score": float(s)}
            for i, (y, s) in enumerate(zip(labels, scores, strict=True))]


@pytest.fixture
def true_folder(tmp_path):
    """A folder of four TRUE files (published names) and the same rows as one file with a corpus column."""
    rng = np.random.default_rng(7)
    folder = tmp_path / "scored"
    folder.mkdir()
    combined = []
    for name, size in sorted(TRUE_FILES.items()):  # the reader takes the files in name order
        rows = true_rows(rng, size, rng.uniform(0.2, 0.8))
        write_csv(folder / name, rows)
        combined += [{"corpus": true_corpus(name), **row} for row in rows]
    (folder / "notes.txt").write_text("not a corpus")
    return {"folder": folder, "rows": combined, "combined": write_csv(tmp_path / "combined.csv", combined)}


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["meta-eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


# --- the TRUE reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "corpus"), [
    ("frank_valid_download.csv", "frank"), ("summeval_download.csv", "summeval"), ("qags_c.csv", "qags_c"),
    ("mnbm.csv", "mnbm"), ("begin_dev_download.csv", "begin"), ("q2_gold.csv", "q2_gold"),
    ("dialfact_valid_download.csv", "dialfact"), ("paws_download.csv", "paws"), ("fever_dev_download.csv", "fever"),
    ("vitc_dev_download.csv", "vitc"), ("x_test.jsonl", "x"), ("_dev.csv", "_dev"), ("_download.csv", "_download"),
    ("dev_valid.csv", "dev"),
])
def test_true_corpus_names_follow_the_documented_rule(name, corpus):
    assert true_corpus(name) == corpus


def test_true_folder_is_read_with_corpora_from_the_file_names(true_folder):
    scored = read_scored_corpora([true_folder["folder"]], ["m"], fmt="true")["m"]
    rows = true_folder["rows"]
    assert scored.groups == [row["corpus"] for row in rows]
    assert list(dict.fromkeys(scored.groups)) == ["frank", "mnbm", "qags_c", "summeval"]
    np.testing.assert_array_equal(scored.labels, [row["label"] for row in rows])
    np.testing.assert_array_equal(scored.scores, [row["score"] for row in rows])
    single = read_scored_corpora([true_folder["folder"] / "qags_c.csv"], fmt="true")
    assert set(next(iter(single.values())).groups) == {"qags_c"}  # a single TRUE file names its corpus too


def test_true_file_without_a_required_column_is_a_one_line_error(tmp_path):
    folder = tmp_path / "scored"
    folder.mkdir()
    write_csv(folder / "frank_valid_download.csv", true_rows(np.random.default_rng(0), 5, 0.5))
    rows = true_rows(np.random.default_rng(1), 5, 0.5)
    unscored = [{k: v for k, v in row.items() if k != "generated_text"} for row in rows]
    write_csv(folder / "paws_download.csv", unscored)
    with pytest.raises(UserError) as error:
        read_scored_corpora([folder], fmt="true")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{folder / 'paws_download.csv'}, field 'generated_text': missing column")
    with pytest.raises(UserError, match="field 'nli': missing column"):
        read_scored_corpora([folder / "frank_valid_download.csv"], score_fields=["nli"], fmt="true")


def test_true_label_other_than_0_or_1_names_file_row_and_field(tmp_path):
    rows = true_rows(np.random.default_rng(0), 6, 0.5)
    rows[3]["label"] = 2
    path = write_csv(tmp_path / "mnbm.csv", rows)
    with pytest.raises(UserError, match=r"mnbm\.csv, row 4, field 'label': expected a 0/1 label, got '2'"):
        read_scored_corpora([path], fmt="true")


def test_empty_folder_two_files_of_one_corpus_and_group_field_are_errors(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.md").write_text("no corpora here")
    with pytest.raises(UserError, match="folder holds no .jsonl, .csv or .parquet files"):
        read_scored_corpora([empty], fmt="true")
    both = tmp_path / "both"
    both.mkdir()
    for name in ("frank_valid_download.csv", "frank_test_download.csv"):
        write_csv(both / name, true_rows(np.random.default_rng(0), 4, 0.5))
    with pytest.raises(UserError, match="both hold corpus 'frank'"):
        read_scored_corpora([both], fmt="true")
    with pytest.raises(UserError, match="--group-field is for --format rows"):
        read_scored_corpora([both], fmt="true", group_field="corpus")
    header_only = tmp_path / "header"
    header_only.mkdir()
    (header_only / "paws_download.csv").write_text("grounding,generated_text,label,score\n")
    with pytest.raises(UserError, match="file is empty"):
        read_scored_corpora([header_only], fmt="true")


# --- the commands --------------------------------------------------------------------------------


def test_auc_format_true_equals_the_rows_format_and_sklearn(true_folder, tmp_path, capsys):
    true_json, rows_json = tmp_path / "true.json", tmp_path / "rows.json"
    code, out, _ = run(capsys, "auc", "--format", "true", "--input", true_folder["folder"], "--resamples", "200",
                       "--json", true_json)
    assert code == 0 and "frank" in out and "mean (unweighted)" in out
    code, _, _ = run(capsys, "auc", "--input", true_folder["combined"], "--group-field", "corpus", "--resamples",
                     "200", "--json", rows_json)
    assert code == 0
    true_report, rows_report = results(true_json), results(rows_json)  # settings differ: the inputs and commands
    assert true_report == rows_report  # same rows, same order, same seed: same AUCs and CIs
    rows = true_folder["rows"]
    for corpus, result in true_report["groups"].items():
        members = [row for row in rows if row["corpus"] == corpus]
        expected = roc_auc_score([r["label"] for r in members], [r["score"] for r in members])
        assert result["value"] == pytest.approx(expected, abs=1e-12)
        assert result["n"] == len(members)


def test_report_auc_format_true_equals_the_rows_format(true_folder, tmp_path, capsys):
    weak = tmp_path / "weak"
    weak.mkdir()
    rng = np.random.default_rng(3)
    weak_rows = []
    for file in sorted(true_folder["folder"].glob("*.csv")):
        with file.open(encoding="utf-8", newline="") as handle:
            rows = [{**row, "score": round(float(row["score"]) + rng.normal(0, 0.8), 1)}
                    for row in csv.DictReader(handle)]
        write_csv(weak / file.name, rows)
        weak_rows += [{"corpus": true_corpus(file.name), **row} for row in rows]
    weak_combined = write_csv(tmp_path / "weak_combined.csv", weak_rows)
    outputs = {fmt: tmp_path / f"{fmt}.json" for fmt in ("true", "rows")}
    code, out, _ = run(capsys, "report", "--auc", "--format", "true", "--metric", true_folder["folder"], "--metric",
                       weak, "--names", "good,weak", "--resamples", "100", "--permutations", "100",
                       "--json", outputs["true"])
    assert code == 0 and "summeval" in out
    code, _, _ = run(capsys, "report", "--auc", "--group-field", "corpus", "--metric", true_folder["combined"],
                     "--metric", weak_combined, "--names", "good,weak", "--resamples", "100", "--permutations", "100",
                     "--json", outputs["rows"])
    assert code == 0
    true_table, rows_table = (results(outputs[fmt]) for fmt in ("true", "rows"))
    assert true_table == rows_table
    assert true_table["columns"] == ["frank", "mnbm", "qags_c", "summeval", "mean"]


def test_format_true_errors_through_the_cli(tmp_path, capsys):
    path = write_csv(tmp_path / "mnbm.csv", [{"grounding": "g", "claim": "c", "label": 1, "score": 0.5}])
    out_json = tmp_path / "auc.json"
    code, _, err = run(capsys, "auc", "--format", "true", "--input", path, "--json", out_json)
    assert code == 2
    assert err.strip().count("\n") == 0 and "field 'generated_text': missing column" in err
    assert not out_json.exists()
    code, _, err = run(capsys, "report", "--format", "true", "--metric", path, "--metric", path)
    assert code == 2 and "add --auc" in err


def test_confounders_format_true_reads_generated_text(tmp_path, capsys):
    path = EXAMPLES / "true_scored" / "overlap" / "paws_download.csv"
    outputs = [tmp_path / "true.json", tmp_path / "explicit.json"]
    code, _, _ = run(capsys, "confounders", "--format", "true", "--input", path, "--resamples", "20",
                     "--json", outputs[0])
    assert code == 0
    code, _, _ = run(capsys, "confounders", "--generation-field", "generated_text", "--input", path,
                     "--resamples", "20", "--json", outputs[1])
    assert code == 0
    assert results(outputs[0]) == results(outputs[1])
    code, _, err = run(capsys, "confounders", "--input", path, "--resamples", "20")
    assert code == 2 and "field 'generation': missing field" in err  # the rows default is unchanged


def test_shipped_true_example_reads_as_documented():
    folder = EXAMPLES / "true_scored"
    metrics = sorted(p.name for p in folder.iterdir())
    scored = read_scored_corpora([folder / m for m in metrics], fmt="true", on_missing="drop")
    assert metrics == ["nli_aug", "nli_base", "overlap"]
    for rows in scored.values():
        assert list(dict.fromkeys(rows.groups)) == ["frank", "paws", "summeval"]
        np.testing.assert_array_equal(rows.labels, scored["nli_aug"].labels)


# --- figures ---------------------------------------------------------------------------------------


def assert_plot_file(path: Path) -> None:
    data = path.read_bytes()
    if path.suffix == ".svg":
        assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000] and data.rstrip().endswith(b"</svg>")
    else:
        assert data.startswith(MAGIC[path.suffix])
    if path.suffix == ".pdf":
        assert data.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
@pytest.mark.slow
def test_every_plot_writes_png_pdf_and_svg(tmp_path, suffix):
    rng = np.random.default_rng(2)
    human = rng.integers(1, 6, (12, 4)).astype(float)
    plot_bias_matrix(bias_matrix(human, human + rng.normal(0, 1, human.shape), list("ABCD")), tmp_path / f"b{suffix}")
    labels = rng.integers(0, 2, 60)
    scores = np.round(rng.normal(size=60) + labels, 1)
    groups = ["x"] * 30 + ["y"] * 30
    plot_score_histograms(scores, labels, groups, tmp_path / f"h{suffix}", {"x": 0.8})
    plot_roc_curves(scores, labels, groups, tmp_path / f"r{suffix}", {"x": 0.8})
    report = shuffle_test(rng.normal(size=50) + 1, rng.normal(size=50), length_gap=rng.integers(-250, 250, 50),
                          resamples=50)
    plot_length_gap(report, tmp_path / f"g{suffix}")
    for name in "bhrg":
        assert_plot_file(tmp_path / f"{name}{suffix}")
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_unsupported_plot_type_fails_before_drawing(tmp_path):
    report = shuffle_test(np.ones(3), np.zeros(3), length_gap=[0, 5, 30], resamples=0)
    with pytest.raises(UserError, match="unsupported plot type '.jpg'"):
        plot_length_gap(report, tmp_path / "gap.jpg")
    with pytest.raises(UserError, match="unsupported plot type"):
        plot_score_histograms(np.ones(2), np.array([0, 1]), ["a", "a"], tmp_path / "hist.eps")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("n_groups", [1, 2, 3, 4, 5, 7, 10])
@pytest.mark.slow
def test_histograms_share_one_x_range_show_densities_and_have_no_empty_panel(n_groups):
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(n_groups)
    groups = [f"g{i}" for i in rng.integers(0, n_groups, 400)]
    groups[:n_groups] = [f"g{i}" for i in range(n_groups)]  # every group present
    labels = (rng.random(400) < 0.8).astype(int)  # unbalanced, as TRUE corpora are
    scores = np.round(rng.normal(0, 1, 400) * (1 + np.arange(400) % 3) + labels, 1)
    fig = score_histogram_figure(scores, labels, groups)
    try:
        assert len(fig.axes) == n_groups
        assert {ax.get_xlim() for ax in fig.axes} == {(scores.min(), scores.max())}
        for ax in fig.axes:
            name, counts = ax.get_title().split("\n")  # class counts in the title (one legend for the figure)
            members = np.array(groups) == name
            expected = [f"{w} n={int((labels[members] == y).sum())}"
                        for y, w in ((1, "faithful"), (0, "unfaithful")) if (labels[members] == y).any()]
            assert counts == " · ".join(expected)
            for container in ax.containers:  # each class's bars integrate to 1: densities, not counts
                area = sum(bar.get_height() * bar.get_width() for bar in container)
                assert area == pytest.approx(1.0)
    finally:
        plt.close(fig)


# --- length-gap CIs --------------------------------------------------------------------------------


def plain_bucket_bootstrap(original, shuffled, pair_index, gaps, resamples, seed):
    """Per bucket: redraw pair ids (the draws bootstrap_indices gives), then count wins in a plain loop."""
    n_pairs = int(pair_index.max()) + 1
    buckets = gap_buckets(gaps)
    members = {p: [i for i in range(len(original)) if pair_index[i] == p] for p in range(n_pairs)}
    samples = {int(c): [] for c in BUCKET_CENTRES}
    for doc_idx, _ in bootstrap_indices(n_pairs, 1, resamples, "documents", seed):
        for draw in doc_idx:
            wins = {c: 0.0 for c in samples}
            count = {c: 0 for c in samples}
            for p in draw:
                for i in members[int(p)]:
                    c = int(buckets[i])
                    count[c] += 1
                    wins[c] += 1.0 if original[i] > shuffled[i] else 0.5 if original[i] == shuffled[i] else 0.0
            for c in samples:
                if count[c]:
                    samples[c].append(wins[c] / count[c])
    return {c: (np.percentile(v, [2.5, 97.5]), resamples - len(v)) for c, v in samples.items() if v}


def test_length_gap_bucket_cis_equal_a_plain_loop_bootstrap():
    rng = np.random.default_rng(11)
    n = 90
    pair_index = np.sort(rng.integers(0, 40, n))  # several comparisons share an original
    pair_index = np.unique(pair_index, return_inverse=True)[1]
    original = np.round(rng.normal(0.3, 1, n), 0)  # coarse scores: ties count 0.5
    shuffled = np.round(rng.normal(0, 1, n), 0)
    gaps = rng.integers(-260, 260, n).astype(float)
    report = shuffle_test(original, shuffled, pair_index=pair_index, length_gap=gaps, resamples=300, seed=5,
                          min_bucket_pairs=0)  # every 20-character bucket, none merged
    expected = plain_bucket_bootstrap(original, shuffled, pair_index, gaps, 300, 5)
    checked = 0
    for bucket in report.buckets:
        if not bucket.pairs:
            assert bucket.ci is None
            continue
        (low, high), dropped = expected[bucket.gap]
        assert bucket.ci == pytest.approx((low, high), abs=1e-12)
        assert bucket.nan_resamples == dropped
        checked += 1
    assert checked >= 10
    fig = length_gap_figure(report, min_bucket_pairs=0)  # a CI bar for every bucket with comparisons
    try:
        counts = [t.get_text() for t in fig.axes[0].texts]
        assert counts == [f"{b.pairs:,}" for b in report.buckets if b.pairs]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_bucket_cis_in_the_cli_json(tmp_path, capsys):
    out = tmp_path / "gap.json"
    code, stdout, _ = run(capsys, "shuffle-test", "--input", EXAMPLES / "shuffle_length_gap.jsonl", "--length-gap",
                          "--resamples", "100", "--json", out)
    assert code == 0 and "95% CI" in stdout
    buckets = json.loads(out.read_text())["by_length_gap"]
    for bucket in buckets:
        if bucket["pairs"]:
            assert bucket["ci"][0] <= bucket["accuracy"] <= bucket["ci"][1]
        else:
            assert bucket["ci"] is None


# --- to_frame() -------------------------------------------------------------------------------------


def test_auc_report_frame_matches_its_json():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 150)
    scores = np.round(rng.normal(size=150) + labels, 1)
    groups = [("a", "b", "c")[i % 3] for i in range(150)]
    systems = [f"s{i % 4}" for i in range(150)]
    report = auc_by_group(scores, labels, groups, systems, resamples=100, seed=1)
    frame, data = report.to_frame(), report.to_json()
    assert list(frame["group"]) == ["a", "b", "c", "mean"]
    for _, row in frame.iterrows():
        source = data["mean"] if row["group"] == "mean" else data["groups"][row["group"]]
        intra = data["intra_system_mean"] if row["group"] == "mean" else source["intra_system"]
        assert row["value"] == source["value"]
        assert [row["ci_low"], row["ci_high"]] == source["ci"]
        assert (row["n"], row["skipped"], row["nan_resamples"]) == (source["n"], source["skipped"],
                                                                    source["nan_resamples"])
        assert [row["intra_system_value"], row["intra_system_ci_low"], row["intra_system_ci_high"]] == [
            intra["value"], *intra["ci"]]
        if row["group"] != "mean":
            assert (row["positives"], row["negatives"]) == (source["positives"], source["negatives"])


def test_bias_matrix_frame_matches_its_json():
    rng = np.random.default_rng(5)
    human = rng.integers(1, 4, (15, 5)).astype(float)  # many human ties
    metric = np.round(human + rng.normal(0, 1, human.shape))
    human[0, 0] = np.nan
    matrix = bias_matrix(human, metric, list("PQRST"))
    frame, data = matrix.to_frame(), matrix.to_json()
    assert len(frame) == 5 * 4
    for _, row in frame.iterrows():
        a, b = row["rank_preferred"] - 1, row["rank_other"] - 1
        assert (data["systems"][a], data["systems"][b]) == (row["preferred"], row["other"])
        assert row["pairs"] == data["pairs"][a][b]
        assert row["mean_human_preferred"] == data["mean_human"][a]
        expected = data["tau"][a][b]
        assert np.isnan(row["tau"]) if expected is None else row["tau"] == expected
        assert row["kind"] == ("tau+" if a < b else "tau-")


def test_shuffle_report_frame_matches_its_json():
    rng = np.random.default_rng(6)
    report = shuffle_test(np.round(rng.normal(size=80), 0), np.round(rng.normal(size=80), 0),
                          length_gap=rng.integers(-230, 230, 80), resamples=100)
    frame, data = report.to_frame(), report.to_json()
    assert len(frame) == 1 + len(data["by_length_gap"])
    overall = frame.iloc[0]
    assert overall["gap"] is pd_na() and overall["accuracy"] == data["accuracy"]["value"]
    assert [overall["ci_low"], overall["ci_high"]] == data["accuracy"]["ci"]
    for (_, row), bucket in zip(frame.iloc[1:].iterrows(), data["by_length_gap"], strict=True):
        assert row["gap"] == bucket["gap"] and row["pairs"] == bucket["pairs"]
        for key, end in (("from", bucket["from"]), ("to", bucket["to"])):
            assert row[key] is pd_na() if end is None else row[key] == end
        if bucket["accuracy"] is None:
            assert np.isnan(row["accuracy"]) and bucket["ci"] is None
        else:
            assert row["accuracy"] == bucket["accuracy"]
            assert [row["ci_low"], row["ci_high"]] == bucket["ci"]
    no_buckets = shuffle_test(np.ones(3), np.zeros(3), resamples=0).to_frame()
    assert len(no_buckets) == 1 and no_buckets["accuracy"][0] == 1.0


def pd_na():
    import pandas as pd

    return pd.NA
