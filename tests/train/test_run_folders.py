"""train/run_folders.py: a run writes into a folder of its own; only its own folder is used again, to resume in place.

A checkpoint anywhere below the run folder counted as "in place", so a run folder set to a folder further up (the
project's, a results folder holding a user's files) skipped the check and was written into."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from learned_metrics.errors import UserError
from learned_metrics.train.run_folders import check_run_folder


def _config(output_dir, ckpt_path):
    return OmegaConf.create({"paths": {"output_dir": str(output_dir), "checkpoints_dir": str(output_dir)},
                             "task_name": "ccl_demo", "ckpt_path": str(ckpt_path)})


@pytest.fixture
def interrupted(tmp_path):
    """A project folder with a user's file and, below it, an interrupted run's last.ckpt."""
    run = tmp_path / "checkpoints" / "ccl_demo" / "2026-01-01_00-00-00"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "last.ckpt").write_bytes(b"state")
    (tmp_path / "paper.tex").write_text("precious")
    return tmp_path, run


def test_a_folder_above_the_interrupted_run_is_not_resuming_in_place(interrupted):
    project, run = interrupted
    with pytest.raises(UserError, match="already holds files"):
        check_run_folder(_config(project, run / "checkpoints" / "last.ckpt"))


def test_control_the_run_folder_of_the_checkpoint_is_resumed_in_place(interrupted):
    _, run = interrupted
    folder = check_run_folder(_config(run, run / "checkpoints" / "last.ckpt"))
    assert folder.output_dir == run and folder.ckpt_path == str(run / "checkpoints" / "last.ckpt")
