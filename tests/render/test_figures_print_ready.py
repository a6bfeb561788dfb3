"""Figures pass conference PDF checks: fonts embedded as TrueType (pdf.fonttype 42), never Type 3."""

from __future__ import annotations

import numpy as np
import pytest

from learned_metrics.render.figures import plot_roc_curves, plot_score_histograms


@pytest.mark.parametrize("plot", [plot_roc_curves, plot_score_histograms], ids=["roc", "histograms"])
def test_pdf_figures_embed_truetype_fonts(tmp_path, plot):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 60)
    scores = labels + rng.normal(0, 1, 60)
    path = plot(scores, labels, ["a"] * 30 + ["b"] * 30, tmp_path / "figure.pdf")
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and b"/FontFile2" in data  # an embedded TrueType font program
    assert b"/Subtype /Type3" not in data


def test_the_setting_does_not_leak_into_the_callers_matplotlib(tmp_path):
    import matplotlib

    before = matplotlib.rcParams["pdf.fonttype"]
    plot_roc_curves(np.array([0.1, 0.9]), np.array([0, 1]), ["a", "a"], tmp_path / "roc.pdf")
    assert matplotlib.rcParams["pdf.fonttype"] == before
