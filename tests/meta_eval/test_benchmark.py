"""meta-eval benchmark: faithfulness benchmarks read in their released layouts and judged under a named protocol.

Every cell is checked against sklearn (balanced_accuracy_score, roc_auc_score, precision/recall/f1 with the
unsupported class as positive) on stand-in files made here in each exact layout (ties, unbalanced classes, several
datasets); the threshold search against a brute-force loop written here the way the reference code loops; then
each pitfall, the command with every output, and ``score faithfulness`` picking the text fields of each layout.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.benchmark import benchmark, evaluate_benchmark, tune_threshold
from learned_metrics.meta_eval.benchmarks_io import LAYOUTS, benchmark_label, read_benchmark

FAST = ["--resamples", "20", "--permutations", "20"]
# sklearn warns on a single-class dataset (y_pred has a class y_true lacks); that case is tested on purpose
pytestmark = pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true", "ignore:A single label was")

# dataset -> (rows per split, share of label 1): unbalanced, one dataset nearly all positive
DATASETS = {"alpha": (37, 0.8), "beta": (29, 0.3), "gamma": (23, 0.5)}


def _rows(rng: random.Random, split: str, quality: float = 1.0) -> list[dict]:
    """Labelled rows with a tie-heavy score (one decimal) that follows the label with noise."""
    rows = []
    for dataset, (n, share) in DATASETS.items():
        for i in range(n):
            label = int(rng.random() < share)
            score = min(1.0, max(0.0, round(0.5 + quality * 0.25 * (2 * label - 1) + rng.gauss(0, 0.25), 1)))
            rows.append({"dataset": dataset, "doc": f"{dataset} document {i} of {split}", "claim": f"claim {i}",
                         "label": label, "score": score, "score_b": round(rng.random(), 1)})
    return rows


def write_layout(layout: str, folder: Path, seed: int = 0) -> Path:
    """Stand-in files in the exact released layout, already scored (``score``, ``score_b``); returns the path a
    --metric takes."""
    rng = random.Random(seed)
    splits = {"val": _rows(rng, "val"), "test": _rows(rng, "test")}
    folder.mkdir(parents=True, exist_ok=True)
    if layout == "llm-aggrefact":  # Parquet per split, the split in the file name, as on the hub
        for split, rows in splits.items():
            name = {"val": "dev", "test": "test"}[split]
            pd.DataFrame([{k: r[k] for k in ("dataset", "doc", "claim", "label", "score", "score_b")} for r in rows]
                         ).to_parquet(folder / f"{name}-00000-of-00001.parquet", index=False)
        return folder
    if layout == "aggrefact":  # one CSV, cut column, the datasets' origin as the dataset
        rows = []
        for split, items in splits.items():
            for i, r in enumerate(items):
                rows.append({"dataset": f"D{r['dataset']}", "origin": r["dataset"], "id": f"{split}{i}",
                             "doc": r["doc"], "summary": r["claim"], "model_name": ["BART", "T5", "GPT2"][i % 3],
                             "label": r["label"], "cut": split, "DAE_score": r["score_b"], "DAE_label": "",
                             "score": r["score"], "score_b": r["score_b"]})
        path = folder / "aggre_fact_final.csv"
        pd.DataFrame(rows).to_csv(path, index=False)
        return path
    if layout == "summac":  # one JSONL per cut; a cut field on some datasets only, as SummaC's loader writes
        for split, items in splits.items():
            with (folder / f"summac_{split}.jsonl").open("w") as handle:
                for r in items:
                    item = {"document": r["doc"], "claim": r["claim"], "label": r["label"], "dataset": r["dataset"],
                            "origin": "cnndm", "score": r["score"], "score_b": r["score_b"]}
                    if r["dataset"] != "alpha":
                        item["cut"] = split
                    handle.write(json.dumps(item) + "\n")
        return folder
    # TRUE: one CSV per dataset named as published, pandas' unnamed index column, no splits (test rows only)
    for dataset in DATASETS:
        frame = pd.DataFrame([{"grounding": r["doc"], "generated_text": r["claim"], "label": r["label"],
                               "score": r["score"], "score_b": r["score_b"]}
                              for r in splits["test"] if r["dataset"] == dataset])
        frame.to_csv(folder / f"{dataset}_download.csv")
    return folder


def truth(layout: str, folder: Path, seed: int = 0) -> pd.DataFrame:
    """The rows as written, with dataset and split named the way the layout defines them."""
    rng = random.Random(seed)
    frames = []
    for split in ("val", "test"):
        frame = pd.DataFrame(_rows(rng, split))
        frame["split"] = {"llm-aggrefact": {"val": "dev"}.get(split, split)}.get(layout, split)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if layout == "true":
        frame = frame[frame.split == "test"].copy()
        frame["split"] = None
    return frame


def sklearn_cells(frame: pd.DataFrame, thresholds: dict[str, float], score: str = "score") -> dict:
    cells = {}
    for dataset, rows in frame.groupby("dataset", sort=False):
        y, s = rows.label.to_numpy(), rows[score].to_numpy()
        predicted = (s > thresholds[dataset]).astype(int)
        cells[dataset] = {
            "bacc": balanced_accuracy_score(y, predicted),
            "auc": roc_auc_score(y, s) if 0 < y.sum() < len(y) else None,
            "precision": precision_score(y, predicted, pos_label=0, zero_division=np.nan),
            "recall": recall_score(y, predicted, pos_label=0, zero_division=np.nan),
            "f1": f1_score(y, predicted, pos_label=0, zero_division=np.nan),
        }
    return cells


def close(a, b) -> bool:
    if a is None or b is None or (isinstance(b, float) and np.isnan(b)):
        return (a is None or np.isnan(a)) and (b is None or np.isnan(b))
    return abs(a - b) < 1e-12


def bacc(labels: np.ndarray, predicted: np.ndarray) -> float:
    """sklearn's balanced_accuracy_score, in its order of operations (mean of the recalls of the classes present),
    for speed in the loops below; checked against sklearn itself in the threshold test."""
    recalls = [np.mean(predicted[labels == c] == c) for c in (0, 1) if (labels == c).any()]
    return float(np.mean(recalls))


def brute_force(scores: np.ndarray, labels: np.ndarray, grid: str, score=bacc) -> float:
    """The reference loops: SummaC/AggreFact's choose_best_threshold (percentiles, `>=`, so ties go to the later
    threshold) and AlignScore's (0..1 by 0.001, a stable sort by BAcc, the first of the best)."""
    if grid == "percentile":
        best, best_t = 0.0, 0.0
        for p in np.arange(0, 100, 0.2):
            t = np.percentile(scores, p)
            value = score(labels, np.array([1 if s > t else 0 for s in scores]))
            if value >= best:
                best, best_t = value, t
        return float(best_t)
    results = [(i / 1000, score(labels, np.array([int(s > i / 1000) for s in scores]))) for i in range(1001)]
    return sorted(results, key=lambda x: x[1], reverse=True)[0][0]


