"""Label resolution: a ``--label-order`` names a head's classes only where the config does not.

docs/scoring.md: a config that names its labels is read by name, and a ``--label-order`` that disagrees with it
is refused. A two-class ``entailment``/``not_entailment`` head names both its classes; ``not_entailment`` is not
contradiction (it is neutral and contradiction together), so ``--label-order e,c`` on it disagrees with the config
and is refused, and without ``--label-order`` the head is refused in one line that says why (e-c needs a
contradiction class). The controls: the same order on a head with generic labels, and the documented heads.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hostile.hostile_tools import write_jsonl
from tiny_models import build_model

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.labels import ordered_id2label
from learned_metrics.scoring.loading import resolve_labels

TWO_CLASS = {0: "entailment", 1: "not_entailment"}


@pytest.mark.parametrize("order", [("entailment", "contradiction"), ("entailment", "neutral")])
def test_an_order_that_renames_a_named_class_is_refused(order):
    with pytest.raises(UserError, match="class 1 is .*the model's config calls it 'not_entailment'") as info:
        ordered_id2label(TWO_CLASS, order)
    assert "\n" not in str(info.value)


def test_the_same_order_on_a_generic_two_class_head_is_accepted():  # control
    config = SimpleNamespace(id2label={0: "LABEL_0", 1: "LABEL_1"})
    assert resolve_labels(config, "faithfulness", ("entailment", "contradiction")) == {"entailment": 0,
                                                                                      "contradiction": 1}


def test_an_order_that_agrees_with_the_config_is_accepted():  # control
    named = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    assert ordered_id2label(named, ("contradiction", "neutral", "entailment")) == {
        0: "contradiction", 1: "neutral", 2: "entailment"}


@pytest.mark.parametrize("other", ["not_entailment", "non-entailment", "no_entailment", "not_entail", "NOT_ENTAILED"])
def test_a_two_class_entailment_head_without_an_order_is_refused_saying_why(other):
    """Every spelling that prepared data sets read as not_entailment (data/choices) is refused the same way."""
    with pytest.raises(UserError, match="not_entailment is not contradiction") as info:
        resolve_labels(SimpleNamespace(id2label={0: "entailment", 1: other}), "faithfulness")
    assert "\n" not in str(info.value)


@pytest.fixture(scope="module")
def two_class_nli(tmp_path_factory) -> Path:
    return build_model(tmp_path_factory.mktemp("two-class-nli"), "deberta", id2label=TWO_CLASS)


def test_the_score_command_refuses_e_c_on_an_entailment_not_entailment_head(two_class_nli, tiny_deberta_nli,
                                                                            tmp_path, capsys):
    source = write_jsonl(tmp_path / "pairs.jsonl", [{"grounding": "Anna bought apples.",
                                                     "generation": "Anna has apples."}] * 3)
    base = ["score", "faithfulness", "--input", str(source), "--no-progress", "--quiet"]
    for extra in (["--label-order", "e,c"], []):
        output = tmp_path / "refused.jsonl"
        assert main([*base, "--model", str(two_class_nli), "--output", str(output), *extra]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "not_entailment" in err, err
        assert not output.exists()
    # control: a head that names entailment, neutral and contradiction scores
    assert main([*base, "--model", str(tiny_deberta_nli), "--output", str(tmp_path / "ok.jsonl")]) == 0
    assert len((tmp_path / "ok.jsonl").read_text().splitlines()) == 3
    assert json.loads((tmp_path / "ok.jsonl").read_text().splitlines()[0])["prob_contradiction"] >= 0


def test_a_generic_coherence_head_is_scored_with_the_label_order_the_refusal_names(tiny_roberta, tmp_path, capsys):
    """The refusal of a LABEL_0/LABEL_1 coherence head said to pass --label-order, which score coherence did not
    take (unrecognized arguments): the model could not be scored from the command line. Both kinds take it now."""
    source = write_jsonl(tmp_path / "texts.jsonl", [{"text": "First this. Then that."}] * 2)
    base = ["score", "coherence", "--model", str(tiny_roberta), "--input", str(source), "--quiet"]
    assert main([*base, "--output", str(tmp_path / "refused.jsonl")]) == 2
    assert "--label-order incoherent,coherent" in capsys.readouterr().err
    assert main([*base, "--output", str(tmp_path / "ok.jsonl"), "--label-order", "incoherent,coherent"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "ok.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(row["score"] == row["prob_coherent"] for row in rows)
