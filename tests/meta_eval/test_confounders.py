"""`meta-eval confounders`: text proxies, tau-b against scipy, per-class split, Williams, CLI outputs and errors."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from learned_metrics.cli import main
from learned_metrics.meta_eval.confounders import confounders
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.resampling import bootstrap_indices
from learned_metrics.meta_eval.significance import williams_p
from learned_metrics.text.proxies import first_person_count, overlap_share, text_proxies, word_tokens

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "meta_eval" / "confounders.jsonl"
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "home", "I", "we", "my", "think"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def random_rows(n: int = 80, seed: int = 0) -> list[dict]:
    """Faithfulness-like rows with tied integer scores, a missing-at-random numeric proxy and 0/1 labels."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(2, 12)))
        generation = " ".join(words) + "." + (" Then home." if i % 3 else "")
        label = int(rng.random() < 0.5)
        rows.append({"grounding": "The cat sat on the mat. The dog ran home.", "generation": generation,
                     "label": label, "score": float(rng.integers(0, 4) + label),
                     "other": float(len(generation) // 10 + rng.integers(0, 2)),
                     "position": None if rng.random() < 0.3 else float(rng.integers(1, 5))})
    return rows


def proxy_column(rows: list[dict], proxy: str) -> np.ndarray:
    """The proxy recomputed row by row, NaN where a field is missing."""
    if proxy == "position":
        return np.array([math.nan if r["position"] is None else r["position"] for r in rows])
    return np.array([text_proxies(r["generation"], r["grounding"], [proxy])[proxy] for r in rows])


# --- proxies ---------------------------------------------------------------------------------


def test_proxies_count_exactly_on_hand_made_texts():
    text = "I think we're fine. My dog, Rex, isn't mine. US and us! Mineral water, myself."
    assert word_tokens(text) == ["i", "think", "we're", "fine", "my", "dog", "rex", "isn't", "mine", "us", "and",
                                 "us", "mineral", "water", "myself"]
    assert first_person_count(text) == 7  # I, we('re), My, mine, US, us, myself; not Mineral
    values = text_proxies(text, "the dog and the water", ["chars", "tokens", "sentences", "first_person", "overlap"])
    assert values == {"chars": float(len(text)), "tokens": 15.0, "sentences": 4.0, "first_person": 7.0,
                      "overlap": 3 / 15}
    assert text_proxies("one line\nsecond line", proxies=["sentences"], splitter="newline") == {"sentences": 2.0}
    assert overlap_share("The cat sat on the mat", "the CAT ran") == 0.5
    assert math.isnan(overlap_share("?!", "the cat"))


# --- statistics against scipy ----------------------------------------------------------------


def test_every_correlation_equals_scipy_kendalltau_on_tied_data():
    rows = random_rows()
    report = confounders(rows, metric_fields=["score", "other"], proxy_fields=["position"], resamples=0)
    assert report.proxies == ["chars", "tokens", "sentences", "overlap", "first_person", "position"]
    assert report.columns == ["human", "score", "other"]
    for proxy in report.proxies:
        values = proxy_column(rows, proxy)
        used = ~np.isnan(values)
        for column, field in (("human", "label"), ("score", "score"), ("other", "other")):
            scores = np.array([r[field] for r in rows], dtype=float)
            expected = kendalltau(scores[used], values[used])
            result = report.correlation("all", column, proxy)
            assert result.tau.value == pytest.approx(expected.statistic, abs=1e-12)
            assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)
            assert result.tau.n == used.sum() and result.tau.skipped == (~used).sum()
            assert result.tau.ci is None


def test_bootstrap_ci_equals_a_plain_loop_over_the_same_row_draws():
    rows = random_rows(60, seed=1)
    report = confounders(rows, proxies=["tokens"], resamples=300, seed=7)
    values = proxy_column(rows, "tokens")
    scores = np.array([r["score"] for r in rows])
    draws = np.concatenate([idx for idx, _ in bootstrap_indices(len(rows), 1, 300, "documents", 7)])
    taus = []
    for idx in draws:
        x, y = scores[idx], values[idx]
        taus.append(math.nan if np.all(x == x[0]) or np.all(y == y[0]) else kendalltau(x, y).statistic)
    taus = np.array(taus)
    expected = np.percentile(taus[~np.isnan(taus)], [2.5, 97.5])
    assert report.correlation("all", "score", "tokens").tau.ci == pytest.approx(tuple(expected), abs=1e-12)


