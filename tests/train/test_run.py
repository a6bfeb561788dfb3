"""Training behaviour users rely on: it learns, resumes, selects the best checkpoint, exports."""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import compose_train_config

from learned_metrics.cli import main as cli_main
from learned_metrics.errors import UserError
from learned_metrics.export import load_checkpoint
from learned_metrics.models.classifier import SequenceClassifier
from learned_metrics.train.run import train

pytestmark = pytest.mark.slow

QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def _metrics_rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "csv" / "metrics.csv").open() as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def ccl_run(tiny_roberta, ccl_data_dir, tmp_path_factory):
    """Train the tiny model on the small shuffle set (8 epochs) once for the module's checks (they only read it)."""
    root = tmp_path_factory.mktemp("ccl-run")
    cfg = compose_train_config([
        f"paths.output_dir={root / 'run'}",
        f"paths.checkpoints_dir={root}",
        "experiment=ccl_demo",
        f"model.name_or_path={tiny_roberta}",
        f"data.path={ccl_data_dir}",
        "model.lr=3e-3",
        "model.warmup_ratio=0.0",
        "trainer.max_epochs=8",
        "trainer.log_every_n_steps=1",
        *QUIET,
    ])
    metrics = train(cfg)
    return cfg, metrics, Path(cfg.paths.output_dir)


