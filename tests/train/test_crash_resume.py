"""A training process killed with SIGKILL mid-epoch resumes to the same result as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import compose_train_config

from learned_metrics.export import load_checkpoint
from learned_metrics.train.run import train

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _overrides(model: Path, data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "experiment=ccl_demo",
        f"model.name_or_path={model}",
        f"data.path={data}",
        "data.batch_size=2",  # 64 steps per epoch: plenty of room to die mid-epoch
        "model.lr=3e-3",
        "trainer.max_epochs=2",
        "trainer.deterministic=true",
        "callbacks.last_checkpoint.every_n_train_steps=5",
        "callbacks.model_summary=null",
        "trainer.enable_progress_bar=false",
        f"paths.checkpoints_dir={tmp_path}",
        *extra,
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "PYTHONUNBUFFERED": "1"}


def _card(run_dir: Path) -> dict:
    return json.loads((run_dir / "export" / "learned_metric.json").read_text())


def test_sigkill_mid_epoch_then_resume_matches_uninterrupted_run(tiny_roberta, ccl_data_dir, tmp_path):
    """Slow on purpose (20-25 s on 2 cores): a reference training run, a real ``train.py`` process killed with
    SIGKILL mid-epoch, and the resumed run; only a real process can be killed that way."""
    common = _overrides(tiny_roberta, ccl_data_dir, tmp_path)
    train(compose_train_config([*common, f"paths.output_dir={tmp_path / 'reference'}"]))

    last = tmp_path / "killed" / "checkpoints" / "last.ckpt"
    killed_argv = [sys.executable, str(ROOT / "train.py"), *common, f"hydra.run.dir={tmp_path / 'killed'}"]
    proc = subprocess.Popen(killed_argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not last.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, "the run ended before it could be killed"

    killed_at = load_checkpoint(last)  # atomic writes: the file on disk is always complete
    steps_per_epoch = load_checkpoint(tmp_path / "reference" / "checkpoints" / "last.ckpt")["global_step"] // 2
    assert killed_at["global_step"] > 0 and killed_at["global_step"] % steps_per_epoch != 0  # mid-epoch
    assert not (tmp_path / "killed" / "export").exists()

    train(compose_train_config([*common, f"ckpt_path={last}", f"paths.output_dir={tmp_path / 'resumed'}"]))
    reference, resumed = _card(tmp_path / "reference"), _card(tmp_path / "resumed")
    final = load_checkpoint(tmp_path / "resumed" / "checkpoints" / "last.ckpt")
    assert final["global_step"] == 2 * steps_per_epoch
    for key in ("val/loss", "val/acc", "val/f1"):
        assert resumed["validation"][key] == pytest.approx(reference["validation"][key], abs=1e-6), key
