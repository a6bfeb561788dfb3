"""Rule: a training value torch, Lightning or the sampler would refuse only once training runs (or take without a word)
is one line before anything is built, naming the key, what it takes and the value (train.config.CHECKED_VALUES).
Before: ``data.batch_size=0`` and ``trainer.accumulate_grad_batches=0`` were a ZeroDivisionError traceback after the
run folder was written (a rerun was then refused: the folder held files), ``model.lr=-1`` AdamW's ValueError,
``trainer.max_steps=abc`` a TypeError inside Hydra's, ``data.eval_batch_size=0`` fell back to the training size."""

from __future__ import annotations

import pytest

from learned_metrics.boundary import run_command
from learned_metrics.errors import UserError
from learned_metrics.train.config import check_values
from learned_metrics.train.run import train


@pytest.mark.parametrize(("override", "words"), [
    ("data.batch_size=0", "data.batch_size must be an integer >= 1, got 0"),
    ("data.batch_size=-3", "data.batch_size must be an integer >= 1"),
    ("data.eval_batch_size=0", "data.eval_batch_size must be an integer >= 1"),
    ("trainer.accumulate_grad_batches=0", "trainer.accumulate_grad_batches must be an integer >= 1"),
    ("trainer.max_steps=abc", "trainer.max_steps must be an integer >= -1, got 'abc'"),
    ("val_every_n_steps=0", "val_every_n_steps must be an integer >= 1"),
    ("model.lr=-1", "model.lr must be a positive finite number, got -1"),
    ("model.lr=abc", "model.lr must be a positive finite number"),
    ("model.lr=.inf", "model.lr must be a positive finite number"),
    ("model.warmup_ratio=2", "model.warmup_ratio must be in [0, 1], got 2"),
    ("model.weight_decay=-0.1", "model.weight_decay must be a finite number >= 0"),
])
def test_a_value_training_cannot_use_is_one_line_before_anything_is_built(train_config, tmp_path, capsys, override,
                                                                          words):
    cfg = train_config("experiment=nli_demo", override)
    with pytest.raises(UserError, match=words.replace("[", r"\[").replace("]", r"\]")):
        check_values(cfg)
    assert run_command("train.py", lambda: train(cfg)) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and not (tmp_path / "run").exists()


@pytest.mark.parametrize("experiment", ["nli_demo", "ccl_demo", "nli_own_data", "ccl_cnndm", "nli_anli_aug"])
def test_control_the_experiments_values_pass(train_config, experiment):
    check_values(train_config(f"experiment={experiment}"))
    check_values(train_config(f"experiment={experiment}", "data.eval_batch_size=null", "trainer.max_epochs=-1"))
