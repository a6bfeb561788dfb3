"""Shared fixtures: tiny models built once per session, offline environment."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import pytest  # noqa: E402

from tiny_models import NLI_ORDER_DEBERTA, NLI_ORDER_ROBERTA, build_model  # noqa: E402


@pytest.fixture(scope="session")
def tiny_roberta(tmp_path_factory):
    """An untuned tiny RoBERTa encoder (2-label head with LABEL_0/LABEL_1), the CCL starting point."""
    return build_model(tmp_path_factory.mktemp("tiny-roberta"), "roberta")


@pytest.fixture(scope="session")
def tiny_deberta_nli(tmp_path_factory):
    """A tiny DeBERTa-v2 NLI model with the DeBERTa label order (entailment=0, contradiction=2)."""
    return build_model(tmp_path_factory.mktemp("tiny-deberta-nli"), "deberta", id2label=NLI_ORDER_DEBERTA)


@pytest.fixture(scope="session")
def tiny_roberta_nli(tmp_path_factory):
    """A tiny RoBERTa NLI model with the roberta-large-mnli order (contradiction=0, entailment=2)."""
    return build_model(tmp_path_factory.mktemp("tiny-roberta-nli"), "roberta", id2label=NLI_ORDER_ROBERTA)
