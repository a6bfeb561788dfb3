"""Any hub NLI model, labels mapped safely: names from the config, or --label-order for generic LABEL_i heads."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.scoring.loading import resolve_labels
from learned_metrics.scoring.options import ScoringOptions

# id2label as the checkpoints' configs ship it (docs/scoring.md, "NLI checkpoints and their label order"), and
# the order their model cards state for the generic one.
CHECKPOINTS = {
    "roberta-large-mnli": ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, None),
    "microsoft/deberta-large-mnli": ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, None),
    "facebook/bart-large-mnli": ({0: "contradiction", 1: "neutral", 2: "entailment"}, None),
    "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli": ({0: "entailment", 1: "neutral", 2: "contradiction"},
                                                                 None),
    "cross-encoder/nli-deberta-v3-base": ({0: "contradiction", 1: "entailment", 2: "neutral"}, None),
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli": ({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
                                                             "entailment,neutral,contradiction"),
}
EXPECTED = {
    "roberta-large-mnli": {"entailment": 2, "neutral": 1, "contradiction": 0},
    "microsoft/deberta-large-mnli": {"entailment": 2, "neutral": 1, "contradiction": 0},
    "facebook/bart-large-mnli": {"entailment": 2, "neutral": 1, "contradiction": 0},
    "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli": {"entailment": 0, "neutral": 1, "contradiction": 2},
    "cross-encoder/nli-deberta-v3-base": {"entailment": 1, "neutral": 2, "contradiction": 0},
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli": {"entailment": 0, "neutral": 1, "contradiction": 2},
}


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_each_documented_checkpoint_maps_to_the_label_order_its_card_states(name):
    id2label, order = CHECKPOINTS[name]
    options = ScoringOptions(label_order=order)
    assert resolve_labels(SimpleNamespace(id2label=id2label), "faithfulness", options.label_order) == EXPECTED[name]


def test_generic_labels_without_an_order_are_refused_with_what_to_pass():
    with pytest.raises(UserError, match="generic labels .*pass --label-order .*entailment,neutral,contradiction"):
        resolve_labels(SimpleNamespace(id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}), "faithfulness")


@pytest.mark.parametrize(("order", "message"), [
    ("entailment,neutral", "names 2 classes; the model has 3"),
    ("entailment,entailment,contradiction", "distinct class names"),
    ("yes,maybe,no", "distinct class names"),
    ("contradiction,neutral,entailment", "the model's config calls it 'entailment'"),  # the config wins
])
def test_a_wrong_label_order_is_one_line(order, message):
    config = SimpleNamespace(id2label={0: "entailment", 1: "neutral", 2: "contradiction"})
    with pytest.raises(UserError, match=message):
        resolve_labels(config, "faithfulness", ScoringOptions(label_order=order).label_order)


def test_a_generic_copy_scores_like_the_named_model_with_its_label_order(tiny_deberta_nli, tmp_path, capsys):
    generic = shutil.copytree(tiny_deberta_nli, tmp_path / "generic")
    config = json.loads((generic / "config.json").read_text())
    order = ",".join(config["id2label"][str(i)].lower() for i in range(len(config["id2label"])))
    config["id2label"] = {str(i): f"LABEL_{i}" for i in range(len(config["id2label"]))}
    config["label2id"] = {f"LABEL_{i}": i for i in range(len(config["id2label"]))}
    (generic / "config.json").write_text(json.dumps(config))
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"grounding": f"Anna bought {i} apples.", "generation": f"Anna has {i}."})
                             + "\n" for i in range(5)))
    base = ["score", "faithfulness", "--input", str(pairs), "--quiet"]
    assert main([*base, "--model", str(generic), "--output", str(tmp_path / "refused.jsonl")]) == 2
    assert "--label-order" in capsys.readouterr().err and not (tmp_path / "refused.jsonl").exists()
    assert main([*base, "--model", str(generic), "--output", str(tmp_path / "g.jsonl"), "--label-order", order]) == 0
    assert main([*base, "--model", str(tiny_deberta_nli), "--output", str(tmp_path / "n.jsonl")]) == 0
    scores = [[json.loads(line)["score"] for line in (tmp_path / name).read_text().splitlines()]
              for name in ("g.jsonl", "n.jsonl")]
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)
