"""The length-gap figure's legend says what its bars are: the CI level and resamples of the report it draws."""

from __future__ import annotations

import numpy as np
import pytest

from learned_metrics.meta_eval.shuffle_test import shuffle_test
from learned_metrics.render.figures import length_gap_figure


def legend_texts(resamples: int, confidence: float) -> list[str]:
    rng = np.random.default_rng(3)
    report = shuffle_test(rng.normal(size=60) + 1, rng.normal(size=60), length_gap=rng.integers(-250, 250, 60),
                          resamples=resamples, confidence=confidence)
    fig = length_gap_figure(report)
    return [text.get_text() for ax in fig.axes if ax.get_legend() for text in ax.get_legend().get_texts()]


@pytest.mark.parametrize(("confidence", "shown"), [(0.95, "95%"), (0.9, "90%"), (0.99, "99%")])
def test_the_legend_names_the_reports_ci_level(confidence, shown):
    texts = legend_texts(50, confidence)
    assert f"Accuracy, {shown} bootstrap CI" in texts, texts


def test_without_resamples_the_legend_says_there_are_no_cis():  # control
    texts = legend_texts(0, 0.95)
    assert "Accuracy (no CIs: 0 resamples)" in texts and not any("bootstrap CI" in t for t in texts), texts
