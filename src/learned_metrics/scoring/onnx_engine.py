"""``score --engine onnx``: :class:`OnnxClassifier` stands where the PyTorch model stands (``model(**batch).logits``,
``model.config``), so everything but the forward is the PyTorch engine's. The graph (``model.onnx`` or
``model.int8.onnx``) has no dropout: Monte-Carlo passes are refused."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from learned_metrics.errors import UserError, first_line
from learned_metrics.onnx_export import REMAKE_HINT, WEIGHTS_KEY, graph_file, require_onnxruntime

INT8_NOTE = "int8 ONNX scores are an approximation of the fp32 model's (docs/scoring.md, 'Engines')"
UNRECORDED_NOTE = ("{graph} does not record the weights it was made from (made before learned-metrics recorded "
                   "them), so it cannot be checked against this folder's: if the weights changed since, these are "
                   "not their scores; " + REMAKE_HINT)


class OnnxClassifier:
    """A sequence classifier whose logits come from an ``onnxruntime.InferenceSession`` (CPU provider, the threads
    torch was given), called like the transformers model it was exported from."""

    def __init__(self, model_dir: str | Path, precision: str, config: Any):
        ort = require_onnxruntime()
        self.path = graph_file(model_dir, precision)
        self.config = config
        self._notes = [INT8_NOTE] if precision == "int8" else []  # said at the first forward: a file run's lines
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise UserError(f"onnxruntime cannot load this graph ({first_line(exc)}); make it again "
                            "with `learned-metrics export --onnx-from DIR --overwrite`", path=self.path) from None
        self.inputs = [node.name for node in self.session.get_inputs()]
        self.weights = self._check_weights(model_dir)

    def _check_weights(self, model_dir: str | Path) -> tuple[str | None, list[str]]:
        """The folder's weights (``provenance.weights_sha256``, which the scorer's provenance then names), refused
        when the graph records other weights: its scores would be another model's. A folder with the graph and no
        weights (an ONNX-only copy) has nothing to disagree with."""
        from learned_metrics.provenance import weights_sha256

        weights = weights_sha256(model_dir)
        recorded = self.session.get_modelmeta().custom_metadata_map.get(WEIGHTS_KEY)
        hint = REMAKE_HINT.format(folder=model_dir)
        if recorded is None:
            self._notes.append(UNRECORDED_NOTE.format(graph=self.path.name, folder=model_dir))
        elif weights[0] is not None and recorded != weights[0]:
            raise UserError(f"this graph was made from other weights (sha256 {recorded[:12]}…) than the folder's "
                            f"{', '.join(weights[1])} (sha256 {weights[0][:12]}…): its scores would be another "
                            f"model's; {hint}", path=self.path)
        return weights

    def eval(self) -> OnnxClassifier:
        """As ``nn.Module.eval``: a graph has no training mode (and no dropout) to switch off."""
        return self

    def __call__(self, **batch: torch.Tensor) -> SimpleNamespace:
        for note in self._notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        self._notes = []
        feed = {name: batch[name].numpy() if name in batch else torch.zeros_like(batch["input_ids"]).numpy()
                for name in self.inputs}
        return SimpleNamespace(logits=torch.from_numpy(self.session.run(["logits"], feed)[0]))

    @functools.cached_property
    def sha256(self) -> str:
        """The graph's SHA-256, hashed once (a base-sized graph is hundreds of MB)."""
        from learned_metrics.provenance import sha256_of

        return sha256_of([self.path])
