"""One tokenization path: training and scoring turn the same rows into identical token ids."""

from __future__ import annotations

import datasets
import pytest

from learned_metrics.labels import NLI_LABELS
from learned_metrics.safety import load_tokenizer
from learned_metrics.scoring.batching import encode
from learned_metrics.train.datamodule import TextClassificationDataModule

LONG_PREMISE = "On Monday, Anna went to the market and bought apples, pears, bread and coffee for the week. " * 3
ROWS = {
    "premise": [LONG_PREMISE, "Ben slept.", "Carla ran home.", "Short."],
    "hypothesis": ["Anna bought apples.", "Ben slept all day.", "Carla ran.",
                   "A hypothesis far too long to fit beside any premise at this length, so it is cut too."],
    "label": ["entailment", "neutral", "entailment", "contradiction"],
}


@pytest.mark.parametrize("max_length", [12, 24, 128])
def test_training_and_scoring_encode_pairs_identically(tiny_deberta_nli, tmp_path, max_length):
    folder = tmp_path / "set"
    split = datasets.Dataset.from_dict(ROWS)
    datasets.DatasetDict({"train": split, "validation": split}).save_to_disk(str(folder))
    module = TextClassificationDataModule(str(folder), tokenizer=str(tiny_deberta_nli),
                                          text_fields=("premise", "hypothesis"), max_length=max_length)
    module.set_label_ids({label: i for i, label in enumerate(NLI_LABELS)})
    module.setup("fit")
    trained = [list(map(int, ids)) for ids in module.splits["validation"].with_format(None)["input_ids"]]

    scored = encode(load_tokenizer(tiny_deberta_nli), ROWS["premise"], ROWS["hypothesis"], max_length)
    assert trained == [scored.ids[a:b].tolist() for a, b in zip(scored.offsets[:-1], scored.offsets[1:], strict=True)]
    assert module.truncated["validation"] == int(scored.truncated.sum())
    assert all(len(ids) <= max_length for ids in trained)
    # the last hypothesis (56 tokens) alone does not fit at 12 or 24: both paths fall back to cutting it too
    assert scored.second_truncated[-1] == (max_length < 56) and not scored.second_truncated[0]
