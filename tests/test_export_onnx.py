"""``learned-metrics export --onnx`` / ``--onnx-from EXPORT_DIR``: the ONNX graph beside the safetensors.

The graph loads with plain ``onnxruntime`` (nothing of ours) and gives the PyTorch logits at batch sizes and lengths
other than the exported sample's; the card says how it was made (exporter, opset, torch, SHA-256) and how to load
it; the output marker lists the new files; the same refusals as ``export`` (remote code, an output inside an
input), and an existing graph is replaced only with ``--overwrite``. A control stands beside each refusal.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hostile.hostile_tools import craft_checkpoint, make_remote_code_folder
from hostile.test_resume_integrity import one_error_line

from learned_metrics.cli import main
from learned_metrics.outputs import read_marker
from learned_metrics.provenance import sha256_of

# Every test here exports an ONNX graph (seconds each): the whole module runs in `make test`, not test-fast.
pytestmark = pytest.mark.slow

ort = pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def checkpoint(tiny_deberta_nli, tmp_path_factory) -> Path:
    return craft_checkpoint(tiny_deberta_nli, tmp_path_factory.mktemp("onnx-ckpt") / "best.ckpt")


@pytest.fixture(scope="module")
def exported(checkpoint, tmp_path_factory) -> Path:
    """``export CKPT OUT --onnx-int8``: the export folder with both graphs, made once for this module."""
    out = tmp_path_factory.mktemp("onnx-export") / "export"
    assert main(["export", str(checkpoint), str(out), "--onnx-int8"]) == 0
    return out


def test_graph_loads_with_plain_onnxruntime_and_gives_the_pytorch_logits(exported):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(exported).eval()
    tokenizer = AutoTokenizer.from_pretrained(exported)
    session = ort.InferenceSession(str(exported / "model.onnx"), providers=["CPUExecutionProvider"])
    names = [node.name for node in session.get_inputs()]
    premises = ["A cat sat on the mat all day long, and then it left.", "Rain.", "Anna bought three apples."]
    inputs = tokenizer(premises, ["A cat.", "It rained on Monday in the town.", "Anna."], padding=True,
                       return_tensors="np")
    logits = session.run(["logits"], {name: inputs[name].astype(np.int64) for name in names})[0]
    with torch.no_grad():
        expected = model(**{k: torch.from_numpy(v.astype(np.int64)) for k, v in inputs.items()}).logits.numpy()
    assert logits.shape == (3, 3)  # another batch size and length than the exported sample's (2 x 16)
    np.testing.assert_allclose(logits, expected, atol=1e-5, rtol=0)


def test_card_says_how_each_graph_was_made_and_the_marker_lists_them(exported):
    card = json.loads((exported / "learned_metric.json").read_text())["onnx"]
    assert card["opset"] == 18 and card["torch"] == torch.__version__ and "torch.onnx" in card["exporter"]
    assert "InferenceSession" in card["load"]
    for precision, name in (("fp32", "model.onnx"), ("int8", "model.int8.onnx")):
        assert card["precision"][precision]["sha256"] == sha256_of([exported / name])
    assert {"model.onnx", "model.int8.onnx"} <= set(read_marker(exported)["entries"])


def test_onnx_from_adds_the_graph_to_an_export_and_replaces_it_only_with_overwrite(exported, tmp_path, capsys):
    folder = shutil.copytree(exported, tmp_path / "export")
    (folder / "model.onnx").unlink()
    (folder / "model.int8.onnx").unlink()
    assert main(["export", "--onnx-from", str(folder)]) == 0  # control: the graph is added in place
    assert (folder / "model.onnx").is_file() and not (folder / "model.int8.onnx").exists()
    before = (folder / "model.onnx").stat().st_mtime_ns
    capsys.readouterr()
    one_error_line(capsys, main(["export", "--onnx-from", str(folder)]), "model.onnx already exists", "--overwrite")
    assert (folder / "model.onnx").stat().st_mtime_ns == before
    assert main(["export", "--onnx-from", str(folder), "--overwrite"]) == 0


def test_a_folder_that_would_run_code_is_refused_before_anything_is_written(exported, tmp_path, capsys):
    marker = tmp_path / "ran"
    evil = make_remote_code_folder(exported, tmp_path / "evil", marker)
    (evil / "model.onnx").unlink()
    capsys.readouterr()
    one_error_line(capsys, main(["export", "--onnx-from", str(evil)]), "auto_map")
    assert not marker.exists() and not (evil / "model.onnx").exists()


def test_output_inside_the_checkpoint_folder_is_refused_with_onnx_too(checkpoint, capsys):
    capsys.readouterr()
    code = main(["export", str(checkpoint), str(checkpoint.parent), "--onnx"])
    one_error_line(capsys, code, "an input of this command")
    assert not (checkpoint.parent / "export").exists()


def test_onnx_from_is_its_own_form_of_the_command(checkpoint, exported, tmp_path, capsys):
    capsys.readouterr()
    one_error_line(capsys, main(["export", str(checkpoint), str(tmp_path / "out"), "--onnx-from", str(exported)]),
                   "--onnx-from")
    one_error_line(capsys, main(["export"]), "CHECKPOINT OUTPUT")
