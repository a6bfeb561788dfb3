"""Fidelity to the reference implementations (nlpstats, Deutsch's code, the papers): numbers computed by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval import correlations
from learned_metrics.meta_eval.system_level import realistic_system_level

# --- system-level bands: Kendall's tau-b over the pairs of a band -----------------------------------------------

# 4 systems, one judged document each; human A=1 B=2 C=2 D=3, metric .1 .2 .3 .25. Pairs: AB, AC, AD, BD
# concordant (P = 4), CD discordant (Q = 1), BC tied by the humans only (T_y = 1), T_x = 0:
# tau-b = 3 / sqrt(5 * 6) = 0.5477 (the reference); (P - Q) / pairs would be 0.5.
SYSTEMS = ["A", "B", "C", "D"]
HUMAN = [1.0, 2.0, 2.0, 3.0]
METRIC = [0.1, 0.2, 0.3, 0.25]
TAU_B = 3 / np.sqrt(30)


def test_band_tau_is_tau_b_through_the_python_api():
    report = realistic_system_level(np.array([HUMAN]), np.array([METRIC]), bands=[(0, float("inf"))], resamples=0)
    band = report.bands[0]
    assert (band.pairs, band.human_ties) == (6, 1)
    assert round(band.tau.value, 4) == 0.5477
    assert band.tau.value == pytest.approx(TAU_B)


def _write_jsonl(path, values):
    path.write_text("".join(json.dumps({"doc_id": "d0", "system_id": s, "score": v}) + "\n"
                            for s, v in zip(SYSTEMS, values, strict=True)))
    return str(path)


def test_band_tau_is_tau_b_through_the_cli(tmp_path):
    out = tmp_path / "out.json"
    code = main(["meta-eval", "system-level", "--human", _write_jsonl(tmp_path / "human.jsonl", HUMAN),
                 "--metric", _write_jsonl(tmp_path / "metric.jsonl", METRIC), "--delta-band", "0", "inf",
                 "--resamples", "0", "--json", str(out)])
    assert code == 0
    band = json.loads(out.read_text())["bands"][0]
    assert band["pairs"] == 6
    assert round(band["tau"]["value"], 4) == 0.5477


# --- band edges: [lo, hi), an edge up to 1e-12 whatever the float sums give ---------------------------------------


def test_a_difference_equal_to_a_band_edge_is_classified_by_its_exact_value():
    # system means over three documents: 0.2, 0.3, 0.4, 0.1. Exactly, (s0, s1), (s1, s2), (s0, s3) differ by 0.1,
    # (s0, s2), (s1, s3) by 0.2 and (s2, s3) by 0.3; in floats the first three come out as 0.09999999999999995,
    # 0.09999999999999998 and 0.10000000000000002, so a plain comparison put two of them below 0.1.
    metric = np.array([[0.1, 0.2, 0.3, 0.0], [0.2, 0.3, 0.4, 0.1], [0.3, 0.4, 0.5, 0.2]])
    gaps = [abs(metric[:, i].mean() - metric[:, j].mean()) for i, j in ((0, 1), (1, 2), (0, 3))]
    assert min(gaps) < 0.1 < max(gaps)  # the float noise this test is about
    human = metric[:, [3, 0, 1, 2]]  # any human order: the bands depend on the metric only
    bands = [(0, 0.1), (0.1, float("inf")), (0.1, 0.2), (0.2, float("inf"))]
    report = realistic_system_level(human, metric, bands=bands, resamples=0)
    assert [band.pairs for band in report.bands] == [0, 6, 3, 3]


# --- Fisher-z intervals at |r| = 1 ----------------------------------------------------------------------------


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("coefficient", ["kendall", "pearson", "spearman"])
def test_fisher_interval_of_a_perfect_correlation_is_the_point(sign, coefficient):
    # 6 documents x 8 systems, metric = sign * human: every correlation is exactly +-1
    human = np.arange(48, dtype=float).reshape(6, 8) ** 1.5
    report = correlations(human, sign * human, coefficient=coefficient, stats=["tau_sys", "tau_sum", "tau_pair"],
                          ci_method="fisher")
    for name in ("tau_sys", "tau_sum", "tau_pair"):
        assert report.stats[name].value == pytest.approx(sign)
        assert report.stats[name].ci == (sign, sign)


# --- one paired-bootstrap p convention: systems' p boot is significance.bootstrap_p ------------------------------


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_systems_p_boot_equals_significance_bootstrap_p_on_the_same_resamples(alternative):
    from learned_metrics.meta_eval.resampling import bootstrap_indices
    from learned_metrics.meta_eval.significance import bootstrap_p
    from learned_metrics.meta_eval.systems import SystemScores, compare_systems

    rng = np.random.default_rng(7)
    n_docs, resamples, seed = 30, 300, 5
    base = rng.normal(size=n_docs)
    grid = np.stack([base, base + 0.15 + rng.normal(0, 0.5, n_docs), base + rng.normal(0, 0.5, n_docs)], axis=1)
    data = SystemScores([f"d{i}" for i in range(n_docs)], ["x", "y", "z"], grid)
    result = compare_systems(data, resamples=resamples, permutations=0, seed=seed, alternative=alternative,
                             correction="none", test="bootstrap")
    draws = [row for idx, _ in bootstrap_indices(n_docs, 1, resamples, "documents", seed) for row in idx]
    column = {"x": 0, "y": 1, "z": 2}
    for pair in result.pairs:
        diff = grid[:, column[pair.a]] - grid[:, column[pair.b]]
        deltas = np.array([diff[idx].mean() for idx in draws])
        assert pair.p_bootstrap == pytest.approx(bootstrap_p(float(diff.mean()), deltas, alternative))
        shifted = deltas - diff.mean()
        exceed = (np.abs(shifted) >= abs(diff.mean()) - 1e-12) if alternative == "two-sided" else (
            shifted >= diff.mean() - 1e-12)
        assert pair.p_bootstrap == pytest.approx((1 + exceed.sum()) / (1 + resamples))


# --- first-person proxy: every first-person pronoun (default) or the paper's "I" only ------------------------------


def test_first_person_counts_all_forms_or_i_only():
    from learned_metrics.text.proxies import first_person_count, text_proxies

    assert first_person_count("I think we did. I am.") == 3  # I, we, I
    assert first_person_count("I think we did. I am.", "i") == 2  # I, I
    # case-insensitive, whole words: a lowercase i and the I of I'm count; "Mine" the pronoun counts, "Mineral",
    # "Iowa" and "Ii" do not
    text = "i guess I'm right; Mine is ours. Mineral water from Iowa, chapter Ii."
    assert first_person_count(text) == 4  # i, I('m), Mine, ours
    assert first_person_count(text, "i") == 2  # i, I('m)
    assert text_proxies(text, proxies=["first_person"], first_person="i") == {"first_person": 2.0}
    with pytest.raises(UserError, match="first-person"):
        first_person_count(text, "me")


def test_first_person_option_through_the_api_and_the_cli(tmp_path):
    from learned_metrics.meta_eval.confounders import confounders

    texts = ["I think we did. I am.", "We are here.", "i know, my friend", "no pronoun at all", "I, me and I"]
    rows = [{"generation": t, "label": k % 2, "score": float(k)} for k, t in enumerate(texts)]
    all_forms = [3, 1, 2, 0, 3]
    i_only = [2, 0, 1, 0, 2]
    for form, counts in (("all", all_forms), ("i", i_only)):
        report = confounders(rows, proxies=["first_person"], first_person=form, resamples=0)
        expected = scipy_stats.kendalltau(range(5), counts).statistic
        assert report.correlation("all", "score", "first_person").tau.value == pytest.approx(expected)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for form, counts in (("all", all_forms), ("i", i_only)):
        out = tmp_path / f"{form}.json"
        assert main(["meta-eval", "confounders", "--input", str(path), "--proxies", "first_person",
                     "--first-person", form, "--resamples", "0", "--json", str(out)]) == 0
        cell = json.loads(out.read_text())["scopes"]["all"]["score"]["first_person"]
        assert cell["value"] == pytest.approx(scipy_stats.kendalltau(range(5), counts).statistic)
