"""Safe artefacts: pickle-only model folders are refused unless allowed; no remote code is ever trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification

from learned_metrics.errors import UserError
from learned_metrics.models.classifier import SequenceClassifier


def pickle_only_copy(source: Path, folder: Path) -> Path:
    """A copy of a model folder with its weights as pytorch_model.bin only (how old hub repos ship them)."""
    for file in source.iterdir():
        if file.suffix != ".safetensors":
            shutil.copy(file, folder / file.name)
    model = AutoModelForSequenceClassification.from_pretrained(source)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return folder


@pytest.fixture(scope="module")
def pickle_only_model(tiny_roberta, tmp_path_factory) -> Path:
    return pickle_only_copy(tiny_roberta, tmp_path_factory.mktemp("pickle-only"))


def test_training_refuses_pickle_only_weights(pickle_only_model):
    with pytest.raises(UserError, match=r"pickle .*model\.allow_pickle=true") as info:
        SequenceClassifier(str(pickle_only_model), "coherence", head_labels=["incoherent", "coherent"])
    assert str(pickle_only_model) in str(info.value) and "\n" not in str(info.value)


def test_training_loads_pickle_only_weights_when_allowed(pickle_only_model, tiny_roberta):
    module = SequenceClassifier(
        str(pickle_only_model), "coherence", head_labels=["incoherent", "coherent"], allow_pickle=True
    )
    reference = AutoModelForSequenceClassification.from_pretrained(tiny_roberta)
    embeddings = "roberta.embeddings.word_embeddings.weight"
    assert torch.equal(module.model.state_dict()[embeddings], reference.state_dict()[embeddings])


@pytest.fixture(scope="module")
def pickle_only_nli_model(tiny_deberta_nli, tmp_path_factory) -> Path:
    return pickle_only_copy(tiny_deberta_nli, tmp_path_factory.mktemp("pickle-only-nli"))


def test_scoring_refuses_pickle_only_weights_unless_allowed(pickle_only_nli_model, tmp_path, capsys):
    from learned_metrics.cli import main

    source = tmp_path / "in.jsonl"
    source.write_text('{"grounding": "The sky is blue.", "generation": "The sky is blue."}\n')
    argv = ["score", "faithfulness", "--model", str(pickle_only_nli_model), "--input", str(source)]
    assert main([*argv, "--output", str(tmp_path / "refused.jsonl"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--allow-pickle" in err and len(err.splitlines()) == 1 and not (tmp_path / "refused.jsonl").exists()
    assert main([*argv, "--output", str(tmp_path / "ok.jsonl"), "--no-progress", "--allow-pickle"]) == 0
    assert "score" in (tmp_path / "ok.jsonl").read_text()
