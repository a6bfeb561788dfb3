"""Bias matrix on a hand-made example, AUC against sklearn, shuffle-test accuracy, plot files."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import (
    auc_by_group,
    bias_matrix,
    plot_bias_matrix,
    plot_length_gap,
    plot_roc_curves,
    plot_score_histograms,
    roc_points,
    shuffle_test,
)
from learned_metrics.meta_eval.shuffle_test import gap_buckets

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Systems A, B, C, D; documents d1..d4. Mean human: A 2.25 > B 2.0 > C 1.5 > D 0.
HUMAN = np.array([[3, 2, 1, 0], [3, 1, 2, 0], [1, 3, 2, 0], [2, 2, 1, 0]], dtype=float)
METRIC = np.array([[0.9, 0.5, 0.1, 0.0], [0.2, 0.8, 0.3, 0.0], [0.5, 0.5, 0.9, 0.0], [0.4, 0.1, 0.6, 0.95]])


def assert_png(path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 2000


def test_bias_matrix_cells_on_a_hand_made_example():
    # Shuffle the columns: the matrix must order systems by mean human score itself.
    order = [2, 0, 3, 1]
    matrix = bias_matrix(HUMAN[:, order], METRIC[:, order], [["A", "B", "C", "D"][i] for i in order])
    assert matrix.systems == ["A", "B", "C", "D"]
    np.testing.assert_allclose(matrix.mean_human, [2.25, 2.0, 1.5, 0.0])
    nan = np.nan
    expected_tau = [
        [nan, 0.0, -1 / 3, 0.5],  # A over B: d1 right, d2 wrong; A over C: 1 of 3; A over D: 3 of 4
        [-1.0, nan, -1 / 3, 0.5],  # B over A on d3: metric tie -> wrong; B over D: 3 of 4
        [1.0, -1.0, nan, 0.5],  # C over A on d3: right; C over B on d2: wrong
        [nan, nan, nan, nan],  # the humans never prefer D: undefined cells
    ]
    expected_pairs = [[0, 2, 3, 4], [1, 0, 3, 4], [1, 1, 0, 4], [0, 0, 0, 0]]
    np.testing.assert_allclose(matrix.tau, expected_tau)
    np.testing.assert_array_equal(matrix.pairs, expected_pairs)
    as_json = matrix.to_json()
    assert as_json["tau"][3] == [None, None, None, None]
    assert as_json["tau"][0][1] == 0.0 and as_json["pairs"][0][3] == 4


def test_auc_per_group_equals_sklearn_and_mean_is_unweighted():
    rng = np.random.default_rng(0)
    groups = rng.choice(["frank", "qags_x", "paws"], 400)
    labels = rng.integers(0, 2, 400)
    scores = np.round(rng.normal(size=400) + labels, 1)  # rounded: ties across classes
    report = auc_by_group(scores, labels, groups, resamples=200, seed=0)
    expected = {g: roc_auc_score(labels[groups == g], scores[groups == g]) for g in set(groups)}
    for group in report.groups:
        assert group.auc.value == pytest.approx(expected[group.group], abs=1e-12)
        low, high = group.auc.ci
        assert low < group.auc.value < high
    assert report.mean.value == pytest.approx(np.mean(list(expected.values())))
    assert report.mean.n == 3 and report.mean.skipped == 0


def test_intra_system_auc_skips_single_class_systems():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=90)
    systems = np.array(["s1", "s2", "s3"] * 30)
    labels = np.tile([0, 0, 1, 1, 1, 0], 15)  # s1 and s2 get both classes
    labels[systems == "s3"] = 1  # s3 has one class only
    report = auc_by_group(scores, labels, None, systems, resamples=50, seed=0)
    intra = report.groups[0].intra_system
    expected = np.mean([roc_auc_score(labels[systems == s], scores[systems == s]) for s in ("s1", "s2")])
    assert intra.value == pytest.approx(expected) and (intra.n, intra.skipped) == (2, 1)


def test_single_class_group_is_skipped_in_the_mean():
    scores = np.array([0.1, 0.9, 0.4, 0.3, 0.2])
    labels = np.array([0, 1, 1, 1, 1])
    report = auc_by_group(scores, labels, ["a", "a", "b", "b", "b"], resamples=20)
    assert report.groups[1].auc.value is None
    assert (report.mean.value, report.mean.n, report.mean.skipped) == (1.0, 1, 1)


def test_shuffle_accuracy_counts_ties_as_half_and_resamples_pair_ids():
    original = np.array([0.9, 0.5, 0.2, 0.7, 0.7])
    shuffled = np.array([0.1, 0.5, 0.3, 0.2, 0.6])
    report = shuffle_test(original, shuffled, pair_index=[0, 1, 2, 3, 3], resamples=200, seed=0)
    assert report.accuracy.value == pytest.approx((1 + 0.5 + 0 + 1 + 1) / 5)
    assert report.ties == 1 and report.pair_ids == 4 and report.accuracy.n == 5
    again = shuffle_test(original, shuffled, pair_index=[0, 1, 2, 3, 3], resamples=200, seed=0)
    assert report.accuracy.ci == again.accuracy.ci


def test_length_gap_buckets_are_centred_and_clamped():
    gaps = np.array([-500, -195, -190, -11, -10, 0, 9.9, 10, 29, 189, 190, 1000])
    np.testing.assert_array_equal(gap_buckets(gaps), [-200, -200, -180, -20, 0, 0, 0, 20, 20, 180, 200, 200])
    report = shuffle_test(np.ones(4), np.array([0.0, 2.0, 0.0, 1.0]), length_gap=[5, -5, 300, 0], resamples=0,
                          min_bucket_pairs=0)  # every 20-character bucket, none merged
    by_gap = {b.gap: b for b in report.buckets}
    assert by_gap[0].pairs == 3 and by_gap[0].accuracy == pytest.approx(0.5)
    assert by_gap[200].pairs == 1 and by_gap[200].low == 190 and by_gap[200].high is None
    assert by_gap[-200].low is None and by_gap[-40].accuracy is None
    assert len(report.buckets) == 21


@pytest.mark.parametrize("ties", [False, True])
def test_roc_points_equal_sklearn_and_enclose_the_auc(ties):
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 300)
    scores = rng.normal(size=300) + labels
    if ties:
        scores = np.round(scores, 1)  # many tied scores: diagonal steps
    fpr, tpr = roc_points(scores, labels)
    expected_fpr, expected_tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, expected_fpr)
    np.testing.assert_allclose(tpr, expected_tpr)
    assert np.trapezoid(tpr, fpr) == pytest.approx(roc_auc_score(labels, scores))
    with pytest.raises(UserError, match="both labels"):
        roc_points(scores[labels == 1], labels[labels == 1])


@pytest.mark.slow
def test_plots_are_valid_png_files(tmp_path):
    plot_bias_matrix(bias_matrix(HUMAN, METRIC, list("ABCD")), tmp_path / "bias.png")
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 60)
    scores = rng.normal(size=60) + labels
    groups = ["x"] * 30 + ["y"] * 30
    plot_score_histograms(scores, labels, groups, tmp_path / "hist.png", {"x": 0.8, "y": None})
    # a group with one label has no curve (its AUC is undefined) and is left out, not an error
    plot_roc_curves(np.r_[scores, 0.5], np.r_[labels, 1], groups + ["one-label"], tmp_path / "roc.png", {"x": 0.8})
    report = shuffle_test(rng.normal(size=50) + 1, rng.normal(size=50), length_gap=rng.integers(-250, 250, 50))
    plot_length_gap(report, tmp_path / "gap.png")
    for name in ("bias.png", "hist.png", "roc.png", "gap.png"):
        assert_png(tmp_path / name)
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("spelling", [["1", "0"], ["yes", "no"], [True, False], [1.0, 0.0]],
                         ids=["text", "yes-no", "bool", "float"])
def test_auc_api_reads_labels_as_the_files_do(spelling):
    """The API takes the label spellings the file readers take (validate.binary_label); the same AUC as 1/0."""
    from learned_metrics.meta_eval import auc_by_group

    scores = np.linspace(0, 1, 20)
    ones = np.array([1, 0] * 10)
    expected = auc_by_group(scores, ones, ["g"] * 20, resamples=0).mean.value
    labels = [spelling[0] if y else spelling[1] for y in ones]
    assert auc_by_group(scores, labels, ["g"] * 20, resamples=0).mean.value == expected


def test_auc_api_refuses_a_label_naming_its_position():
    from learned_metrics.errors import UserError
    from learned_metrics.meta_eval import auc_by_group

    with pytest.raises(UserError, match=r"row 3, field 'labels': expected a 0/1 label, got 'maybe'"):
        auc_by_group([0.1, 0.2, 0.3], [1, 0, "maybe"], ["g"] * 3, resamples=0)
