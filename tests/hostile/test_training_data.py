"""Class 7: training data is checked before fitting.

Rule: every split a training run needs (train and validation, and test when the run tests) exists,
has rows and has the columns the task reads (its text field(s) and the label field), checked before
the trainer is built: a damaged set is one line naming the folder and the split, the run folder is
not created and nothing is written into the data set (no tokenization cache). Before this rule, an
empty validation split ended in an IndexError traceback from ``datasets`` inside the datamodule, and
``test=true`` on a set without a test split finished without testing and without a word.

One place enforces it: ``TextClassificationDataModule.check_data`` (learned_metrics/train/datamodule.py),
called by ``train.run`` in its check step. Controls: an intact set trains, with and without testing,
and a set without a test split trains when the run does not test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostile.hostile_tools import assert_refused, damaged_dataset, digest, temporaries, train_run

pytestmark = pytest.mark.slow

FAST = ["trainer.max_epochs=1", "data.max_train_rows=32", "data.max_eval_rows=16", "trainer.num_sanity_val_steps=0",
        "trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def _ccl(train_config, tiny_roberta, data: Path, *extra: str):
    return train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={data}", *FAST,
                        *extra)


def _nli(train_config, tiny_deberta_nli, data: Path, *extra: str):
    return train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                        f"data.path={data}", *FAST, "trainer.max_steps=2", "val_every_n_steps=2", *extra)


def _empty(split):
    def edit(splits):
        splits[split] = splits[split].select([])
    return edit


def _without_split(split):
    def edit(splits):
        del splits[split]
    return edit


def _without_column(split, column):
    def edit(splits):
        splits[split] = splits[split].remove_columns(column)
    return edit


def _refused_before_anything(result, data: Path, before: dict, run_dir: Path, *fragments: str) -> None:
    assert_refused(result, str(data), *fragments)
    assert digest(data) == before, "the refused run wrote into the data set"
    assert not run_dir.exists(), sorted(p.name for p in run_dir.iterdir())
    assert temporaries(data.parent) == []


@pytest.mark.parametrize(
    ("edit", "extra", "fragments"),
    [(_empty("validation"), [], ["split 'validation'", "no rows"]),
     (_empty("train"), [], ["split 'train'", "no rows"]),
     (_without_split("test"), ["test=true"], ["split 'test'", "missing", "test=true"]),
     (_without_split("validation"), [], ["split 'validation'", "missing"]),
     (_without_column("validation", "text"), [], ["split 'validation'", "'text'"]),
     (_without_column("test", "label"), ["test=true"], ["split 'test'", "'label'"])],
    ids=["empty-validation", "empty-train", "no-test-split-when-testing", "no-validation-split",
         "validation-without-text", "test-without-label"],
)
def test_damaged_coherence_set_is_one_line_before_fitting(train_config, tiny_roberta, ccl_data_dir, tmp_path, capsys,
                                                          edit, extra, fragments):
    data = damaged_dataset(ccl_data_dir, tmp_path / "data" / "set", edit)
    before = digest(data)
    cfg = _ccl(train_config, tiny_roberta, data, *extra)
    result = train_run(capsys, cfg)
    _refused_before_anything(result, data, before, Path(cfg.paths.output_dir), *fragments)


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [(_without_column("train", "hypothesis"), ["split 'train'", "'hypothesis'"]),
     (_empty("validation"), ["split 'validation'", "no rows"])],
    ids=["train-without-hypothesis", "empty-validation"],
)
def test_damaged_nli_set_is_one_line_before_fitting(train_config, tiny_deberta_nli, nli_data_dir, tmp_path, capsys,
                                                    edit, fragments):
    data = damaged_dataset(nli_data_dir, tmp_path / "data" / "set", edit)
    before = digest(data)
    cfg = _nli(train_config, tiny_deberta_nli, data)
    result = train_run(capsys, cfg)
    _refused_before_anything(result, data, before, Path(cfg.paths.output_dir), *fragments)


# --- controls: the check refuses damage, not data ------------------------------------------------------------


def test_control_intact_set_trains_and_tests(train_config, tiny_roberta, ccl_data_dir, tmp_path, capsys):
    data = damaged_dataset(ccl_data_dir, tmp_path / "data" / "set", lambda splits: None)
    cfg = _ccl(train_config, tiny_roberta, data, "test=true")
    result = train_run(capsys, cfg)
    assert result.code == 0, result.err[-3000:]
    card = json.loads((Path(cfg.paths.output_dir) / "export" / "learned_metric.json").read_text())
    assert "val/loss" in card["validation"] and "test/loss" in card["test"]


def test_control_no_test_split_trains_when_the_run_does_not_test(train_config, tiny_roberta, ccl_data_dir, tmp_path,
                                                                 capsys):
    data = damaged_dataset(ccl_data_dir, tmp_path / "data" / "set", _without_split("test"))
    cfg = _ccl(train_config, tiny_roberta, data)
    result = train_run(capsys, cfg)
    assert result.code == 0, result.err[-3000:]
    assert (Path(cfg.paths.output_dir) / "export" / "model.safetensors").is_file()


def test_control_intact_nli_set_trains(train_config, tiny_deberta_nli, nli_data_dir, tmp_path, capsys):
    data = damaged_dataset(nli_data_dir, tmp_path / "data" / "set", lambda splits: None)
    cfg = _nli(train_config, tiny_deberta_nli, data)
    result = train_run(capsys, cfg)
    assert result.code == 0, result.err[-3000:]
    assert (Path(cfg.paths.output_dir) / "export" / "model.safetensors").is_file()
