"""Rule: ``model.allow_pickle`` is True or False only. A string's truthiness never allows a pickle: ``"no"`` or
``"false"`` once turned on unpickling for the checkpoint resumed from, the trainer's own loads and the model's
weights; now they are one line naming the option, before anything is read or trained (controls: false and true)."""

from __future__ import annotations

import pytest

from learned_metrics.boundary import run_command
from learned_metrics.errors import UserError
from learned_metrics.models.classifier import SequenceClassifier
from learned_metrics.train.run import train


def _no_fit(monkeypatch):
    import lightning

    def fit(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(lightning.Trainer, "fit", fit)


@pytest.mark.parametrize("value, refused", [("no", True), ("'false'", True), ("0", True), ("false", False),
                                            ("true", False)])
def test_train_py_takes_a_boolean_only(train_config, tiny_roberta, ccl_data_dir, monkeypatch, capsys, value, refused):
    _no_fit(monkeypatch)
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       f"model.allow_pickle={value}", "trainer.enable_progress_bar=false")
    if not refused:  # control: a boolean reaches fitting
        with pytest.raises(AssertionError, match="training started"):
            train(cfg)
        return
    assert run_command("train.py", lambda: train(cfg)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "model.allow_pickle" in err and "True or False" in err, err


@pytest.mark.parametrize("value", ["false", "no", 0, 1.0, None])
def test_the_module_takes_a_boolean_only(tiny_roberta, value):
    head = ["incoherent", "coherent"]
    with pytest.raises(UserError, match="model.allow_pickle takes True or False"):
        SequenceClassifier(str(tiny_roberta), head_labels=head, allow_pickle=value)
    assert SequenceClassifier(str(tiny_roberta), head_labels=head, allow_pickle=False).hparams.allow_pickle is False
