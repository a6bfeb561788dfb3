"""Rule: the validation callbacks' options (``callbacks.faithfulness_validation``, ``callbacks.shuffle_validation``
in conf/callbacks/default.yaml) are one Settings declaration each, filled by the Hydra config and parsed strictly
once: a string, a bool, NaN or infinity where a number is needed is one UserError naming the option, before any
training; the valid value beside each refusal is the control."""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from learned_metrics.boundary import run_command
from learned_metrics.errors import UserError
from learned_metrics.train import target_metric
from learned_metrics.train.run import train
from learned_metrics.train.target_metric import FaithfulnessValidation, faithfulness_validation, shuffle_validation

ROOT = Path(__file__).resolve().parents[2]
LLM_AGGREFACT = ROOT / "examples" / "benchmarks" / "llm_aggrefact"
CALLBACKS = yaml.safe_load((ROOT / "conf" / "callbacks" / "default.yaml").read_text())
NOT_INTS = ["false", "200", True, 2.5, math.nan, math.inf]
NOT_NUMBERS = ["false", "0.5", True, math.nan, math.inf, -math.inf]


def _refused(build, name: str) -> str:
    with pytest.raises(UserError) as caught:
        build()
    message = str(caught.value)
    assert "\n" not in message and name in message, message
    return message


@pytest.mark.parametrize("wrong", NOT_INTS, ids=repr)
def test_rows_per_dataset_takes_an_integer_only(wrong):
    _refused(lambda: faithfulness_validation(LLM_AGGREFACT, max_rows_per_dataset=wrong), "max_rows_per_dataset")
    assert faithfulness_validation(LLM_AGGREFACT, max_rows_per_dataset=5).settings.max_rows_per_dataset == 5


@pytest.mark.parametrize("wrong", [*NOT_INTS, -1], ids=repr)
def test_seeds_take_an_integer_only(wrong):
    _refused(lambda: faithfulness_validation(LLM_AGGREFACT, seed=wrong), "seed")
    _refused(lambda: shuffle_validation("coherence", seed=wrong), "seed")
    assert faithfulness_validation(LLM_AGGREFACT, seed=3).settings.seed == 3  # controls
    assert shuffle_validation("coherence", seed=3).settings.seed == 3


@pytest.mark.parametrize("wrong", NOT_NUMBERS, ids=repr)
def test_a_fixed_threshold_takes_a_finite_number_only(wrong):
    _refused(lambda: faithfulness_validation(LLM_AGGREFACT, threshold_protocol="fixed", threshold=wrong), "threshold")
    control = faithfulness_validation(LLM_AGGREFACT, threshold_protocol="fixed", threshold=0.25)
    assert control.settings.threshold == 0.25


@pytest.mark.parametrize("wrong", NOT_INTS, ids=repr)
def test_shuffle_documents_take_an_integer_only(wrong):
    _refused(lambda: shuffle_validation("coherence", max_docs=wrong), "max_docs")
    assert shuffle_validation("coherence", max_docs=None).settings.max_docs is None  # control: every document


@pytest.mark.parametrize("name, wrong", [("premise_strategy", "whole"), ("granularity", True), ("max_length", "64"),
                                         ("max_tokens", math.nan), ("batch_size", 0), ("layout", "csv")])
def test_the_scoring_and_reading_options_are_parsed_by_their_own_declaration(name, wrong):
    _refused(lambda: faithfulness_validation(LLM_AGGREFACT, **{name: wrong}), name.replace("_", "-"))


def test_an_unknown_option_is_one_line_listing_the_known_ones():
    message = _refused(lambda: faithfulness_validation(LLM_AGGREFACT, max_rows=5), "max_rows")
    assert "max_rows_per_dataset" in message
    _refused(lambda: shuffle_validation("coherence", max_doc=5), "max_docs")


@pytest.mark.parametrize("entry", ["faithfulness_validation", "shuffle_validation"])
def test_the_config_fills_exactly_the_declared_fields(entry):
    """Declared once: the config entry names every field of its settings object (and nothing else but where the
    callback goes and which run it belongs to), with the declared defaults."""
    declared = {"faithfulness_validation": target_metric.FaithfulnessValidationSettings,
                "shuffle_validation": target_metric.ShuffleValidationSettings}[entry]
    config = {k: v for k, v in CALLBACKS[entry].items() if k not in ("_target_", "benchmark", "metric_kind")}
    assert list(config) == [spec.name for spec in fields(declared)]
    assert declared.from_keywords(**config) == declared()
    assert declared().to_json() == config


def test_the_callback_holds_the_settings_and_scores_with_them():
    callback = FaithfulnessValidation(LLM_AGGREFACT, max_rows_per_dataset=5, premise_strategy="chunk", batch_size=4)
    assert callback.settings.max_rows_per_dataset == 5
    assert (callback.options.premise_strategy, callback.options.batch_size) == ("chunk", 4)
    assert (callback.options.mode, callback.options.mc_samples) == ("e-c", 1)  # one deterministic e-c pass


@pytest.mark.parametrize("override, refused", [("threshold=nan", "threshold"), ("seed=true", "seed"),
                                               ("max_rows_per_dataset=false", "max_rows_per_dataset"),
                                               ("max_rows_per_dataset=50", None)])
def test_a_bad_config_value_stops_train_py_in_one_line(train_config, tiny_deberta_nli, nli_data_dir, monkeypatch,
                                                       capsys, override, refused):
    import lightning

    def fit(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(lightning.Trainer, "fit", fit)
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={nli_data_dir}", f"faithfulness_benchmark={LLM_AGGREFACT}",
                       "callbacks.faithfulness_validation.threshold_protocol=fixed",
                       f"callbacks.faithfulness_validation.{override}", "trainer.enable_progress_bar=false")
    if refused is None:  # control: a valid value gets as far as fitting
        with pytest.raises(AssertionError, match="training started"):
            train(cfg)
        return
    assert run_command("train.py", lambda: train(cfg)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and refused in err, err