# --- reading and every cell against sklearn ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("protocol", ["fixed", "tune-on-val", "same-split"])
@pytest.mark.slow
def test_every_cell_matches_sklearn(tmp_path, layout, protocol):
    if layout == "true" and protocol == "tune-on-val":
        pytest.skip("TRUE has no splits")
    source = write_layout(layout, tmp_path / layout)
    rows = read_benchmark([source], layout="auto", score_fields=["score"])
    assert rows.layout.key == layout
    report = evaluate_benchmark(rows, threshold_protocol=protocol, resamples=10, seed=1)
    frame = truth(layout, source)
    judged = frame if layout == "true" else frame[frame.split == "test"]
    result = report.results[next(iter(report.results))]
    thresholds = {d.dataset: d.threshold for d in result.datasets}
    expected = sklearn_cells(judged, thresholds)
    assert [d.dataset for d in result.datasets] == list(expected)
    tuning = {"fixed": None, "tune-on-val": frame[frame.split.isin(["val", "dev"])], "same-split": judged}[protocol]
    for d in result.datasets:
        cell = expected[d.dataset]
        for statistic in cell:
            assert close(d.stats[statistic].value, cell[statistic]), (d.dataset, statistic)
        members = judged[judged.dataset == d.dataset]
        assert d.rows == len(members) and d.positives == members.label.sum()
        if tuning is None:
            assert d.threshold == 0.5 and d.tuned_on == "fixed"
        else:
            rows_of = tuning[tuning.dataset == d.dataset]
            assert d.threshold == brute_force(rows_of.score.to_numpy(), rows_of.label.to_numpy(), "percentile")
    for statistic in ("bacc", "auc", "precision", "recall", "f1"):
        values = [c[statistic] for c in expected.values() if c[statistic] is not None and not np.isnan(c[statistic])]
        assert close(result.mean[statistic].value, float(np.mean(values))), statistic
        assert result.mean[statistic].ci is not None


