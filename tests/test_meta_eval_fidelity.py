"""Fidelity to the reference implementations (nlpstats, Deutsch's code, the papers): numbers computed by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from learned_metrics.cli import main
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
