"""Rule: a head with generic labels (LABEL_0 ...) is refused with the advice of the surface in use: ``score``'s
``--label-order``, training's ``model.head_labels=[...]`` override (found before: training said "pass --label-order",
a flag train.py does not have)."""

from __future__ import annotations

import pytest

from learned_metrics.errors import UserError
from learned_metrics.labels import resolve_label_ids

GENERIC = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}


@pytest.mark.parametrize("option, advice", [
    ("--label-order", "--label-order entailment,neutral,contradiction"),  # control: scoring, as before
    ("model.head_labels", "model.head_labels=[entailment,neutral,contradiction]"),
])
def test_a_generic_head_is_refused_with_the_surfaces_own_option(option, advice):
    with pytest.raises(UserError) as caught:
        resolve_label_ids(GENERIC, ("entailment", "contradiction"), option=option)
    assert advice in str(caught.value) and "\n" not in str(caught.value)
    assert option == "--label-order" or "--label-order" not in str(caught.value)


def test_training_a_generic_nli_head_names_the_training_override(tiny_roberta):
    from learned_metrics.models.classifier import load_pretrained_classifier

    with pytest.raises(UserError, match=r"model\.head_labels=\[") as caught:
        load_pretrained_classifier(str(tiny_roberta), "faithfulness")
    assert "--label-order" not in str(caught.value)


@pytest.mark.parametrize("given", ["e,x", "e,e", ["e", "x"], ""])
def test_score_and_prep_refuse_a_label_order_in_the_same_words(given):
    """One rule for --label-order (labels.parse_label_order): prep's, which also knows not_entailment, refused a
    typo in other words (it quoted its own list of the names, not what the user typed)."""
    from learned_metrics.data.choices import parse_data_label_order
    from learned_metrics.labels import parse_label_order

    messages = []
    for parse in (parse_label_order, parse_data_label_order):
        with pytest.raises(UserError) as refused:
            parse(given)
        messages.append(str(refused.value))
    assert messages[0] == messages[1] and f"got {given!r}" in messages[0]
    assert parse_data_label_order("entailment,not_entailment") == ("entailment", "not_entailment")  # control
