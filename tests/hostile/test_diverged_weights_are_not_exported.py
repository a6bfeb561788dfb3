"""Rule: an export never holds NaN or infinite weights. A diverged run (every validation NaN) exported its NaN
weights with exit 0, and ``score`` then wrote NaN for every row with exit 0; ``learned-metrics export`` of such a
checkpoint did the same. ``write_export``, which both go through, refuses it in one line before writing anything.
Control: the same model with finite weights exports."""

from __future__ import annotations

import math

import pytest
import torch
from tiny_models import faithfulness_card
from transformers import AutoModelForSequenceClassification

from learned_metrics.errors import UserError
from learned_metrics.export import write_export


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_weights_with_nan_or_inf_are_not_exported(tiny_deberta_nli, tmp_path, bad):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_deberta_nli, trust_remote_code=False)
    assert write_export(model, tiny_deberta_nli, faithfulness_card(), tmp_path / "control").is_dir()
    with torch.no_grad():
        model.classifier.weight[0, 0] = bad
    with pytest.raises(UserError, match=r"1 weight tensor\(s\) hold NaN or infinite values \(first: classifier.weight"):
        write_export(model, tiny_deberta_nli, faithfulness_card(), tmp_path / "export", "run/best.ckpt")
    assert not (tmp_path / "export").exists()
