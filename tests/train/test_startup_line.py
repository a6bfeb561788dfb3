"""train.py says where its start-up went: one line after the first optimizer step, each phase timed."""

from __future__ import annotations

import logging
import re

import pytest
from conftest import logged

from learned_metrics.progress import StartUp
from learned_metrics.train.run import train

pytestmark = pytest.mark.slow


def test_one_start_up_line_after_the_first_step(train_config, tiny_roberta, ccl_data_dir):
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       "trainer.max_epochs=2", "trainer.enable_progress_bar=false", "callbacks.model_summary=null")
    clock = StartUp()
    clock.lap("config")
    with logged(logging.INFO, logger="learned_metrics") as records:
        train(cfg, clock)
    lines = [r.getMessage() for r in records if r.getMessage().startswith("start-up ")]
    assert len(lines) == 1, lines  # two epochs, many steps: still one line
    phases = re.fullmatch(r"start-up [\d.]+ s \((.*)\)", lines[0]).group(1)
    assert [p.rsplit(" ", 2)[0] for p in phases.split(", ")] == ["config", "model", "data", "sanity check",
                                                                 "first step"]


def test_phases_add_up():
    clock = StartUp()
    clock.lap("a")
    clock.lap("b")
    clock.lap("a")
    assert list(clock.phases) == ["a", "b"] and all(s >= 0 for s in clock.phases.values())
    assert clock.line().startswith("start-up ") and "(a " in clock.line()