@pytest.mark.parametrize("grid", ["percentile", "fixed-0.001"])
@pytest.mark.slow
def test_the_threshold_search_is_the_brute_force_search(grid):
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(2, 50))
        scores = np.round(rng.random(n), int(rng.integers(1, 3)))  # one or two decimals: many ties
        labels = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(int)
        if trial % 10 == 0:
            labels[:] = trial % 20 == 0  # a single class now and then
        found = tune_threshold(scores, labels, grid)
        assert found == brute_force(scores, labels, grid), trial
        if trial in (0, 1, 10):  # the loop with sklearn's own BAcc (slow), a few times
            assert found == brute_force(scores, labels, grid, score=balanced_accuracy_score), trial


def test_the_tie_rules_are_the_reference_ones():
    # positives at 0.8 and 0.9, negatives at 0.2 and 0.3: every threshold in [0.3, 0.8) is perfect
    scores, labels = np.array([0.2, 0.3, 0.8, 0.9]), np.array([0, 0, 1, 1])
    assert tune_threshold(scores, labels, "fixed-0.001") == 0.3  # AlignScore: the lowest of the best
    later = tune_threshold(scores, labels, "percentile")  # SummaC: the last percentile with the best BAcc
    grid = np.percentile(scores, np.arange(0, 100, 0.2))
    assert later == grid[(grid >= 0.3) & (grid < 0.8)].max()


def test_labels_as_strings_and_booleans_read_as_0_1(tmp_path):
    words = {1: ["1", "true", "supported", "Consistent", "YES", True, 1.0], 0: ["0", "false", "unsupported",
                                                                               "not_supported", "inconsistent", False]}
    for label, values in words.items():
        for value in values:
            assert benchmark_label(value) == label, value
    assert benchmark_label("") is None and benchmark_label(None) is None and benchmark_label(float("nan")) is None
    with pytest.raises(UserError, match=r"f.csv, row 3, field 'label': expected a label"):
        benchmark_label("maybe", path="f.csv", row=3, field="label")
    # a file with word labels gives the numbers of the same file with 0/1
    source = write_layout("summac", tmp_path / "numbers")
    worded = tmp_path / "words"
    worded.mkdir()
    for file in source.iterdir():
        lines = [json.loads(line) for line in file.read_text().splitlines()]
        for i, item in enumerate(lines):
            item["label"] = ["unsupported", "supported"][item["label"]] if i % 2 else bool(item["label"])
        (worded / file.name).write_text("".join(json.dumps(x) + "\n" for x in lines))
    a = evaluate_benchmark(read_benchmark([source]), threshold_protocol="fixed", resamples=0)
    b = evaluate_benchmark(read_benchmark([worded]), threshold_protocol="fixed", resamples=0)
    assert a.to_json()["results"]["numbers"] == b.to_json()["results"]["words"]


# --- pitfalls --------------------------------------------------------------------------------------------------------


