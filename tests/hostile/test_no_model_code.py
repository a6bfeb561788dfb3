"""Class 3: no code shipped with a model ever runs, whatever is typed at a prompt.

transformers asks "run the custom code? [y/N]" for a folder with ``auto_map``; with ``y`` piped
into stdin the old commands imported the folder's ``evil.py``. Every load now passes
``trust_remote_code=False`` through one helper (learned_metrics.safety), and such a folder is
refused before transformers reads it.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import compose_train_config

from hostile.hostile_tools import (
    assert_refused,
    cli,
    craft_checkpoint,
    digest,
    make_remote_code_folder,
    train_run,
)

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize("where", ["config", "tokenizer"])
@pytest.mark.slow
def test_score_never_runs_model_code(tiny_deberta_nli, pairs_file, tmp_path, where, capsys, monkeypatch):
    """In process: a 'y' on standard input would answer transformers' trust prompt, if it ever asked."""
    marker = tmp_path / "PWNED"
    evil = make_remote_code_folder(tiny_deberta_nli, tmp_path / "evil", marker, where=where)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\ny\ny\n"))
    result = cli(capsys, "score", "faithfulness", "--model", evil, "--input", pairs_file,
                 "--output", tmp_path / "out.jsonl")
    assert_refused(result, "auto_map", "never executes code")
    assert not marker.exists() and not (tmp_path / "out.jsonl").exists()


@pytest.mark.slow
def test_training_never_runs_model_code(tiny_deberta_nli, tmp_path, capsys, monkeypatch):
    """In process: a 'y' on standard input would answer transformers' trust prompt, if it ever asked."""
    marker = tmp_path / "PWNED"
    evil = make_remote_code_folder(tiny_deberta_nli, tmp_path / "evil", marker)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\ny\ny\n"))
    result = train_run(capsys, compose_train_config([
        "experiment=nli_demo", f"model.name_or_path={evil}", f"paths.checkpoints_dir={tmp_path}",
        f"paths.data_dir={tmp_path / 'data'}", "logger=csv", f"paths.output_dir={tmp_path / 'run'}"]))
    assert_refused(result, "auto_map")
    assert not marker.exists() and not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("config_change", "message"),
    [({"model_type": "evil", "auto_map": {"AutoConfig": "evil.EvilConfig"}}, "auto_map"),
     ({"model_type": "evil"}, "unknown model_type 'evil'"),
     ({"model_type": None}, "no model_type")],
    ids=["auto_map", "unknown-type", "no-type"],
)
@pytest.mark.slow
def test_export_never_builds_unknown_or_custom_architectures(tiny_deberta_nli, tmp_path, config_change, message,
                                                             capsys, monkeypatch):
    """In process: a 'y' on standard input would answer transformers' trust prompt, if it ever asked."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_deberta_nli).to_dict()
    config.update(config_change)
    config = {k: v for k, v in config.items() if v is not None}
    ckpt = craft_checkpoint(tiny_deberta_nli, tmp_path / "custom.ckpt", hf_config=config)
    before = digest(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    result = cli(capsys, "export", ckpt, tmp_path / "export")
    assert_refused(result, message, str(ckpt))
    assert digest(tmp_path) == before


def test_every_transformers_load_goes_through_the_safe_helper():
    """Structural guard: only learned_metrics/safety.py calls from_pretrained/from_config, always with the flag."""
    pattern = re.compile(r"\.(from_pretrained|from_config|for_model)\(")
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if pattern.search(p.read_text()) and p.name != "safety.py"]
    assert offenders == []
    safety = (SRC / "learned_metrics" / "safety.py").read_text()
    calls = re.findall(r"\.from_(?:pretrained|config)\((?:[^()]|\([^()]*\))*\)", safety, flags=re.S)
    assert calls and all("NO_REMOTE_CODE" in call for call in calls), calls
    assert "trust_remote_code=True" not in "".join(p.read_text() for p in SRC.rglob("*.py"))
