"""Rule: ``--engine onnx`` scores only a graph made from the weights beside it, the weights its provenance names.

``model.onnx`` is a second copy of the weights. A folder whose ``model.safetensors`` was replaced after the graph was
made (new weights copied in, a retrained model written over the old files) was scored with the old graph: the
scores of a model that is no longer there, exit 0, and the provenance naming the new weights' SHA-256 beside them
(the PyTorch engine gave -1.0 where ONNX gave -0.002 on the same rows). A graph now records the SHA-256 of the weights
it was made from (``learned_metrics.weights_sha256`` in its metadata; the int8 copy keeps it) and the ONNX engine
refuses, in one line, a graph whose weights are not the folder's; a graph made before it was recorded is scored
with a one-line warning that it cannot be checked. Controls: the graph of the folder's own weights scores as the
PyTorch engine does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny_models import GENERATIONS, GROUNDINGS, biased_copy

from hostile.hostile_tools import PAIRS, assert_refused, cli, write_jsonl
from learned_metrics.errors import UserError
from learned_metrics.scoring import load_scorer

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.slow  # one graph export (seconds), as tests/scoring/test_onnx_engine.py


@pytest.fixture(scope="module")
def with_graphs(nli_export, tmp_path_factory) -> Path:
    from learned_metrics.onnx_export import add_onnx

    folder = tmp_path_factory.mktemp("onnx-weights") / "export"
    shutil.copytree(nli_export, folder)
    add_onnx(folder, int8=True)
    return folder


@pytest.fixture(scope="module")
def other_weights(nli_export, tmp_path_factory) -> Path:
    """The same architecture with other weights: contradiction wins every pair."""
    return biased_copy(nli_export, tmp_path_factory.mktemp("biased") / "model", "contradiction") / "model.safetensors"


def _swapped(with_graphs: Path, other_weights: Path, target: Path) -> Path:
    shutil.copytree(with_graphs, target)
    shutil.copy(other_weights, target / "model.safetensors")
    return target


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_graph_of_other_weights_is_refused_by_load_scorer(with_graphs, other_weights, tmp_path, precision):
    folder = _swapped(with_graphs, other_weights, tmp_path / "export")
    with pytest.raises(UserError, match=r"other weights") as caught:
        load_scorer(folder, engine="onnx", onnx_precision=precision)
    message = str(caught.value)
    assert "\n" not in message and "--onnx-from" in message and "model." in message


def test_the_command_refuses_a_graph_of_other_weights_in_one_line(with_graphs, other_weights, tmp_path, capsys):
    folder = _swapped(with_graphs, other_weights, tmp_path / "export")
    source, output = write_jsonl(tmp_path / "pairs.jsonl", PAIRS), tmp_path / "scored.jsonl"
    result = cli(capsys, "score", "faithfulness", "--model", folder, "--engine", "onnx", "--input", source,
                 "--output", output, "--no-progress")
    assert_refused(result, "model.onnx", "other weights", "--onnx-from")
    assert not output.exists()


def test_a_graph_that_records_no_weights_is_scored_with_a_warning(with_graphs, tmp_path):
    import onnx

    folder = tmp_path / "export"
    shutil.copytree(with_graphs, folder)
    graph = onnx.load(folder / "model.onnx")
    del graph.metadata_props[:]
    onnx.save(graph, folder / "model.onnx")
    scorer = load_scorer(folder, engine="onnx")
    with pytest.warns(UserWarning, match=r"does not record the weights"):
        scores = scorer.score(GROUNDINGS, GENERATIONS).scores
    np.testing.assert_allclose(scores, load_scorer(folder).score(GROUNDINGS, GENERATIONS).scores, atol=1e-5)


def test_control_the_graph_of_the_folders_weights_scores_as_torch(with_graphs, recwarn):
    onnx_result = load_scorer(with_graphs, engine="onnx").score(GROUNDINGS, GENERATIONS)
    torch_result = load_scorer(with_graphs).score(GROUNDINGS, GENERATIONS)
    np.testing.assert_allclose(onnx_result.scores, torch_result.scores, atol=1e-5)
    assert onnx_result.provenance["weights_sha256"] == torch_result.provenance["weights_sha256"]
    assert not [w for w in recwarn if "record" in str(w.message)]


def test_control_the_swapped_weights_score_with_torch(with_graphs, other_weights, tmp_path):
    folder = _swapped(with_graphs, other_weights, tmp_path / "export")
    assert (load_scorer(folder).score(GROUNDINGS, GENERATIONS).scores < -0.9).all()


def test_control_a_graph_without_weights_beside_it_scores(with_graphs, tmp_path, recwarn):
    """An ONNX-only copy of the folder (no safetensors): the graph is the only copy, nothing to disagree with."""
    folder = tmp_path / "export"
    shutil.copytree(with_graphs, folder)
    (folder / "model.safetensors").unlink()
    scores = load_scorer(folder, engine="onnx").score(GROUNDINGS, GENERATIONS).scores
    np.testing.assert_allclose(scores, load_scorer(with_graphs).score(GROUNDINGS, GENERATIONS).scores, atol=1e-5)
    assert not [w for w in recwarn if "record" in str(w.message)]
