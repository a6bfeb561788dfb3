"""The best checkpoint's validation metrics are the ones it was chosen on, read back from the checkpoint: the
run does not validate it a second time when fitting ends (a full validation pass, shuffle test included)."""

from __future__ import annotations

import json
from pathlib import Path

import lightning as L
import pytest

from learned_metrics.export import export_checkpoint, load_checkpoint
from learned_metrics.train import run as run_module
from learned_metrics.train.run import train

pytestmark = pytest.mark.slow


def _fit(train_config, tiny_roberta, ccl_data_dir, tmp_path, name, monkeypatch):
    calls = []
    original = L.Trainer.validate

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("ckpt_path"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(L.Trainer, "validate", counted)
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       "model.lr=3e-3", "trainer.max_epochs=3", "trainer.enable_progress_bar=false",
                       "callbacks.model_summary=null", f"paths.output_dir={tmp_path / name}")
    return train(cfg), calls, Path(cfg.paths.output_dir)


def test_best_metrics_read_back_equal_a_second_validation(train_config, tiny_roberta, ccl_data_dir, tmp_path,
                                                          monkeypatch):
    metrics, calls, run_dir = _fit(train_config, tiny_roberta, ccl_data_dir, tmp_path, "read", monkeypatch)
    assert calls == []  # no validation after fitting
    best = next((run_dir / "checkpoints").glob("best-*.ckpt"))
    assert load_checkpoint(best)[run_module.ValidationRecord.KEY] == {k: v for k, v in metrics.items()}
    # `learned-metrics export` of that file: its card carries the metrics it was saved with (found before: no
    # validation block) and says the file was chosen by hand, not by the monitor
    exported = export_checkpoint(best, tmp_path / "by-hand")
    card = json.loads((exported / "learned_metric.json").read_text())
    run_card = json.loads((run_dir / "export" / "learned_metric.json").read_text())
    assert card["validation"] == run_card["validation"]
    assert card["selection"]["monitor"] is None and card["selection"]["step"] == run_card["selection"]["step"]
    assert best.name in card["selection"]["note"]

    # the control: checkpoints without the record (as older versions wrote them) are validated again, as before
    monkeypatch.setattr(run_module.ValidationRecord, "on_save_checkpoint", lambda *args: None)
    again, calls, _ = _fit(train_config, tiny_roberta, ccl_data_dir, tmp_path, "again", monkeypatch)
    assert len(calls) == 1 and calls[0].endswith(best.name)
    assert sorted(again) == sorted(metrics)
    for name, value in metrics.items():
        if name != "val/shuffle_seconds":  # a duration
            assert value == pytest.approx(again[name], abs=1e-6), name


def test_a_checkpoint_saved_without_a_validation_gets_no_record(train_config, tiny_roberta, ccl_data_dir, tmp_path):
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       "trainer.max_epochs=1", "trainer.limit_val_batches=0", "trainer.num_sanity_val_steps=0",
                       "trainer.enable_progress_bar=false", "callbacks.model_summary=null")
    train(cfg)
    last = load_checkpoint(Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt")
    assert run_module.ValidationRecord.KEY not in last and last["global_step"] > 0
