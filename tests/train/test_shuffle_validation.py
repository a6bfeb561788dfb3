"""The coherence paper's shuffle accuracy as a validation metric (train/target_metric.py ShuffleValidation): pairs are
each held-out document's original with its own shuffles, the value is ``meta-eval shuffle-test``'s on the model's
``score coherence`` scores, a training run logs it beside val/f1, and it can choose the checkpoint."""

from __future__ import annotations

import csv
from pathlib import Path

import datasets
import numpy as np
import pytest

from learned_metrics.labels import COHERENCE_LABELS
from learned_metrics.meta_eval.shuffle_test import shuffle_test
from learned_metrics.scoring import load_scorer
from learned_metrics.train.run import train
from learned_metrics.train.target_metric import ShuffleValidation, shuffle_validation, validation_pairs

QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def test_each_shuffle_is_paired_with_the_original_of_its_own_document(ccl_data_dir):
    texts, is_original, pair_of, original_of = validation_pairs(ccl_data_dir, None, 0)
    split = datasets.load_from_disk(str(ccl_data_dir / "validation"))
    doc_of_text = {}
    for doc, text, label in zip(split["doc_id"], split["text"], split["label"], strict=True):
        doc_of_text[text] = (doc, COHERENCE_LABELS[label])
    for row, text in enumerate(texts):
        doc, label = doc_of_text[text]
        assert (label == "coherent") == is_original[row]
        original = texts[original_of[row]]
        assert doc_of_text[original] == (doc, "coherent")  # the original of the same document
    assert len(set(pair_of)) == int(is_original.sum())  # one original per document


def _relabelled(ccl_data_dir: Path, out: Path, how: str) -> Path:
    """The same shuffle set, its labels stored another way: ClassLabel names in the other order, or texts."""
    sets = datasets.load_from_disk(str(ccl_data_dir))
    names = [COHERENCE_LABELS[i] for i in range(len(COHERENCE_LABELS))]
    if how == "texts":
        sets = sets.map(lambda row: {"label_text": names[row["label"]]}).remove_columns("label")
        sets = sets.rename_column("label_text", "label")
    else:
        flipped = datasets.ClassLabel(names=names[::-1])
        sets = sets.map(lambda row: {"label": flipped.str2int(names[row["label"]])})
        sets = sets.cast_column("label", flipped)
    sets.save_to_disk(str(out))
    return out


@pytest.mark.parametrize("how", ["reversed class names", "texts"])
def test_originals_are_found_by_label_name_not_by_index(ccl_data_dir, tmp_path, how):
    """Found before: a set whose ClassLabel names are [coherent, incoherent] got every shuffle taken for the original
    (val/shuffle_acc inverted: 0.33 for 0.67, so the worst checkpoint was kept), and text labels were refused as
    'no document with its original and a shuffle'. Control: the set as prep writes it, above."""
    expected = validation_pairs(ccl_data_dir, None, 0)
    got = validation_pairs(_relabelled(ccl_data_dir, tmp_path / "set", how), None, 0)
    assert got[0] == expected[0]
    for mine, theirs in zip(got[1:], expected[1:], strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_labels_that_are_not_coherence_labels_are_one_line(ccl_data_dir, tmp_path):
    sets = datasets.load_from_disk(str(ccl_data_dir))
    sets = sets.cast_column("label", datasets.Value("int64")).map(lambda row: {"label": row["label"] + 5})
    sets.save_to_disk(str(tmp_path / "set"))
    with pytest.raises(Exception, match="not coherent/incoherent") as caught:
        validation_pairs(tmp_path / "set", None, 0)
    assert "\n" not in str(caught.value)


def test_max_docs_draws_a_seeded_subsample(ccl_data_dir):
    first = validation_pairs(ccl_data_dir, 3, seed=1)
    again = validation_pairs(ccl_data_dir, 3, seed=1)
    other = validation_pairs(ccl_data_dir, 3, seed=2)
    assert int(first[1].sum()) == 3 and first[0] == again[0]
    assert first[0] != other[0]  # another seed, other documents (80 documents: a clash is unlikely)


def test_the_value_is_meta_eval_shuffle_test_on_score_coherence(coherence_export, ccl_data_dir):
    scorer = load_scorer(coherence_export)
    callback = ShuffleValidation(max_docs=None)
    value = callback.measure(scorer.model, scorer.tokenizer, scorer.card, ccl_data_dir)
    texts, is_original, pair_of, original_of = validation_pairs(ccl_data_dir, None, 0)
    scores = np.asarray(load_scorer(coherence_export).score(texts=texts).scores)
    shuffled = ~is_original
    expected = shuffle_test(scores[original_of[shuffled]], scores[shuffled], pair_index=pair_of[shuffled],
                            resamples=0).accuracy.value
    by_hand = np.mean([1.0 if o > s else 0.5 if o == s else 0.0
                       for o, s in zip(scores[original_of[shuffled]], scores[shuffled], strict=True)])
    assert value == pytest.approx(expected, abs=1e-12) and value == pytest.approx(by_hand, abs=1e-12)
    assert scorer.model.training is False  # left in the mode it was in


def test_on_for_coherence_off_for_nli():
    assert isinstance(shuffle_validation("coherence"), ShuffleValidation)
    assert shuffle_validation("faithfulness") is None


def test_a_training_run_logs_it_and_it_can_choose_the_checkpoint(train_config, tiny_roberta, ccl_data_dir):
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       "trainer.max_epochs=2", "trainer.num_sanity_val_steps=0",
                       "callbacks.model_checkpoint.monitor=val/shuffle_acc", *QUIET)
    metrics = train(cfg)
    run_dir = Path(cfg.paths.output_dir)
    with (run_dir / "csv" / "metrics.csv").open() as handle:
        logged = [row for row in csv.DictReader(handle) if row.get("val/shuffle_acc")]
    assert len(logged) == 3  # each epoch's validation, then the kept checkpoint's
    values = [float(row["val/shuffle_acc"]) for row in logged]
    assert all(0 <= v <= 1 for v in values) and metrics["val/shuffle_acc"] == pytest.approx(values[-1])
    assert values[-1] == pytest.approx(max(values[:-1]))  # the kept checkpoint has the best value
