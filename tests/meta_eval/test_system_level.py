"""Realistic system-level correlations: metric system scores from the full test set, and agreement on system
pairs within bands of metric-score differences (Deutsch, Dror & Roth 2022), checked against scipy and by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import correlations
from learned_metrics.meta_eval.system_level import realistic_system_level

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def grids(seed: int = 0, n_docs: int = 40, n_systems: int = 7, n_full: int = 150):
    rng = np.random.default_rng(seed)
    effect = np.linspace(-1, 1, n_systems)
    quality = effect[None, :] + rng.normal(0, 0.8, (n_docs, n_systems))
    human = np.rint(quality * 2) / 2  # ties
    metric = quality + rng.normal(0, 0.7, quality.shape)
    full = np.vstack([metric, effect[None, :] + rng.normal(0, 1.0, (n_full - n_docs, n_systems))])
    full[rng.random(full.shape) < 0.05] = np.nan  # some documents missing for some systems
    return human, metric, full


def test_system_correlations_equal_scipy_on_system_means():
    human, metric, full = grids()
    report = realistic_system_level(human, metric, full, resamples=200, seed=1)
    human_means = human.mean(axis=0)
    assert report.tau_sys.value == pytest.approx(scipy_stats.kendalltau(metric.mean(axis=0), human_means)[0])
    assert report.tau_sys.value == pytest.approx(correlations(human, metric, stats=["tau_sys"], resamples=0)
                                                 .stats["tau_sys"].value)
    expected_full = scipy_stats.kendalltau(np.nanmean(full, axis=0), human_means)[0]
    assert report.tau_sys_full.value == pytest.approx(expected_full)
    for estimate in (report.tau_sys, report.tau_sys_full):
        assert estimate.ci[0] <= estimate.value <= estimate.ci[1]
    pearson = realistic_system_level(human, metric, full, coefficient="pearson", resamples=0)
    assert pearson.tau_sys_full.value == pytest.approx(scipy_stats.pearsonr(np.nanmean(full, axis=0), human_means)[0])
    assert pearson.tau_sys_full.ci is None


def test_bands_count_and_score_the_pairs_of_a_hand_made_example():
    # four systems, one document each side: metric means 0, 0.05, 0.5, 2.0; human means 1, 0, 2, 3
    human = np.array([[1.0, 0.0, 2.0, 3.0], [1.0, 0.0, 2.0, 3.0]])
    metric = np.array([[0.0, 0.05, 0.5, 2.0], [0.0, 0.05, 0.5, 2.0]])
    report = realistic_system_level(human, metric, bands=[(0, 0.1), (0.1, 1.0), (1.0, float("inf"))], resamples=0)
    close, middle, far = report.bands
    # |delta| < 0.1: (s0, s1) only; the metric says s1 > s0, the humans s0 > s1: discordant
    assert (close.pairs, close.agreement.value, close.tau.value) == (1, 0.0, -1.0)
    # 0.1 <= |delta| < 1: (s0, s2) 0.5, (s1, s2) 0.45: both concordant
    assert (middle.pairs, middle.agreement.value, middle.tau.value) == (2, 1.0, 1.0)
    # |delta| >= 1: (s0, s3) 2.0, (s1, s3) 1.95, (s2, s3) 1.5: all concordant
    assert (far.pairs, far.agreement.value) == (3, 1.0)
    assert sum(b.pairs for b in report.bands) == 6  # every pair in exactly one band
    empty = realistic_system_level(human, metric, bands=[(5, 6)], resamples=0).bands[0]
    assert empty.pairs == 0 and empty.agreement.value is None


def test_bands_use_the_full_set_differences_and_count_human_ties():
    human = np.array([[1.0, 1.0, 2.0]])
    metric = np.array([[0.0, 0.01, 0.02]])  # judged: all close
    full = np.array([[0.0, 0.5, 2.0], [0.0, 0.5, 2.0]])  # full set: far apart
    report = realistic_system_level(human, metric, full, bands=[(0, 0.1), (0.1, float("inf"))], resamples=0)
    assert report.bands[0].pairs == 0 and report.bands[1].pairs == 3
    assert report.bands[1].human_ties == 1  # (s0, s1): equal human means
    assert report.bands[1].agreement.value == 1.0  # of the two strictly ordered pairs
    # tau-b: P = 2, Q = 0, one pair tied by the humans only: 2 / sqrt(2 * 3)
    assert report.bands[1].tau.value == pytest.approx(2 / math.sqrt(6))


@pytest.mark.parametrize("bands, message", [([(0.3, 0.1)], "LO < HI"), ([(-1, 1)], "LO < HI"),
                                            ([(float("nan"), 1)], "LO < HI")])
def test_bad_bands_are_refused(bands, message):
    human, metric, _ = grids()
    with pytest.raises(UserError, match=message):
        realistic_system_level(human, metric, bands=bands)


def test_a_full_set_without_a_system_or_too_few_systems_is_refused():
    human, metric, full = grids()
    full[:, 2] = np.nan
    with pytest.raises(UserError, match="system number 3"):
        realistic_system_level(human, metric, full)
    with pytest.raises(UserError, match="at least 3 systems"):
        realistic_system_level(human[:, :2], metric[:, :2])


def test_cli_on_the_shipped_examples(tmp_path, capsys):
    out = tmp_path / "system_level.json"
    md = tmp_path / "system_level.md"
    code = main(["meta-eval", "system-level", "--human", str(EXAMPLES / "human.jsonl"), "--metric",
                 str(EXAMPLES / "metric_good.jsonl"), "--metric-full", str(EXAMPLES / "metric_good_full.jsonl"),
                 "--delta-band", "0", "0.1", "--delta-band", "0.1", "inf", "--resamples", "100", "--json", str(out),
                 "--markdown", str(md)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["settings"]["full_docs"] == 400 and data["settings"]["judged_docs"] == 100
    assert sum(band["pairs"] for band in data["bands"]) == 16 * 15 // 2
    assert data["bands"][1]["hi"] is None
    assert "tau_sys (full set)" in md.read_text()
    printed = capsys.readouterr().out
    assert "tau_sys_full" in printed and "system pairs by |delta metric|" in printed


def test_cli_full_set_missing_a_system_is_one_line(tmp_path, capsys):
    full = tmp_path / "full.jsonl"
    rows = [json.loads(line) for line in (EXAMPLES / "metric_good_full.jsonl").read_text().splitlines()]
    full.write_text("".join(json.dumps(r) + "\n" for r in rows if r["system_id"] != "M05"))
    code = main(["meta-eval", "system-level", "--human", str(EXAMPLES / "human.jsonl"), "--metric",
                 str(EXAMPLES / "metric_good.jsonl"), "--metric-full", str(full), "--resamples", "0"])
    err = capsys.readouterr().err
    assert code != 0 and "M05" in err and "full.jsonl" in err and "Traceback" not in err


def test_long_dataframes_and_transposed_matrices_give_the_same_report():
    import pandas as pd

    human, metric, full = grids(3)

    def frame(grid: np.ndarray) -> pd.DataFrame:
        rows = [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": grid[d, s]}
                for d in range(grid.shape[0]) for s in range(grid.shape[1]) if not np.isnan(grid[d, s])]
        return pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # any row order

    bands = [(0, 0.2), (0.2, float("inf"))]
    expected = realistic_system_level(human, metric, full, bands=bands, resamples=50).to_json()
    from_frames = realistic_system_level(frame(human), frame(metric), frame(full), bands=bands, resamples=50)
    transposed = realistic_system_level(human.T, metric.T, full.T, bands=bands, resamples=50,
                                        axes="systems x documents")
    assert transposed.to_json() == expected
    assert from_frames.tau_sys.value == pytest.approx(expected["tau_sys"]["value"])
    assert from_frames.tau_sys_full.value == pytest.approx(expected["tau_sys_full"]["value"])
    assert [b.pairs for b in from_frames.bands] == [b["pairs"] for b in expected["bands"]]
    assert from_frames.judged_docs == human.shape[0] and from_frames.full_docs == full.shape[0]
