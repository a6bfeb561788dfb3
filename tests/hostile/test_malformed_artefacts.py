"""Classes 4 and 8: damaged or odd artefacts give one line, never a traceback or meaningless scores.

Checkpoints are checked by ``export.load_checkpoint``/``check_checkpoint`` (also for
``train.py ckpt_path=``), cards by ``card.validate_card``, model folders by
``safety.check_model_folder`` and the loaders in ``learned_metrics.safety``.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import compose_train_config

from hostile.hostile_tools import assert_refused, cli, copy_model, digest, train_run


class Boom:
    """Pickled by reference: loading it with weights_only=False would call os.system."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _checkpoint_file(tmp_path, kind, nli_checkpoint):
    import torch

    path = tmp_path / f"{kind}.ckpt"
    data = nli_checkpoint.read_bytes()
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("epoch=3 step=1200\n")
    elif kind == "random":
        path.write_bytes(b"\x80" + os.urandom(4096))  # starts like a pickle
    elif kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "list":
        torch.save([1, 2, 3], path)
    elif kind == "state_dict":
        checkpoint = torch.load(nli_checkpoint, weights_only=True)
        torch.save({**checkpoint, "state_dict": [1, 2]}, path)
    elif kind == "malicious":
        torch.save({"state_dict": {}, "payload": Boom(tmp_path / "PWNED")}, path)
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [("empty", "file is empty"), ("text", "not a PyTorch checkpoint"), ("random", "not a PyTorch checkpoint"),
     ("truncated", "not a PyTorch checkpoint"), ("list", "holds a list"), ("state_dict", "'state_dict' must map"),
     ("malicious", "pickled Python objects")],
)
def test_export_reports_damaged_checkpoints_in_one_line(nli_checkpoint, tmp_path, kind, message, capsys):
    ckpt = _checkpoint_file(tmp_path, kind, nli_checkpoint)
    before = digest(tmp_path)
    line = assert_refused(cli(capsys, "export", str(ckpt), str(tmp_path / "out")), message, str(ckpt))
    assert ("--allow-pickle" in line) == (kind == "malicious")  # only a real pickle of objects gets that advice
    assert digest(tmp_path) == before and not (tmp_path / "PWNED").exists()


@pytest.mark.slow
def test_allow_pickle_on_a_broken_pickle_is_one_line(tmp_path, capsys, monkeypatch):
    """The pickle is written in process; the module is then dropped from sys.modules and sys.path, and deleted."""
    import importlib

    import torch

    module = tmp_path / "gone_module.py"
    module.write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    torch.save({"thing": importlib.import_module("gone_module").Thing()}, tmp_path / "broken.ckpt")
    monkeypatch.undo()
    del sys.modules["gone_module"]
    module.unlink()  # the class it refers to no longer exists
    result = cli(capsys, "export", str(tmp_path / "broken.ckpt"), str(tmp_path / "out"), "--allow-pickle")
    assert_refused(result, "not a readable checkpoint")


@pytest.mark.parametrize("kind", ["text", "malicious"])
@pytest.mark.slow
def test_train_resume_from_a_bad_checkpoint_is_one_line(tiny_deberta_nli, nli_checkpoint, tmp_path, kind, capsys):
    """In process (train.py's boundary and composition; tests/hostile/test_signals.py runs the real script)."""
    ckpt = _checkpoint_file(tmp_path, kind, nli_checkpoint)
    cfg = compose_train_config(["experiment=nli_demo", f"ckpt_path={ckpt}", f"model.name_or_path={tiny_deberta_nli}",
                                f"paths.checkpoints_dir={tmp_path / 'runs'}", f"paths.data_dir={tmp_path / 'data'}",
                                "logger=csv", f"paths.output_dir={tmp_path / 'runs' / 'run'}"])
    result = train_run(capsys, cfg)
    assert_refused(result, str(ckpt), "pickled Python objects" if kind == "malicious" else "not a PyTorch checkpoint")
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "data").exists()


def _exported(tiny_deberta_nli, tmp_path, card):
    folder = copy_model(tiny_deberta_nli, tmp_path / "export")
    (folder / "learned_metric.json").write_text(json.dumps(card))
    return folder


@pytest.mark.parametrize(
    ("change", "message"),
    [("card-max-length", "'preprocessing.max_length' must be an integer"),
     ("card-list", "learned_metric.json: expected a JSON object, got list"),
     ("card-kind", "'kind' must be one of"),
     ("truncated-weights", "cannot load the model weights"),
     ("no-tokenizer", "no tokenizer files"),
     ("config-list", "expected a JSON object")],
)
def test_score_refuses_damaged_model_folders(tiny_deberta_nli, pairs_file, tmp_path, change, message, capsys):
    folder = copy_model(tiny_deberta_nli, tmp_path / "model")
    if change == "card-max-length":
        (folder / "learned_metric.json").write_text(json.dumps({"kind": "faithfulness",
                                                                "preprocessing": {"max_length": "abc"}}))
    elif change == "card-list":
        (folder / "learned_metric.json").write_text(json.dumps(["kind", "faithfulness"]))
    elif change == "card-kind":
        (folder / "learned_metric.json").write_text(json.dumps({"kind": "fluency"}))
    elif change == "truncated-weights":
        weights = folder / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:5000])
    elif change == "no-tokenizer":
        for name in ("tokenizer.json", "tokenizer_config.json"):
            (folder / name).unlink()
    elif change == "config-list":
        (folder / "config.json").write_text("[]")
    output = tmp_path / "scored.jsonl"
    result = cli(capsys, "score", "faithfulness", "--model", str(folder), "--input", str(pairs_file),
                 "--output", str(output))
    assert_refused(result, message, str(folder))
    assert not output.exists()


@pytest.mark.slow
def test_training_refuses_a_model_folder_without_tokenizer(tiny_roberta, tmp_path, capsys):
    folder = copy_model(tiny_roberta, tmp_path / "model")
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer_config.json").unlink()
    result = train_run(capsys, compose_train_config([
        "experiment=ccl_demo", f"model.name_or_path={folder}", f"paths.checkpoints_dir={tmp_path / 'runs'}",
        f"paths.data_dir={tmp_path / 'data'}", "logger=csv", f"paths.output_dir={tmp_path / 'runs' / 'run'}"]))
    assert_refused(result, "no tokenizer files")


def test_runs_list_reads_run_files_of_unexpected_types(tmp_path, capsys):
    runs = tmp_path / "checkpoints"
    odd = runs / "exp" / "2026-01-01_00-00-00"
    (odd / "export").mkdir(parents=True)
    (odd / "run_info.json").write_text(json.dumps({"experiment": 7, "config": ["not", "a", "mapping"],
                                                   "git_commit": {"x": 1}}))
    (odd / "export" / "learned_metric.json").write_text(json.dumps(
        {"validation": {"val/f1": "high", "val/loss": None, "val/acc": True}, "source_checkpoint": 3,
         "training_config": {"callbacks": "none", "seed": "42"}}))
    broken = runs / "exp" / "2026-01-02_00-00-00"
    broken.mkdir(parents=True)
    (broken / "run_info.json").write_bytes(b"\xff\xfe not json")
    result = cli(capsys, "runs", "list", str(runs), "--json", str(tmp_path / "runs.json"))
    assert result.code == 0 and "Traceback" not in result.err, result.err
    rows = json.loads((tmp_path / "runs.json").read_text())
    assert len(rows) == 2 and all(row["best"] is None and row["seed"] is None for row in rows)
