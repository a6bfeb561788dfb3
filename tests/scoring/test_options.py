"""Rule: ScoringOptions refuses combinations that cannot mean anything, in one line, before a model loads: the ONNX
engine runs the exported graph on CPU in fp32 (or int8), without dropout, so a GPU, another precision, a compiled
forward, MC passes and MC masks do not apply to it. Controls: each setting is accepted with the PyTorch engine, and
the ONNX engine's defaults are accepted."""

from __future__ import annotations

import pytest

from learned_metrics.errors import UserError
from learned_metrics.scoring.options import ScoringOptions

NOT_FOR_ONNX = [{"device": "cuda"}, {"precision": "bf16"}, {"compile": True}, {"mc_samples": 5},
                {"mc_masks": "torch"}]


@pytest.mark.parametrize("setting", NOT_FOR_ONNX, ids=lambda s: next(iter(s)))
def test_what_the_onnx_graph_cannot_do_is_refused_in_one_line(setting):
    with pytest.raises(UserError) as caught:
        ScoringOptions(engine="onnx", **setting)
    message = str(caught.value)
    assert "--engine torch" in message and "\n" not in message
    assert f"--{next(iter(setting)).replace('_', '-')}" in message
    assert ScoringOptions(engine="torch", **setting)  # control


def test_the_onnx_engines_defaults_are_accepted():
    assert ScoringOptions(engine="onnx").engine == ScoringOptions(engine="onnx", onnx_precision="int8").engine == "onnx"


@pytest.mark.parametrize("engine", ["torch", "ray"])
def test_an_onnx_precision_without_the_onnx_engine_is_refused(engine):
    """It was taken silently and provenance named int8 beside engine torch: a precision no score came from."""
    with pytest.raises(UserError, match="--onnx-precision int8 is for --engine onnx"):
        ScoringOptions(engine=engine, onnx_precision="int8")
    assert ScoringOptions(engine=engine).onnx_precision == "fp32"  # control


@pytest.mark.parametrize("override", [{"mode": ""}, {"granularity": ""}, {"premise_strategy": ""}, {"progress": 5}])
def test_a_calls_empty_or_wrong_kind_override_is_refused_not_the_scorers_setting(nli_export, override):
    """``mode or self.mode`` took '' as 'not given': the scorer's mode, silently, while load_scorer(mode='') was
    refused; progress=5 was a TypeError. Control: None is the scorer's setting."""
    from learned_metrics.scoring import load_scorer

    scorer = load_scorer(nli_export)
    with pytest.raises(UserError, match=next(iter(override)).replace("_", " ").replace("premise strategy", "premise")):
        scorer.score(["Anna bought apples."], ["Anna has apples."], **override)
    assert scorer.score(["Anna bought apples."], ["Anna has apples."], mode=None).scores.shape == (1,)
