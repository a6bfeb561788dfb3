"""The faithfulness paper's released checkpoint, ``juliussteen/DeBERTa-v3-FaithAug``, as the recommended ready-made
model (issue 23 item 6), checked offline on a stand-in of the same layout: a Hub cache entry under that id holding a
``deberta-v2`` sequence classifier with the label names of its base model (MoritzLaurer/DeBERTa-v3-large-mnli-fever-
anli-ling-wanli: 0 entailment, 1 neutral, 2 contradiction; the paper's own scoring code reads entailment at index 0
and contradiction at index 2), no metric card, safetensors weights and a tokenizer. Tiny sizes, built as
tests/conftest.py builds its models; the head's bias makes one label win so the sign of the score shows the mapping.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_models import biased_copy, build_model

from learned_metrics.cli import main
from learned_metrics.scoring import load_scorer

HUB_ID = "juliussteen/DeBERTa-v3-FaithAug"
ID2LABEL = {0: "entailment", 1: "neutral", 2: "contradiction"}
COMMIT = "0" * 40
GROUNDINGS = ["Anna went to the market on Monday and bought three apples.", "Ben read a book in the library."]
GENERATIONS = ["Anna bought apples.", "Ben was at the library. He read."]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """A Hub cache with the released id; ``winner`` picks the label the stand-in's head favours."""
    root = tmp_path_factory.mktemp("released")
    base = build_model(root / "base", "deberta", id2label=ID2LABEL)

    def make(winner: str) -> Path:
        cache = root / f"cache-{winner}"
        repo = cache / f"models--{HUB_ID.replace('/', '--')}"
        snapshot = repo / "snapshots" / COMMIT
        if not snapshot.exists():
            biased_copy(base, snapshot, winner)
            (repo / "refs").mkdir(parents=True)
            (repo / "refs" / "main").write_text(COMMIT)
        return cache

    return make


@pytest.fixture
def hub_cache(stand_in, monkeypatch):
    import huggingface_hub.constants as constants

    def use(winner: str) -> Path:
        cache = stand_in(winner)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        monkeypatch.setenv("HF_HUB_CACHE", str(cache))
        return cache

    return use


def test_stand_in_has_the_released_layout(stand_in):
    folder = stand_in("entailment") / f"models--{HUB_ID.replace('/', '--')}" / "snapshots" / COMMIT
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "deberta-v2"
    assert config["architectures"] == ["DebertaV2ForSequenceClassification"]
    assert config["id2label"] == {str(k): v for k, v in ID2LABEL.items()}
    assert config["label2id"] == {v: k for k, v in ID2LABEL.items()}
    assert (folder / "model.safetensors").exists() and not (folder / "learned_metric.json").exists()


@pytest.mark.parametrize(("winner", "sign"), [("entailment", 1), ("contradiction", -1)])
def test_load_scorer_resolves_the_labels_by_name_and_scores_by_hub_id(hub_cache, winner, sign):
    hub_cache(winner)
    scorer = load_scorer(HUB_ID, mc_samples=3, seed=0)
    assert scorer.kind == "faithfulness" and scorer.label_ids == {"entailment": 0, "neutral": 1, "contradiction": 2}
    result = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, granularity="sentence", details=True)
    assert result.passes == 3 and result.mode == "e-c"
    assert all(sign * s > 0.99 for s in result.scores)  # e-c = P(entailment) - P(contradiction)
    assert result.probabilities[winner].min() > 0.99
    assert [len(rows) for rows in result.sentences] == [1, 2]  # per generation sentence


def test_the_documented_command_scores_the_released_id_offline(hub_cache, tmp_path, capsys):
    hub_cache("entailment")
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps({"grounding": g, "generation": h}) + "\n"
                              for g, h in zip(GROUNDINGS, GENERATIONS, strict=True)))
    out = tmp_path / "scored.jsonl"
    assert main(["score", "faithfulness", "--model", HUB_ID, "--mc-samples", "15", "--input", str(source),
                 "--output", str(out), "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["score"] > 0.99 and r["prob_entailment"] > 0.99 for r in rows)
    assert all("score_std" in r for r in rows)


def test_docs_give_the_exact_command():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "scoring.md").read_text()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"learned-metrics score faithfulness --model {HUB_ID} --mc-samples 15" in docs
    assert HUB_ID in readme
