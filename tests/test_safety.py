"""Safe artefacts: pickle-only model folders are refused unless allowed; no remote code is ever trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification

from learned_metrics.errors import UserError
from learned_metrics.models.classifier import SequenceClassifier

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def pickle_only_model(tiny_roberta, tmp_path_factory) -> Path:
    """The tiny model with its weights as pytorch_model.bin only (how old hub repos ship them)."""
    folder = tmp_path_factory.mktemp("pickle-only")
    for file in tiny_roberta.iterdir():
        if file.suffix != ".safetensors":
            shutil.copy(file, folder / file.name)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_roberta)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return folder


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


def test_no_code_trusts_remote_code():
    offenders = [p for p in SRC.rglob("*.py") if "trust_remote_code=True" in p.read_text()]
    assert offenders == []
