"""Datamodule: an on-demand build runs once even when several runs start at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from learned_metrics.train.datamodule import TextClassificationDataModule


def test_concurrent_prepare_data_builds_once(tmp_path):
    calls = []

    def slow_builder(output: str) -> None:
        calls.append(output)
        time.sleep(0.3)  # long enough for the other runs to arrive while the set is being built
        Path(output).mkdir()

    target = tmp_path / "data" / "set"
    modules = [TextClassificationDataModule(str(target), tokenizer="unused", builder=slow_builder) for _ in range(3)]
    threads = [threading.Thread(target=m.prepare_data) for m in modules]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [str(target)] and target.is_dir()
