"""Class 6: SIGINT and SIGTERM are handled the same way by every command.

Found before: Ctrl-C in the data-prep scripts printed a ``KeyboardInterrupt`` traceback, and SIGTERM
(what ``timeout``, SLURM and ``docker stop`` send) during ``score`` left a partial hidden temp file.
Now the boundary turns both signals into an exception that unwinds every temporary, prints one line
and exits 130 / 143; ``kill -9`` leftovers are removed by the next run (test_output_policy.py). A scoring
run keeps the chunks it finished for ``--resume`` (test_scoring_runs.py); one stopped before its first
chunk keeps nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hostile.hostile_tools import BUILD_SHUFFLE_SET, LEARNED_METRICS, PAIRS, ROOT, TRAIN, write_jsonl
from learned_metrics.data.demo import write_coherence_documents

pytestmark = pytest.mark.slow


def _start(cmd: list[str], tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "WANDB_MODE": "offline",
           "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "PROJECT_ROOT": str(ROOT)}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the command never reached the point to interrupt"
        time.sleep(0.05)


def _stopped(proc: subprocess.Popen, signum: int) -> str:
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == 128 + signum, (proc.returncode, err[-3000:])
    assert f"stopped by {signal.Signals(signum).name}" in err.splitlines()[-1]
    return err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_score_interrupted_mid_file_leaves_nothing(tiny_deberta_nli, tmp_path, signum):
    source = write_jsonl(tmp_path / "many.jsonl", PAIRS * 4000)
    output = tmp_path / "scored.jsonl"
    proc = _start([*LEARNED_METRICS, "score", "faithfulness", "--model", str(tiny_deberta_nli), "--input",
                   str(source), "--output", str(output), "--mc-samples", "8", "--no-progress"], tmp_path)
    _wait_for(lambda: (tmp_path / ".scored.jsonl.lmresume").exists(), proc)  # scoring has begun
    time.sleep(0.3)
    _stopped(proc, signum)  # before the first chunk is finished: nothing worth resuming, nothing kept
    assert not output.exists() and not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_data_prep_ctrl_c_is_one_line_and_leaves_no_output(tmp_path):
    docs = write_coherence_documents(tmp_path / "docs.jsonl", 40_000, seed=1)
    output = tmp_path / "set"
    proc = _start([*BUILD_SHUFFLE_SET, "--source", f"jsonl:{docs}", "--output", str(output)], tmp_path)
    _wait_for(lambda: any(".lmtmp-" in p.name for p in tmp_path.iterdir()), proc)  # building in its scratch folder
    time.sleep(0.5)
    _stopped(proc, signal.SIGINT)
    assert not output.exists() and not [p for p in tmp_path.iterdir() if ".lmtmp-" in p.name]


def test_training_sigterm_is_one_line(tiny_roberta, ccl_data_dir, tmp_path):
    run_dir = tmp_path / "run"
    proc = _start([*TRAIN, "experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                   f"hydra.run.dir={run_dir}", "trainer.max_epochs=50", "logger=csv"], tmp_path)
    _wait_for(lambda: (run_dir / "run_info.json").exists(), proc)  # fitting has begun
    time.sleep(1.0)
    _stopped(proc, signal.SIGTERM)
    assert not (run_dir / "export").exists() and not list(run_dir.rglob("*.lmtmp-*"))