def run(arguments: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(["meta-eval", "benchmark", *arguments])
    except SystemExit as exc:  # argparse: a required option missing
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_missing_label_is_one_line_or_dropped(tmp_path, capsys):
    source = write_layout("llm-aggrefact", tmp_path / "l")
    test_file = source / "test-00000-of-00001.parquet"
    frame = pd.read_parquet(test_file)
    frame["label"] = frame["label"].astype(object)
    frame.loc[4, "label"] = None
    frame.to_parquet(test_file, index=False)
    code, _, err = run(["--metric", str(source), "--threshold-protocol", "fixed", *FAST], capsys)
    assert code == 2
    assert f"{test_file}, row 5, field 'label': label is missing" in err and "--on-missing drop" in err
    assert len(err.strip().splitlines()) == 1
    code, out, _ = run(["--metric", str(source), "--threshold-protocol", "fixed", "--on-missing", "drop", *FAST],
                       capsys)
    assert code == 0 and "note: dropped 1 row(s) without a label" in out


def test_a_bad_label_names_file_row_and_field(tmp_path, capsys):
    source = write_layout("aggrefact", tmp_path / "a")
    frame = pd.read_csv(source)
    frame["label"] = frame["label"].astype(object)
    frame.loc[2, "label"] = "sometimes"
    frame.to_csv(source, index=False)
    code, _, err = run(["--metric", str(source), "--threshold-protocol", "fixed", *FAST], capsys)
    assert code == 2 and f"{source}, row 3, field 'label': expected a label" in err


def test_a_dataset_missing_from_val_is_refused_or_given_the_global_threshold(tmp_path, capsys):
    source = write_layout("summac", tmp_path / "s")
    val = source / "summac_val.jsonl"
    val.write_text("".join(line + "\n" for line in val.read_text().splitlines() if '"gamma"' not in line))
    code, _, err = run(["--metric", str(source), "--threshold-protocol", "tune-on-val", *FAST], capsys)
    assert code == 2 and "dataset 'gamma' has test rows but no val rows" in err and "--unseen-dataset global" in err
    out_json = tmp_path / "out.json"
    code, out, _ = run(["--metric", str(source), "--threshold-protocol", "tune-on-val", "--unseen-dataset", "global",
                        "--json", str(out_json), *FAST], capsys)
    assert code == 0 and "note: gamma: no val rows; the threshold tuned on the whole val split is used" in out
    gamma = json.loads(out_json.read_text())["results"]["s"]["datasets"]["gamma"]
    frame = truth("summac", source)
    val_rows = frame[(frame.split == "val") & (frame.dataset != "gamma")]
    assert gamma["fallback"] and gamma["threshold"] == brute_force(val_rows.score.to_numpy(), val_rows.label.to_numpy(),
                                                                   "percentile")


def test_constant_scores_and_single_class_datasets_are_said(capsys):
    scores = {"flat": [0.7] * 6 + [0.1, 0.9, 0.4, 0.6]}
    labels = [1, 0, 1, 0, 1, 1] + [1, 1, 1, 1]
    datasets = ["mixed"] * 6 + ["positive"] * 4
    report = benchmark(scores, labels, datasets, threshold_protocol="fixed", resamples=10)
    mixed, positive = report.results["flat"].datasets
    assert mixed.constant and mixed.stats["bacc"].value == 0.5 and mixed.stats["auc"].value == 0.5
    assert positive.stats["auc"].value is None and positive.stats["bacc"].value == balanced_accuracy_score(
        [1, 1, 1, 1], [0, 1, 0, 1])
    assert report.results["flat"].mean["auc"].value == 0.5 and report.results["flat"].mean["auc"].skipped == 1
    notes = " ".join(report.notes)
    assert "every judged row of mixed has the same score (0.7)" in notes
    assert "positive: every judged row has label 1: AUC undefined" in notes


def test_duplicates_between_dev_and_test_are_warned(tmp_path, capsys):
    source = write_layout("llm-aggrefact", tmp_path / "l")
    dev, test = source / "dev-00000-of-00001.parquet", source / "test-00000-of-00001.parquet"
    d, t = pd.read_parquet(dev), pd.read_parquet(test)
    t.loc[[0, 1], ["doc", "claim"]] = d.loc[[0, 1], ["doc", "claim"]].to_numpy()
    t.to_parquet(test, index=False)
    code, out, _ = run(["--metric", str(source), "--threshold-protocol", "tune-on-val", *FAST], capsys)
    assert code == 0
    assert f"warning: 2 of {len(t)} test row(s) also appear in dev (same grounding and generation)" in out
    code, out, _ = run(["--metric", str(source), "--threshold-protocol", "fixed", *FAST], capsys)
    assert "warning" not in out  # nothing was tuned on dev


def test_protocol_options_that_do_not_go_together_are_refused(tmp_path, capsys):
    source = write_layout("true", tmp_path / "t")
    code, _, err = run(["--metric", str(source), *FAST], capsys)
    assert code == 2 and "--threshold-protocol" in err  # required: no silent default
    for arguments, message in [
        (["--threshold-protocol", "same-split", "--threshold", "0.3"], "--threshold is for --threshold-protocol fixed"),
        (["--threshold-protocol", "fixed", "--grid", "percentile"], "--grid and --tune-scope are for the tuning"),
        (["--threshold-protocol", "tune-on-val"], "tune-on-val needs a tuning split"),
        (["--threshold-protocol", "fixed", "--split", "test"], "the rows carry no split"),
        (["--threshold-protocol", "fixed", "--threshold", "nan"], "--threshold must be a finite number"),
        (["--threshold-protocol", "same-split", "--tune-split", "val"], "--tune-split and --unseen-dataset are for"),
    ]:
        code, _, err = run(["--metric", str(source), *arguments, *FAST], capsys)
        assert code == 2 and message in err, arguments
        assert "Traceback" not in err


def test_a_global_threshold_is_tuned_on_every_tuning_row(tmp_path):
    source = write_layout("aggrefact", tmp_path / "a")
    report = evaluate_benchmark(read_benchmark([source]), threshold_protocol="tune-on-val", tune_scope="global",
                                grid="fixed-0.001", resamples=0)
    frame = truth("aggrefact", source)
    val = frame[frame.split == "val"]
    expected = brute_force(val.score.to_numpy(), val.label.to_numpy(), "fixed-0.001")
    datasets = report.results[source.parent.name].datasets  # named after its folder, not the benchmark
    assert {d.threshold for d in datasets} == {expected}
    assert {d.tuned_on for d in datasets} == {"val, all datasets"} and datasets[0].tune_rows == len(val)
    assert "tuned once for all datasets pooled on val" in report.tables()[0].caption


def test_scores_outside_0_1_are_noted_under_a_fixed_threshold():
    report = benchmark({"e-c": [-0.9, -0.2, 0.4, 0.8]}, [0, 0, 1, 1], ["d"] * 4, threshold_protocol="fixed",
                       resamples=0)
    assert any("scores range from -0.9 to 0.8, not a probability in [0, 1]" in note for note in report.notes)


def test_true_files_read_as_published(tmp_path):
    source = write_layout("true", tmp_path / "t")
    assert (source / "alpha_download.csv").read_text().startswith(",grounding,generated_text,label")
    rows = read_benchmark([source])
    assert rows.layout.key == "true" and set(rows.datasets) == {"alpha", "beta", "gamma"}
    assert set(rows.splits) == {None}
    report = evaluate_benchmark(rows, threshold_protocol="same-split", resamples=0)
    assert "OPTIMISTIC" in report.tables()[0].caption and report.protocol.split is None


def test_aggrefact_published_scores_and_sota_subset(tmp_path, capsys):
    source = write_layout("aggrefact", tmp_path / "a")
    rows = read_benchmark([source], published_scores=True, sota=True)
    assert list(rows.scores) == [source.parent.name, "DAE"]  # a file named after the benchmark: its folder names it
    frame = pd.read_csv(source)
    sota = frame[frame.model_name.isin(["BART", "T5"])]
    assert len(rows.labels) == len(sota)
    np.testing.assert_array_equal(rows.scores["DAE"], sota.DAE_score.to_numpy())
    assert f"AggreFact SOTA subset: {len(sota)} of {len(frame)} rows" in rows.notes[0]
    names = {"cnndm": "AggreFact-CNN", "xsum": "AggreFact-XSum"}  # the origin is the dataset, named as its tables
    assert set(rows.datasets) == {names.get(origin, origin) for origin in frame.origin}
    code, _, err = run(["--metric", str(write_layout("summac", tmp_path / "s")), "--sota", "--threshold-protocol",
                        "fixed", *FAST], capsys)
    assert code == 2 and "--sota is AggreFact's SOTA subset" in err


def test_metrics_that_score_different_rows_are_refused(tmp_path, capsys):
    a = write_layout("summac", tmp_path / "a", seed=0)
    b = write_layout("summac", tmp_path / "b", seed=1)
    code, _, err = run(["--metric", str(a), "--metric", str(b), "--threshold-protocol", "fixed", *FAST], capsys)
    assert code == 2 and "score the same files, in the same order, with every metric" in err


# --- the command and its outputs -------------------------------------------------------------------------------------


def test_two_metrics_give_report_tables_in_every_format(tmp_path, capsys):
    source = write_layout("llm-aggrefact", tmp_path / "l")
    outputs = {kind: tmp_path / f"out.{suffix}" for kind, suffix in
               (("json", "json"), ("markdown", "md"), ("latex", "tex"), ("csv", "csv"))}
    code, out, _ = run(["--metric", str(source), "--metric", str(source), "--metric-field", "score", "--metric-field",
                        "score_b", "--names", "good,random", "--threshold-protocol", "tune-on-val", "--grid",
                        "fixed-0.001", "--resamples", "30", "--permutations", "200",
                        *(x for kind, path in outputs.items() for x in (f"--{kind}", str(path)))], capsys)
    assert code == 0
    assert "BAcc · LLM-AggreFact · test · protocol tune-on-val" in out
    data = json.loads(outputs["json"].read_text())
    assert data["protocol"]["name"] == "tune-on-val" and data["protocol"]["tune_split"] == "dev"
    assert data["protocol"]["grid"] == "fixed-0.001" and data["protocol"]["ties"] == "lowest"
    assert data["settings"]["threshold_protocol"] == "tune-on-val" and data["settings"]["grid"] == "fixed-0.001"
    good = data["results"]["good"]["datasets"]
    assert set(good) == set(DATASETS) and all(0 <= d["threshold"] <= 1 for d in good.values())
    cells = data["tables"]["bacc"]["cells"]
    assert cells["good"]["mean"]["best"] and "random" in cells["good"]["mean"]["better_than"]
    assert {t["metric"] for t in data["tests"]["bacc"]} == {"good", "random"}
    markdown = outputs["markdown"].read_text()
    assert "ties to the lowest threshold" in markdown and "applied to test" in markdown
    assert "**" in markdown and "<sup>2</sup>" in markdown and "| good |" in markdown
    latex = outputs["latex"].read_text()
    for label in ("tab:bacc", "tab:auc", "tab:per-dataset", "tab:unsupported"):
        assert f"\\label{{{label}}}" in latex
    header = outputs["csv"].read_text().splitlines()[0]
    assert header.startswith("metric,dataset,threshold,tuned_on,rows,positives,negatives,bacc,bacc_ci_low")
    assert "f1_ci_high" in header


def test_help_names_the_protocols_and_their_tools(capsys):
    with pytest.raises(SystemExit):
        main(["meta-eval", "benchmark", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("fixed", "MiniCheck", "LLM-AggreFact", "tune-on-val", "AggreFact, AlignScore", "same-split",
                  "SummaC's benchmark code", "OPTIMISTIC", "TRUE", "ties to the later threshold", "fixed-0.001"):
        assert words in text, words


# --- scoring a benchmark file directly ------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_score_faithfulness_picks_the_text_fields_of_each_layout(tmp_path, capsys, nli_export, layout):
    source = write_layout(layout, tmp_path / layout)
    file = sorted(source.iterdir())[-1] if source.is_dir() else source
    output = tmp_path / "scored" / file.name  # the split stays in the name
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(file), "--output", str(output),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    spec = LAYOUTS[layout]
    assert (f"note: {spec.name} layout recognized: grounding from '{spec.premise}', generation from "
            f"'{spec.hypothesis}'") in err
    scored = pd.read_parquet(output) if output.suffix == ".parquet" else (
        pd.read_json(output, lines=True) if output.suffix == ".jsonl" else pd.read_csv(output))
    original = pd.read_parquet(file) if file.suffix == ".parquet" else (
        pd.read_json(file, lines=True) if file.suffix == ".jsonl" else pd.read_csv(file))
    assert len(scored) == len(original) and set(original.columns) <= set(scored.columns)
    assert scored["score"].notna().all()
    # the scored file is what meta-eval benchmark reads next
    split = {"summac": "val"}.get(layout)  # the last SummaC file is its val cut
    report = evaluate_benchmark(read_benchmark([output]), threshold_protocol="same-split", split=split, resamples=0)
    assert report.benchmark == spec.name


def test_score_keeps_the_default_fields_when_present(tmp_path, capsys, nli_export):
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"grounding": "Anna bought apples.", "generation": "Anna bought fruit.",
                                "doc": "x", "claim": "y"}) + "\n")
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(path), "--output",
                 str(tmp_path / "o.jsonl"), "--no-progress"]) == 0
    assert "layout recognized" not in capsys.readouterr().err