def test_per_class_tables_equal_the_analysis_of_each_subset():
    rows = random_rows(90, seed=2)
    split = confounders(rows, metric_fields=["score", "other"], proxy_fields=["position"], by_label=True,
                        resamples=200, seed=3)
    assert split.scopes == ["all", "label=1", "label=0"]
    for label in (1, 0):
        subset = confounders([r for r in rows if r["label"] == label], metric_fields=["score", "other"],
                             proxy_fields=["position"], resamples=200, seed=3)
        scope = f"label={label}"
        assert split.columns_of(scope) == ["score", "other"]  # the human row is constant within a class
        for column in ("score", "other"):
            for proxy in split.proxies:
                got, want = split.correlation(scope, column, proxy), subset.correlation("all", column, proxy)
                assert got.tau == want.tau and got.p_value == want.p_value


# --- Williams --------------------------------------------------------------------------------


def williams_rows(n: int = 120, seed: int = 4) -> list[dict]:
    """``tracker`` is built from the length of the generation (negated: the sign must not matter), ``blind`` not."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        generation = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 20))))
        rows.append({"generation": generation, "label": int(rng.random() < 0.5),
                     "tracker": -len(generation) + float(rng.normal(0, 3)), "blind": float(rng.integers(0, 5))})
    return rows


def test_williams_p_is_a_direct_williams_call_and_small_for_the_metric_built_from_the_proxy():
    rows = williams_rows()
    report = confounders(rows, metric_fields=["blind", "tracker"], proxies=["chars"], resamples=0)
    chars = np.array([len(r["generation"]) for r in rows], dtype=float)
    blind, tracker = (np.array([r[f] for r in rows]) for f in ("blind", "tracker"))
    t_blind, t_tracker = kendalltau(blind, chars).statistic, kendalltau(tracker, chars).statistic
    t_ab = kendalltau(blind, tracker).statistic
    tests = {(t.metric_a, t.metric_b): t for t in report.tests}
    assert set(tests) == {("blind", "tracker"), ("tracker", "blind")}
    forward = tests[("blind", "tracker")]  # H1: blind depends less on chars than tracker
    aligned = np.sign(t_blind or 1) * np.sign(t_tracker or 1) * t_ab
    assert forward.p == pytest.approx(williams_p(abs(t_tracker), abs(t_blind), aligned, len(rows)), rel=1e-12)
    assert forward.tau_b == pytest.approx(t_tracker) and forward.tau_b < -0.8
    assert forward.p < 1e-6 and tests[("tracker", "blind")].p > 0.5
    assert forward.p_adjusted == pytest.approx(min(1.0, forward.p * len(report.tests)))  # Holm by default


def test_holm_correction_adjusts_every_williams_p_of_the_run():
    rows = williams_rows()
    plain = confounders(rows, metric_fields=["blind", "tracker"], human_field=None, resamples=0, correction="none")
    holm = confounders(rows, metric_fields=["blind", "tracker"], human_field=None, resamples=0)  # Holm by default
    assert [t.p for t in holm.tests] == [t.p for t in plain.tests]
    assert [t.p_adjusted for t in holm.tests] == adjust_p_values([t.p for t in plain.tests], "holm")


@pytest.mark.slow
def test_dataframe_columns_and_row_dicts_give_the_same_report():
    rows = random_rows(40, seed=5)
    frame = pd.DataFrame(rows)
    columns = {name: frame[name].to_numpy() for name in frame.columns}
    kwargs = {"metric_fields": ["score", "other"], "proxy_fields": ["position"], "resamples": 50}
    expected = confounders(rows, **kwargs).to_json()
    assert confounders(frame, **kwargs).to_json() == expected
    assert confounders(columns, **kwargs).to_json() == expected
    long = confounders(frame, **kwargs).to_frame()
    assert list(long.columns) == ["scope", "column", "proxy", "tau", "ci_low", "ci_high", "p_value", "n", "skipped"]
    assert len(long) == 3 * 6


# --- CLI -------------------------------------------------------------------------------------


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["meta-eval", "confounders", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_writes_every_format_and_matches_the_api(tmp_path, capsys):
    rows = random_rows(50, seed=6)
    source = write_jsonl(tmp_path / "scored.jsonl", rows)
    outs = {kind: tmp_path / "out" / f"c.{suffix}" for kind, suffix in
            (("json", "json"), ("markdown", "md"), ("latex", "tex"), ("csv", "csv"))}
    code, out, _ = run(capsys, "--input", source, "--metric-field", "score", "--metric-field", "other",
                       "--names", "nli,len", "--proxy-field", "position", "--by-label", "--resamples", "100",
                       "--seed", "2", "--correction", "bonferroni",
                       *[arg for kind, path in outs.items() for arg in (f"--{kind}", path)])
    assert code == 0
    assert "Kendall tau-b with proxies" in out and "label 0 rows" in out and "Williams" in out
    assert "position: " in out and "left out" in out
    expected = confounders(rows, metric_fields=["score", "other"], names=["nli", "len"], proxy_fields=["position"],
                           by_label=True, resamples=100, seed=2, correction="bonferroni")
    data = json.loads(outs["json"].read_text())
    expected_json = json.loads(json.dumps(expected.to_json()))
    assert data.pop("settings").items() >= expected_json.pop("settings").items()  # the CLI adds how it was made
    assert data == expected_json
    assert data["scopes"]["all"]["human"]["chars"]["value"] == expected.correlation("all", "human", "chars").tau.value
    assert set(data["scopes"]["label=1"]) == {"nli", "len"}
    markdown = outs["markdown"].read_text()
    assert "| score | chars | tokens |" in markdown and "| nli |" in markdown and "**Williams tests**" in markdown
    latex = outs["latex"].read_text()
    assert r"\toprule" in latex and r"first\_person" in latex and latex.count(r"\begin{table") == 2
    assert latex.count("{") == latex.count("}")
    table = list(csv.DictReader(io.StringIO(outs["csv"].read_text())))
    assert len(table) == 6 * (3 + 2 + 2)  # proxies x (all: human + 2 metrics; each class: 2 metrics)


@pytest.mark.slow
def test_cli_on_the_example_file_and_on_coherence_rows_without_grounding(tmp_path, capsys):
    code, out, _ = run(capsys, "--input", EXAMPLE, "--metric-field", "score_nli", "--metric-field", "score_overlap",
                       "--proxy-field", "first_error", "--resamples", "0")
    assert code == 0 and "first_error: 140 of 300 row(s) left out" in out
    coherence = write_jsonl(tmp_path / "coh.jsonl", [{"text": "A b. C d e.", "score": 0.1, "label": 1},
                                                     {"text": "A.", "score": 0.5, "label": 0},
                                                     {"text": "I am. We are here.", "score": 0.3, "label": 1}])
    code, out, err = run(capsys, "--input", coherence, "--generation-field", "text", "--resamples", "0")
    assert code == 0 and err == ""
    assert "note: overlap not computed: no grounding field 'grounding'" in out and "first_person" in out


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        ([{"text": "a b", "label": 1, "score": 1}] * 3, [], "row 1, field 'generation': missing field"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1}] * 2
         + [{"generation": "a b", "grounding": "a", "label": 1, "score": None}], [],
         "row 3, field 'score': score is missing or NaN"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1, "pos": "third"}] * 3,
         ["--proxy-field", "pos"], "row 1, field 'pos': expected a number, got 'third'"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1}] * 3, ["--proxies", "chars,length"],
         "unknown proxy 'length'"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1}] * 2, [],
         "needs at least 3 rows for a correlation, got 2"),
        ([{"generation": "a b", "label": 1, "score": 1}] * 3, ["--proxies", "overlap"],
         "row 1, field 'grounding': missing field"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1}] * 3, ["--proxy-field", "postion"],
         "row 1, field 'postion': no row has this --proxy-field"),
        ([{"generation": "a b", "grounding": "a", "label": "maybe", "score": 1}] * 3, [],
         "row 1, field 'label': expected a 0/1 label"),
        ([{"generation": "a b", "grounding": "a", "label": 1, "score": 1}] * 3, ["--names", "a,b"],
         "--names gives 2 name(s) for 1 --metric-field(s)"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, rows, options, message):
    source = write_jsonl(tmp_path / "bad.jsonl", rows)
    out_json = tmp_path / "out.json"
    code, _, err = run(capsys, "--input", source, "--resamples", "10", "--json", out_json, *options)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out_json.exists()
