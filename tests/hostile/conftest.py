"""Fixtures of the hostile suite: small inputs, a crafted checkpoint, a model folder that carries code."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile.hostile_tools import PAIRS, craft_checkpoint, write_jsonl


@pytest.fixture(scope="session")
def pairs_file(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("pairs") / "pairs.jsonl", PAIRS)


@pytest.fixture(scope="session")
def nli_checkpoint(tiny_deberta_nli, tmp_path_factory) -> Path:
    return craft_checkpoint(tiny_deberta_nli, tmp_path_factory.mktemp("ckpt") / "best.ckpt")
