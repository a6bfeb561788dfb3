"""The rest of Deutsch et al. (2021)'s toolkit: Fisher-z CIs, other confidence levels, the paired bootstrap
test, two-sided tests, Bonferroni/Holm correction and Williams' test on |r|, each against an independent
computation (scipy or a plain loop written here)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import compare, correlations, williams_p
from learned_metrics.meta_eval.correlations import StatisticsEngine, bootstrap_distribution
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.report import correlation_report
from learned_metrics.meta_eval.resampling import bootstrap_indices
from learned_metrics.meta_eval.significance import bootstrap_deltas, bootstrap_p, permutation_deltas, permutation_p


def synthetic(seed: int = 0, n_docs: int = 30, n_systems: int = 8):
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1, 1, n_systems)[None, :] + rng.normal(0, 0.8, (n_docs, n_systems))
    human = np.rint(quality * 2) / 2  # ties
    return rng, human, quality


# -- multiple comparisons -----------------------------------------------------------------------


def holm_by_hand(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def test_holm_and_bonferroni_equal_a_hand_computation_and_skip_undefined_tests():
    p = list(np.random.default_rng(3).uniform(0, 0.2, 9)) + [0.04, 0.04]  # ties
    assert adjust_p_values(p, "holm") == pytest.approx(holm_by_hand(p))
    assert adjust_p_values(p, "bonferroni") == pytest.approx([min(1.0, v * len(p)) for v in p])
    assert adjust_p_values([0.01, None, 0.03], "bonferroni") == pytest.approx([0.02, None, 0.06])
    assert adjust_p_values([0.01, 0.5], "none") == [0.01, 0.5]
    with pytest.raises(UserError, match="unknown correction"):
        adjust_p_values([0.1], "fdr")


# -- confidence intervals -----------------------------------------------------------------------


def test_fisher_interval_of_pooled_pearson_equals_scipy_confidence_interval():
    rng, human, quality = synthetic(4)
    metric = quality + rng.normal(0, 0.7, quality.shape)
    metric[2, 3] = np.nan
    report = correlations(human, metric, coefficient="pearson", stats=["tau_sum", "tau_sys"], ci_method="fisher",
                          confidence=0.9)
    valid = ~np.isnan(metric)
    expected = scipy_stats.pearsonr(metric[valid], human[valid]).confidence_interval(0.9)
    assert report.stats["tau_sum"].ci == pytest.approx((expected.low, expected.high))
    assert report.stats["tau_sum"].resamples == 0
    # tau_sys: n = systems; Kendall would use Bonett & Wright's b = 4, c = sqrt(0.437).
    r = report.stats["tau_sys"].value
    half = scipy_stats.norm.ppf(0.95) / np.sqrt(human.shape[1] - 3)
    assert report.stats["tau_sys"].ci == pytest.approx((np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)))
    kendall = correlations(human, metric, stats=["tau_sys", "acc_pair"], ci_method="fisher")
    r = kendall.stats["tau_sys"].value
    half = scipy_stats.norm.ppf(0.975) * np.sqrt(0.437) / np.sqrt(human.shape[1] - 4)
    assert kendall.stats["tau_sys"].ci == pytest.approx((np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)))
    assert kendall.stats["acc_pair"].ci is None  # not a correlation


def test_confidence_level_sets_the_bootstrap_percentiles():
    rng, human, quality = synthetic(5)
    metric = quality + rng.normal(0, 0.7, quality.shape)
    report = correlations(human, metric, stats=["tau_pair"], resamples=300, seed=2, confidence=0.8)
    engine = StatisticsEngine(metric[None], human[None], np.ones((1, *human.shape), bool), "kendall", ["tau_pair"])
    samples = bootstrap_distribution(engine, *human.shape, 300, "both", 2)["tau_pair"]
    assert report.stats["tau_pair"].ci == pytest.approx(tuple(np.percentile(samples, [10, 90])))
    wide = correlations(human, metric, stats=["tau_pair"], resamples=300, seed=2, confidence=0.99)
    assert wide.stats["tau_pair"].ci[0] < report.stats["tau_pair"].ci[0]
    for bad in (0.0, 1.0, 95):
        with pytest.raises(UserError, match="confidence"):
            correlations(human, metric, confidence=bad)


# -- paired bootstrap test -----------------------------------------------------------------------


def test_paired_bootstrap_deltas_equal_explicitly_resampled_matrices():
    rng, human, quality = synthetic(6, n_docs=9, n_systems=6)
    a = quality + rng.normal(0, 0.5, quality.shape)
    b = quality + rng.normal(0, 1.5, quality.shape)
    deltas = bootstrap_deltas(human, a, b, coefficient="pearson", stats=["tau_sum"], resamples=15, resample="both",
                              seed=7)["tau_sum"]
    expected = []
    for doc_idx, sys_idx in bootstrap_indices(*human.shape, 15, "both", 7):
        for d, s in zip(doc_idx, sys_idx, strict=True):
            h, ra, rb = (m[d][:, s].ravel() for m in (human, a, b))
            expected.append(scipy_stats.pearsonr(ra, h)[0] - scipy_stats.pearsonr(rb, h)[0])
    assert deltas == pytest.approx(np.array(expected))


def test_paired_bootstrap_test_known_answers():
    rng, human, quality = synthetic(7)
    metric = quality + rng.normal(0, 0.5, quality.shape)
    same = compare(human, {"a": metric, "b": metric.copy()}, permutations=50, resamples=200, stats=["tau_pair"])
    for c in same.comparisons["tau_pair"]:
        assert c.p_bootstrap == 1.0 and c.delta_ci[0] <= 0 <= c.delta_ci[1]
    noise = rng.normal(size=human.shape)
    k = 200
    strong = compare(human, {"human": human, "noise": noise}, permutations=50, resamples=k, stats=["tau_pair"])
    forward, backward = strong.comparisons["tau_pair"]
    assert forward.p_bootstrap == pytest.approx(1 / (1 + k)) and backward.p_bootstrap == pytest.approx(1.0)
    assert forward.delta_ci[0] > 0 and backward.delta_ci == pytest.approx((-forward.delta_ci[1], -forward.delta_ci[0]))


def test_bootstrap_p_shifts_the_resamples_to_the_null():
    deltas = np.array([0.1, 0.25, 0.3, 0.45, np.nan, -0.05])
    # one-sided: delta* - 0.2 >= 0.2  <=>  delta* >= 0.4: one of five defined
    assert bootstrap_p(0.2, deltas) == pytest.approx((1 + 1) / (1 + 5))
    # two-sided: |delta* - 0.2| >= 0.2: 0.45 and -0.05
    assert bootstrap_p(0.2, deltas, "two-sided") == pytest.approx((1 + 2) / (1 + 5))
    assert bootstrap_p(float("nan"), deltas) is None


# -- two-sided tests and Williams on |r| ---------------------------------------------------------------


def test_two_sided_permutation_p_counts_both_tails_and_is_symmetric():
    rng, human, quality = synthetic(8)
    a = quality + rng.normal(0, 0.6, quality.shape)
    b = quality + rng.normal(0, 0.9, quality.shape)
    observed, deltas = permutation_deltas(human, a, b, coefficient="kendall", stats=["tau_pair"], permutations=300,
                                          swap="cell", seed=1)
    d, o = deltas["tau_pair"], observed["tau_pair"]
    expected = (1 + int(sum(abs(x) >= abs(o) - 1e-12 for x in d))) / (1 + len(d))
    assert permutation_p(o, d, "two-sided")[0] == pytest.approx(expected)
    report = compare(human, {"a": a, "b": b}, stats=["tau_pair"], permutations=300, resamples=100,
                     alternative="two-sided", seed=1)
    forward, backward = report.comparisons["tau_pair"]
    assert forward.p_permutation == backward.p_permutation == pytest.approx(expected)
    assert forward.p_bootstrap == backward.p_bootstrap
    assert forward.p_williams == pytest.approx(backward.p_williams)


def test_williams_on_absolute_correlations_and_two_sided():
    r12, r13, r23, n = 0.62, 0.41, 0.35, 40
    one_sided = williams_p(r12, r13, r23, n)
    assert williams_p(-r12, r13, -r23, n, absolute=True) == pytest.approx(one_sided)
    assert williams_p(-r12, -r13, r23, n, absolute=True) == pytest.approx(one_sided)
    assert williams_p(r12, r13, r23, n, alternative="two-sided") == pytest.approx(2 * one_sided)
    assert williams_p(r13, r12, r23, n, alternative="two-sided") == pytest.approx(2 * one_sided)
    # A metric where lower is better: signed, it loses; on |r| (the default in compare) it wins.
    rng, human, quality = synthetic(9)
    better_reversed = -(quality + rng.normal(0, 0.3, quality.shape))
    weaker = quality + rng.normal(0, 1.2, quality.shape)
    metrics = {"reversed": better_reversed, "weaker": weaker}
    by_abs = compare(human, metrics, stats=["tau_sum"], permutations=20, resamples=0).comparisons["tau_sum"][0]
    signed = compare(human, metrics, stats=["tau_sum"], permutations=20, resamples=0,
                     williams="signed").comparisons["tau_sum"][0]
    assert by_abs.p_williams < 0.01 < 0.99 < signed.p_williams


@pytest.mark.slow
def test_correction_adjusts_each_test_over_the_pairs_of_a_statistic():
    rng, human, quality = synthetic(10)
    metrics = {name: quality + rng.normal(0, noise, quality.shape) for name, noise in
               (("a", 0.3), ("b", 0.6), ("c", 1.0))}
    plain = compare(human, metrics, stats=["tau_pair"], permutations=100, resamples=100, correction="none")
    holm = compare(human, metrics, stats=["tau_pair"], permutations=100, resamples=100)  # Holm by default
    items, corrected = plain.comparisons["tau_pair"], holm.comparisons["tau_pair"]
    assert len(items) == 6  # ordered pairs: the one-sided family
    for test in ("permutation", "bootstrap", "williams"):
        expected = holm_by_hand([c.p(test) for c in items])
        assert [c.p(test) for c in corrected] == pytest.approx(expected)
        assert [c.p(test, adjusted=False) for c in corrected] == pytest.approx([c.p(test) for c in items])
    two = compare(human, metrics, stats=["tau_pair"], permutations=100, resamples=0, alternative="two-sided",
                  correction="bonferroni").comparisons["tau_pair"]
    for c in two:  # three unordered pairs
        assert c.p("permutation") == pytest.approx(min(1.0, 3 * c.p("permutation", adjusted=False)))


# -- report and CLI ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_report_markers_follow_the_chosen_test_and_correction():
    rng, human, quality = synthetic(11)
    metrics = {"good": quality + rng.normal(0, 0.3, quality.shape), "noise": rng.normal(size=quality.shape)}
    for test in ("permutation", "bootstrap", "williams"):
        table = correlation_report(human, metrics, stats=["tau_sum"], resamples=100, permutations=100, test=test)
        assert table.cell("good", "tau_sum").beats == [2], test
        assert table.cell("noise", "tau_sum").beats == []
        assert table.settings["test"] == test
    fisher = correlation_report(human, metrics, stats=["tau_sum"], ci_method="fisher", confidence=0.9,
                                permutations=50)
    assert "90% Fisher-z" in fisher.caption


def test_cli_compare_and_report_take_the_new_options(tmp_path, capsys):
    rng, human, quality = synthetic(12, n_docs=12, n_systems=5)
    good = quality + rng.normal(0, 0.4, quality.shape)
    weak = quality + rng.normal(0, 1.5, quality.shape)
    files = {}
    for name, grid in (("human", human), ("good", good), ("weak", weak)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"doc_id": f"d{d}", "system_id": f"s{s}", "score": float(grid[d, s])}) + "\n"
                                for d in range(grid.shape[0]) for s in range(grid.shape[1])))
        files[name] = str(path)
    out = tmp_path / "compare.json"
    code = main(["meta-eval", "compare", "--human", files["human"], "--metric", files["good"], "--metric",
                 files["weak"], "--stats", "tau_sum", "--permutations", "50", "--bootstrap-resamples", "50",
                 "--alternative", "two-sided", "--correction", "holm", "--confidence", "0.9", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())["tau_sum"][0]
    assert set(data["p_adjusted"]) == {"permutation", "bootstrap", "williams"}
    assert data["delta_ci"] is not None and data["p_bootstrap"] is not None
    table = tmp_path / "table.json"
    code = main(["meta-eval", "report", "--human", files["human"], "--metric", files["good"], "--metric",
                 files["weak"], "--stats", "tau_sum,tau_sys", "--ci-method", "fisher", "--test", "williams",
                 "--correction", "bonferroni", "--permutations", "20", "--json", str(table)])
    assert code == 0
    settings = json.loads(table.read_text())["settings"]
    assert settings["ci_method"] == "fisher" and settings["test"] == "williams"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["meta-eval", "correlations", "--human", files["human"], "--metric", files["good"], "--confidence", "1.5"])
    err = capsys.readouterr().err
    assert exit_info.value.code != 0 and "--confidence" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_results_do_not_depend_on_the_number_of_worker_processes():
    rng, human, quality = synthetic(13, n_docs=15, n_systems=5)
    metrics = {name: quality + rng.normal(0, noise, quality.shape) for name, noise in
               (("a", 0.3), ("b", 0.6), ("c", 1.0))}
    options = {"permutations": 60, "resamples": 60, "correction": "holm"}
    serial = compare(human, metrics, workers=1, **options).to_json()
    forked = compare(human, metrics, workers=2, **options).to_json()
    assert forked == serial
    one = correlation_report(human, metrics, resamples=40, permutations=40, workers=1).to_json()
    two = correlation_report(human, metrics, resamples=40, permutations=40, workers=3).to_json()
    assert one == two
    with pytest.raises(UserError, match="workers"):
        compare(human, metrics, workers=0, **options)
