"""Rule: an export's config.json maps its classes the same way both ways: ``label2id`` is the inverse of ``id2label``,
the mapping training used (it maps every label by id2label's names), so a tool that loads the folder with plain
``transformers`` and reads ``config.label2id["entailment"]`` gets the entailment column.

Before: a base model whose config.json carried a stale ``label2id`` (id2label entailment=0 ... contradiction=2,
label2id contradiction=0 ... entailment=2; transformers keeps both as given) was trained (labels mapped by id2label) and
exported with the stale label2id, exit 0: ``probs[:, config.label2id["entailment"]]`` read P(contradiction).
Every export goes through ``export.write_export`` (a training run's and ``learned-metrics export``'s)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from transformers import AutoModelForSequenceClassification

from hostile.hostile_tools import craft_checkpoint
from learned_metrics.export import export_checkpoint, write_export

STALE = {"contradiction": 0, "neutral": 1, "entailment": 2}


@pytest.fixture
def stale_model(tmp_path, tiny_deberta_nli) -> Path:
    """The tiny DeBERTa NLI model (entailment=0, contradiction=2) with its label2id the other way round."""
    folder = tmp_path / "stale"
    shutil.copytree(tiny_deberta_nli, folder)
    config = json.loads((folder / "config.json").read_text())
    config["label2id"] = STALE
    (folder / "config.json").write_text(json.dumps(config))
    assert AutoModelForSequenceClassification.from_pretrained(folder).config.label2id == STALE  # kept as given
    return folder


def _maps(export: Path) -> tuple[dict[int, str], dict[str, int]]:
    config = AutoModelForSequenceClassification.from_pretrained(export).config
    return {int(i): name for i, name in config.id2label.items()}, dict(config.label2id)


def test_a_trained_models_export_writes_label2id_from_id2label(stale_model, tmp_path):
    model = AutoModelForSequenceClassification.from_pretrained(stale_model)
    export = write_export(model, stale_model, {"kind": "faithfulness"}, tmp_path / "export")
    id2label, label2id = _maps(export)
    assert id2label == {0: "entailment", 1: "neutral", 2: "contradiction"}
    assert label2id == {name: i for i, name in id2label.items()}


def test_learned_metrics_export_writes_label2id_from_id2label(stale_model, tmp_path):
    ckpt = craft_checkpoint(stale_model, tmp_path / "best.ckpt")
    id2label, label2id = _maps(export_checkpoint(ckpt, tmp_path / "export"))
    assert label2id == {name: i for i, name in id2label.items()} and label2id["entailment"] == 0


def test_control_a_consistent_config_is_exported_as_it_is(tiny_roberta_nli, tmp_path):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_roberta_nli)
    id2label, label2id = _maps(write_export(model, tiny_roberta_nli, {"kind": "faithfulness"}, tmp_path / "export"))
    assert id2label == {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    assert label2id == {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}
