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
