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
from learned_metrics.onnx_export import graph_file, require_onnxruntime

INT8_NOTE = "int8 ONNX scores are an approximation of the fp32 model's (docs/scoring.md, 'Engines')"


class OnnxClassifier:
    """A sequence classifier whose logits come from an ``onnxruntime.InferenceSession`` (CPU provider, the threads
    torch was given), called like the transformers model it was exported from."""

    def __init__(self, model_dir: str | Path, precision: str, config: Any):
        ort = require_onnxruntime()
        self.path = graph_file(model_dir, precision)
        self.config = config
        self._note = INT8_NOTE if precision == "int8" else None  # said at the first forward: a file run's one line
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise UserError(f"onnxruntime cannot load this graph ({first_line(exc)}); make it again "
                            "with `learned-metrics export --onnx-from DIR --overwrite`", path=self.path) from None
        self.inputs = [node.name for node in self.session.get_inputs()]

    def eval(self) -> OnnxClassifier:
        """As ``nn.Module.eval``: a graph has no training mode (and no dropout) to switch off."""
        return self

    def __call__(self, **batch: torch.Tensor) -> SimpleNamespace:
        if self._note:
            warnings.warn(self._note, UserWarning, stacklevel=2)
            self._note = None
        feed = {name: batch[name].numpy() if name in batch else torch.zeros_like(batch["input_ids"]).numpy()
                for name in self.inputs}
        return SimpleNamespace(logits=torch.from_numpy(self.session.run(["logits"], feed)[0]))

    @functools.cached_property
    def sha256(self) -> str:
        """The graph's SHA-256, hashed once (a base-sized graph is hundreds of MB)."""
        from learned_metrics.provenance import sha256_of

        return sha256_of([self.path])
