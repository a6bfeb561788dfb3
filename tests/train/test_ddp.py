"""DDP with 2 CPU processes (gloo): trains to completion, shards batches, rank 0 alone exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from learned_metrics.export import load_checkpoint

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_ddp_two_cpu_processes(tiny_roberta, ccl_data_dir, tmp_path):
    """Slow on purpose (20-27 s on 2 cores): ``train.py trainer=ddp`` launches two gloo processes that train
    and sync; the launcher, sharding and rank-0-only export are what is under test."""
    run = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "train.py"),
            "experiment=ccl_demo",
            f"model.name_or_path={tiny_roberta}",
            f"data.path={ccl_data_dir}",
            "trainer=ddp",
            "trainer.accelerator=cpu",
            "trainer.devices=2",
            "trainer.max_epochs=1",
            "callbacks.model_summary=null",
            "trainer.enable_progress_bar=false",
            f"paths.checkpoints_dir={tmp_path}",
            f"hydra.run.dir={run}",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("ccl_demo: best checkpoint") == 1  # one summary table: rank 0 only
    card = json.loads((run / "export" / "learned_metric.json").read_text())
    rows = card["data_report"]["rows"]["train"]["total"]
    batch = card["training_config"]["data"]["batch_size"]
    # each rank takes half of the batches: one epoch is ceil(rows / batch / 2) optimizer steps
    assert load_checkpoint(run / "checkpoints" / "last.ckpt")["global_step"] == -(-rows // batch // 2)
    assert {p.name for p in run.iterdir() if p.name.startswith(".")} <= {".hydra"}  # no temp leftovers
    assert oct((run / "export").stat().st_mode & 0o777) != "0o700"
