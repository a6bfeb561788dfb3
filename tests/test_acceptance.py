"""The commands users type, end to end as subprocesses: build a set, train with overrides, score the export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from learned_metrics.cli import main
from learned_metrics.data.demo import write_anli_layout, write_coherence_documents

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    proc = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_coherence_prep_train_override_export_score(tmp_path, tiny_roberta):
    """Slow on purpose (25-45 s on 2 cores): three real processes as a user types them (data prep,
    ``train.py`` with overrides, ``learned-metrics score``), each paying interpreter and torch start-up, and a
    real training run; the console scripts and Hydra's command line are what is under test."""
    docs = write_coherence_documents(tmp_path / "docs.jsonl", 30, seed=3)
    _run("data_prep/build_shuffle_set.py", "--source", f"jsonl:{docs}", "--output", str(tmp_path / "DIR"))
    run = tmp_path / "run"
    _run(
        "train.py",
        "experiment=ccl_cnndm",
        f"data.path={tmp_path / 'DIR'}",
        f"model.name_or_path={tiny_roberta}",
        "trainer=cpu",
        "trainer.max_epochs=1",
        "logger=csv",
        f"hydra.run.dir={run}",
    )
    card = json.loads((run / "export" / "learned_metric.json").read_text())
    assert card["experiment"] == "ccl_cnndm" and card["base_model"] == str(tiny_roberta)
    assert (run / "csv" / "metrics.csv").exists() and (run / ".hydra" / "config.yaml").exists()

    sentences = [["First, Ana left.", "Then she came back.", "Finally, she slept."], ["B came.", "A left."]]
    (tmp_path / "text.jsonl").write_text("".join(json.dumps({"text": "\n".join(s)}) + "\n" for s in sentences))
    (tmp_path / "sents.jsonl").write_text("".join(json.dumps({"sentences": s}) + "\n" for s in sentences))
    scores = []
    for name in ("text", "sents"):
        argv = ["score", "coherence", "--model", str(run / "export"), "--input", str(tmp_path / f"{name}.jsonl"),
                "--output", str(tmp_path / f"{name}.out.jsonl")]
        if name == "text":  # the console script as a user types it
            _run("-m", "learned_metrics.cli", *argv)
        else:  # the same command in this process: no second interpreter and torch start-up
            assert main(argv) == 0
        scored = [json.loads(line) for line in (tmp_path / f"{name}.out.jsonl").read_text().splitlines()]
        assert len(scored) == 2 and all(0.0 <= r["score"] <= 1.0 for r in scored)
        scores.append([r["score"] for r in scored])
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)  # same joiner as training either way


def test_nli_official_layout_prep_train_override_export_score(tmp_path, tiny_deberta_nli):
    """Slow on purpose (20-30 s on 2 cores): data prep, training and scoring as three real processes on the
    official ANLI layout; the console scripts and Hydra's command line are what is under test."""
    layout = write_anli_layout(tmp_path / "anli_v1.0", {"train": 20, "dev": 6, "test": 6}, seed=1)
    _run("data_prep/build_anli_augmented.py", "--source", f"jsonl:{layout}", "--output", str(tmp_path / "OUT"))
    run = tmp_path / "run"
    _run(
        "train.py",
        "experiment=nli_anli_aug",
        f"data.path={tmp_path / 'OUT'}",
        f"model.name_or_path={tiny_deberta_nli}",
        "trainer=cpu",
        "trainer.max_steps=2",
        "logger=csv",
        f"hydra.run.dir={run}",
    )
    card = json.loads((run / "export" / "learned_metric.json").read_text())
    assert card["kind"] == "faithfulness" and card["augmentation"]["phrases"] == "dialogue"
    assert card["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}

    (tmp_path / "true.csv").write_text("grounding,generated_text\nThe sky is blue.,The sky is blue.\n")
    _run(
        "-m",
        "learned_metrics.cli",
        "score",
        "faithfulness",
        "--model",
        str(run / "export"),
        "--input",
        str(tmp_path / "true.csv"),
        "--output",
        str(tmp_path / "scored.csv"),
        "--hypothesis-field",
        "generated_text",
    )
    header, row = (tmp_path / "scored.csv").read_text().splitlines()[:2]
    assert {"score", "prob_entailment", "prob_neutral", "prob_contradiction"} <= set(header.split(","))