def test_tiny_model_learns_and_export_matches_module(ccl_run, tiny_roberta):
    cfg, metrics, run_dir = ccl_run
    assert metrics["val/acc"] >= 0.8, metrics  # chance is 0.5
    export = run_dir / "export"
    card = json.loads((export / "learned_metric.json").read_text())
    assert card["kind"] == "coherence" and card["preprocessing"]["joiner"] == "\n"
    assert card["preprocessing"]["splitter"] == "newline" and card["validation"]["val/acc"] == metrics["val/acc"]
    assert card["training_config"]["model"]["lr"] == 3e-3
    assert (run_dir.parent / "latest").resolve() == run_dir.resolve()
    info = json.loads((run_dir / "run_info.json").read_text())
    assert info["git_commit"] and info["packages"]["torch"] and info["config"]["model"]["lr"] == 3e-3
    assert json.loads((run_dir / "data_report.json").read_text())["kind"] == "shuffle_set"

    texts = ["First, Ben woke up.\nThen he left.\nFinally, he slept.", "Finally, he slept.\nFirst, Ben woke up."]
    # the Lightning module with the best checkpoint's weights
    best = load_checkpoint(card["source_checkpoint"])
    module = SequenceClassifier(str(tiny_roberta), "coherence", head_labels=["incoherent", "coherent"])
    module.load_state_dict(best["state_dict"])
    module.eval()
    from transformers import AutoTokenizer

    batch = AutoTokenizer.from_pretrained(export)(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = module(dict(batch)).logits.float().softmax(-1).tolist()

    script = (
        "import json, sys, torch\n"
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "path, texts = sys.argv[1], json.loads(sys.argv[2])\n"
        "tok = AutoTokenizer.from_pretrained(path); model = AutoModelForSequenceClassification.from_pretrained(path)\n"
        "with torch.no_grad(): probs = model(**tok(texts, padding=True, return_tensors='pt')).logits.softmax(-1)\n"
        "assert not any(m.startswith('learned_metrics') for m in sys.modules)\n"
        "print(json.dumps({'id2label': model.config.id2label, 'probs': probs.tolist()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(export), json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["id2label"] == {"0": "incoherent", "1": "coherent"}
    assert torch.allclose(torch.tensor(result["probs"]), torch.tensor(expected), atol=1e-5)


def test_export_cli_from_checkpoint(ccl_run, tmp_path):
    _, _, run_dir = ccl_run
    last = run_dir / "checkpoints" / "last.ckpt"
    assert cli_main(["export", str(last), str(tmp_path / "exp")]) == 0
    card = json.loads((tmp_path / "exp" / "learned_metric.json").read_text())
    assert card["source_checkpoint"] == str(last) and card["kind"] == "coherence"
    from transformers import AutoModelForSequenceClassification

    assert AutoModelForSequenceClassification.from_pretrained(tmp_path / "exp").config.num_labels == 2


def test_pickled_checkpoint_refused_unless_allowed(ccl_run, tmp_path, capsys):
    _, _, run_dir = ccl_run
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    checkpoint["extra"] = argparse.Namespace(evil=True)  # any non-allow-listed Python object
    bad = tmp_path / "pickled.ckpt"
    torch.save(checkpoint, bad)
    assert cli_main(["export", str(bad), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--allow-pickle" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    assert cli_main(["export", str(bad), str(tmp_path / "out"), "--allow-pickle"]) == 0


def test_resume_from_last_continues_from_its_step(train_config, tiny_roberta, ccl_data_dir, tmp_path):
    common = [
        "experiment=ccl_demo",
        f"model.name_or_path={tiny_roberta}",
        f"data.path={ccl_data_dir}",
        "trainer.log_every_n_steps=1",
        "model.warmup_ratio=0.0",
        *QUIET,
    ]
    first = train_config(*common, "trainer.max_epochs=1", f"paths.output_dir={tmp_path / 'ccl_demo' / 'a'}")
    train(first)
    last = tmp_path / "ccl_demo" / "a" / "checkpoints" / "last.ckpt"
    steps_per_epoch = load_checkpoint(last)["global_step"]
    assert steps_per_epoch > 0

    second = train_config(
        *common, "trainer.max_epochs=2", "ckpt_path=last", f"paths.output_dir={tmp_path / 'ccl_demo' / 'b'}"
    )
    train(second)
    resumed = load_checkpoint(tmp_path / "ccl_demo" / "b" / "checkpoints" / "last.ckpt")
    assert resumed["global_step"] == 2 * steps_per_epoch and resumed["epoch"] == 1
    logged = [int(r["step"]) for r in _metrics_rows(tmp_path / "ccl_demo" / "b") if r.get("train/loss")]
    assert logged and min(logged) >= steps_per_epoch  # nothing re-trained from step 0

    # a run folder that holds files is used again only to resume in place (SLURM requeue)
    in_place = tmp_path / "ccl_demo" / "b"
    with pytest.raises(UserError, match="already holds files"):
        train(train_config(*common, "trainer.max_epochs=3", f"paths.output_dir={in_place}"))
    train(train_config(*common, "trainer.max_epochs=3", f"ckpt_path={in_place / 'checkpoints' / 'last.ckpt'}",
                       f"paths.output_dir={in_place}"))
    assert load_checkpoint(in_place / "checkpoints" / "last.ckpt")["global_step"] == 3 * steps_per_epoch
    assert (in_place / "export" / "model.safetensors").exists()


OBVIOUS = {
    "e": "The red kite flies over the hill.",
    "n": "Birds migrate south every winter.",
    "c": "Nothing is flying, the hill is empty.",
}


def _obvious_nli_set(tmp_path: Path) -> Path:
    """Official ANLI layout with lexically obvious pairs, built by the real augmentation code."""
    from learned_metrics.data.anli import build_anli_augmented

    root = tmp_path / "anli"
    for rnd in ("R1", "R2", "R3"):
        (root / rnd).mkdir(parents=True)
        for split in ("train", "dev", "test"):
            rows = [
                {
                    "uid": f"{rnd}-{split}-{label}-{i}",
                    "context": "The red kite flies over the hill.",
                    "hypothesis": OBVIOUS[label],
                    "label": label,
                }
                for i in range(4)
                for label in "enc"
            ]
            (root / rnd / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    build_anli_augmented(f"jsonl:{root}", tmp_path / "set", seed=0)
    return tmp_path / "set"


def test_nli_reversed_label_order_trains_and_scores(train_config, tiny_roberta_nli, tmp_path):
    """id2label contradiction/neutral/entailment: names, not positions, decide the targets."""
    cfg = train_config(
        "experiment=nli_demo",
        f"model.name_or_path={tiny_roberta_nli}",
        "model.head_labels=null",
        f"data.path={_obvious_nli_set(tmp_path)}",
        "model.lr=2e-3",
        "model.warmup_ratio=0.0",
        "trainer.max_steps=150",
        "val_every_n_steps=75",
        *QUIET,
    )
    train(cfg)
    export = Path(cfg.paths.output_dir) / "export"
    card = json.loads((export / "learned_metric.json").read_text())
    assert card["kind"] == "faithfulness" and card["scoring"]["default_mode"] == "e-c"
    assert card["id2label"] == {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}
    assert card["augmentation"]["augment"] is True

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(export)
    model = AutoModelForSequenceClassification.from_pretrained(export).eval()
    premise = "The red kite flies over the hill."
    enc = tok([premise, premise], [OBVIOUS["e"], OBVIOUS["c"]], padding=True, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc).logits.softmax(-1)
    e_minus_c = probs[:, 2] - probs[:, 0]  # ENTAILMENT=2, CONTRADICTION=0 in this model
    assert e_minus_c[0] > 0.25 and e_minus_c[1] < -0.25, probs  # right sign, clearly


def test_lowest_validation_loss_checkpoint_is_selected(train_config, tiny_deberta_nli, nli_data_dir):
    cfg = train_config(
        "experiment=nli_demo",
        f"model.name_or_path={tiny_deberta_nli}",
        "model.head_labels=null",
        f"data.path={nli_data_dir}",
        "model.lr=3e-2",  # large: the loss wanders, so the best is rarely the last
        "trainer.max_steps=24",
        "val_every_n_steps=4",
        "trainer.log_every_n_steps=1",
        "trainer.num_sanity_val_steps=0",
        *QUIET,
    )
    train(cfg)
    run_dir = Path(cfg.paths.output_dir)
    val = [(int(r["step"]), float(r["val/loss"])) for r in _metrics_rows(run_dir) if r.get("val/loss")]
    # the last row is the re-validation of the selected checkpoint after training
    history, reloaded = val[:-1], val[-1]
    assert len(history) >= 4
    best_step, best_loss = min(history, key=lambda sv: sv[1])
    card = json.loads((run_dir / "export" / "learned_metric.json").read_text())
    # validation after N optimizer steps is logged at step N - 1; the checkpoint is named by N
    assert load_checkpoint(card["source_checkpoint"])["global_step"] == best_step + 1
    assert card["validation"]["val/loss"] == pytest.approx(best_loss, abs=1e-5)
    assert reloaded[1] == pytest.approx(best_loss, abs=1e-5)
