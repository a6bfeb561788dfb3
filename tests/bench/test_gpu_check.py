"""bench/gpu_check.py: its --dry-run (the GPU script's code path on CPU, tiny shapes) writes every figure the GPU
run would, and the peak table finds the GPUs it names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu_check.py"


def _gpu_check():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return gpu_check


@pytest.mark.parametrize(("name", "peak"), [
    ("NVIDIA H100 80GB HBM3", 989.0),  # the SXM part's name
    ("NVIDIA H100 PCIe", 756.0),
    ("NVIDIA H200", 989.0),
    ("NVIDIA A100-SXM4-80GB", 312.0),
    ("NVIDIA A100 80GB PCIe", 312.0),
    ("NVIDIA L40S", 362.0),
    ("NVIDIA A10G", 125.0),
    ("NVIDIA H100 NVL", None),  # named, peak not listed
    ("NVIDIA GeForce RTX 4090", None),
    ("CPU (x86_64)", None),
])
def test_peak_lookup_by_device_name(name, peak):
    gpu_check = _gpu_check()
    assert gpu_check.peak_bf16_tflops(name) == peak
    if peak is None:
        assert gpu_check.peak_fraction(100.0, name) is None
    else:
        assert gpu_check.peak_fraction(peak / 2, name) == pytest.approx(0.5)
    assert gpu_check.peak_fraction(None, name) is None


@pytest.mark.slow
def test_dry_run_writes_every_figure(tmp_path, capsys, monkeypatch):
    """The script's ``main(argv)`` in this process (its code path is under test, not an interpreter start-up, which
    cost 3 s of the 9): what it changes of the process, transformers' verbosity and bars and torch's generator, is
    put back."""
    import torch
    from transformers.utils import logging as hf_logging

    gpu_check = _gpu_check()
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "gpu_check.json"
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    try:
        with torch.random.fork_rng():
            code = gpu_check.main(["--dry-run", "--json", str(out)])
    finally:
        hf_logging.set_verbosity(verbosity)
        (hf_logging.enable_progress_bar if bars else hf_logging.disable_progress_bar)()
    printed = capsys.readouterr()
    assert code == 0, printed.err[-3000:] + printed.out[-3000:]
    assert "## GPU check" in printed.out  # the Markdown block for bench/README.md
    report = json.loads(out.read_text())
    for key in ("command", "dry_run", "budget_s", "elapsed_s", "device", "versions", "machine", "precisions",
                "mc_samples", "scoring_options", "models", "inputs", "cases", "agreement", "overlap", "compile",
                "multi_gpu", "skipped"):
        assert key in report, key
    assert report["dry_run"] is True and report["mc_samples"] == 3
    assert {"torch", "cuda", "transformers", "python"} <= set(report["versions"])
    assert report["device"]["name"] and report["device"]["peak_bf16_tflops"] is None  # CPU: no fraction

    models = report["models"]
    assert models["deberta-v3-large-shaped"]["model_type"] == "deberta-v2"
    assert models["deberta-v3-large-shaped"]["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    assert models["roberta-large-shaped"]["model_type"] == "roberta"
    assert [v.lower() for v in models["roberta-large-shaped"]["id2label"].values()] == [
        "contradiction", "neutral", "entailment"]
    assert all(m["hidden_size"] == 32 and m["num_hidden_layers"] == 2 and m["saved_dtype"] == "float32"
               for m in models.values())
    assert report["inputs"]["short"]["mean_tokens"] < 150 < 380 < report["inputs"]["article"]["mean_tokens"] <= 512

    measured = [c for c in report["cases"] if c["status"] == "ok"]
    for model in models:
        for length in ("short", "article"):
            for passes in (1, 3):
                case = next(c for c in measured if (c["model"], c["length"], c["setting"], c["mc_samples"])
                            == (model, length, "fp32", passes))
                assert case["rows"] > 0 and case["rows_per_s"] > 0 and case["tokens_per_s"] > 0
                assert case["tflops"] > 0 and case["peak_fraction"] is None
                busy = case["gpu_busy_share"]
                assert (isinstance(busy, float) and 0 <= busy <= 1) or busy.startswith("n/a")
    for case in report["cases"]:  # every case has every key, measured or not
        assert set(case) >= {"rows_per_s", "tokens_per_s", "tflops", "peak_fraction", "gpu_busy_share", "status"}
        assert case["status"] == "ok" or case["status"].startswith(("skipped", "not available"))

    assert len(report["agreement"]) == 2 * 2 * 2  # models x lengths x (deterministic, MC)
    for row in report["agreement"]:
        assert {"max_abs_diff", "mean_abs_diff", "spearman", "same_order_pairs_share", "identical_ranking",
                "rows", "status"} <= set(row)
        if row["status"] == "ok":
            assert 0 <= row["mean_abs_diff"] <= row["max_abs_diff"] < 0.05  # bf16 vs fp32, tiny models
    if "bf16" in report["precisions"]:
        assert any(row["status"] == "ok" for row in report["agreement"])
    for row in report["overlap"] + report["compile"]:
        assert row["status"] == "ok" or row["status"].startswith(("n/a", "not available", "skipped"))
        if row["status"] == "ok":
            assert row["speedup"] > 0
    assert report["multi_gpu"]["status"] == "skipped: --dry-run"


def test_timings_and_agreement_helpers():
    from types import SimpleNamespace

    import numpy as np

    gpu_check = _gpu_check()
    assert gpu_check.timings_of(SimpleNamespace(), SimpleNamespace()) is None  # a scorer without timings: n/a
    assert gpu_check.timings_of(SimpleNamespace(timings={}), SimpleNamespace()) is None
    timings = {"tokenize_seconds": 1.0, "forward_seconds": 3.0, "wait_seconds": 1.0, "wall_seconds": 4.0}
    assert gpu_check.timings_of(SimpleNamespace(timings=timings), None) == timings
    assert gpu_check.busy_share(timings) == pytest.approx(0.75)
    same = gpu_check.agreement(np.array([0.1, 0.5, 0.3, 0.9]), np.array([0.1, 0.5, 0.3, 0.9]))
    assert same["max_abs_diff"] == 0 and same["spearman"] == pytest.approx(1) and same["identical_ranking"]
    swapped = gpu_check.agreement(np.array([0.1, 0.5, 0.3, 0.9]), np.array([0.1, 0.3, 0.5, 0.9]))
    assert swapped["max_abs_diff"] == pytest.approx(0.2) and not swapped["identical_ranking"]
    assert swapped["same_order_pairs_share"] == pytest.approx(5 / 6)
