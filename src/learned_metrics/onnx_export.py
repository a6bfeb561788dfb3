"""An export folder -> ``model.onnx`` (and a dynamically quantized ``model.int8.onnx``) beside the safetensors, so
other runtimes need only ``onnxruntime`` (docs/scoring.md, "Engines"). The files and the card's ``onnx`` section are
renamed into place together: a failed export leaves the folder as it was."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from learned_metrics.card import CARD_NAME, read_card
from learned_metrics.errors import UserError, first_line
from learned_metrics.io import dump_json

OPSET = 18
GRAPH_FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx"}
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# a graph's metadata key holding the SHA-256 of the weights it was made from (provenance.weights_sha256): the ONNX
# engine scores a graph only beside those weights (a quantized copy keeps the metadata)
WEIGHTS_KEY = "learned_metrics.weights_sha256"
REMAKE_HINT = "make it again with `learned-metrics export --onnx-from {folder} --overwrite`"
INSTALL_HINT = "pip install 'learned-metrics[onnx]'"
LOAD_HINT = ("onnxruntime.InferenceSession('model.onnx', providers=['CPUExecutionProvider']).run(['logits'], "
             "{name: tokenizer(premise, hypothesis, return_tensors='np')[name] for name in inputs}); softmax of "
             "logits gives the classes of id2label")


def require_onnxruntime() -> Any:
    """The ``onnxruntime`` module, or one line saying how to install the optional dependency."""
    try:
        import onnxruntime
    except ImportError:
        raise UserError(f"the ONNX engine needs onnxruntime, which is not installed: {INSTALL_HINT}") from None
    return onnxruntime


def graph_file(model_dir: str | Path, precision: str) -> Path:
    """The graph of ``precision`` in an export folder; missing: one line saying how to make it."""
    path = Path(model_dir) / GRAPH_FILES[precision]
    if not path.is_file():
        flags = "--onnx-int8" if precision == "int8" else "--onnx"
        raise UserError(f"no {path.name} in this model folder; make it with `learned-metrics export --onnx-from "
                        f"{model_dir} {flags}`, or score with --engine torch", path=model_dir)
    return path


def add_onnx(export_dir: str | Path, *, int8: bool = False, overwrite: bool = False) -> list[Path]:
    """Write ``model.onnx`` (and ``model.int8.onnx``) into ``export_dir`` and record them in its card; every check
    (onnx installed, the folder a safe classifier, no graph replaced without ``overwrite``) before writing."""
    import torch

    from learned_metrics import provenance, safety
    from learned_metrics.outputs import read_marker, staged_files, write_marker
    from learned_metrics.scoring import loading

    require_onnxruntime()
    export_dir = Path(export_dir)
    folder = safety.check_model_folder(export_dir)
    if not export_dir.is_dir():
        raise UserError("--onnx-from takes a local export folder", path=export_dir)
    targets = {p: export_dir / GRAPH_FILES[p] for p in (["fp32", "int8"] if int8 else ["fp32"])}
    existing = [path.name for path in targets.values() if path.exists()]
    if existing and not overwrite:
        raise UserError(f"{', '.join(existing)} already exists; pass --overwrite to replace it", path=export_dir)
    card = read_card(export_dir)
    config = safety.load_config(folder)
    model = loading.load_classifier(folder, config, torch.float32)
    tokenizer = safety.load_tokenizer(folder)
    sample = tokenizer(["a short premise.", "another one, a little longer."], ["a hypothesis.", "two."],
                       padding="max_length", truncation=True, max_length=16, return_tensors="pt")
    inputs = {name: sample[name] for name in INPUT_NAMES if name in sample}
    marker = read_marker(export_dir)
    weights = provenance.weights_sha256(export_dir)[0]  # what the scorer's provenance names beside the graph's scores
    made: dict[str, Any] = {}
    with staged_files() as stage:
        staged = {p: stage(path) for p, path in targets.items()}
        axes = {name: {0: "batch", 1: "sequence"} for name in inputs} | {"logits": {0: "batch"}}
        with _quiet(), torch.no_grad():  # weights inside the file: one file to hash and move (no graphs over 2 GB)
            try:
                program = torch.onnx.export(model, (), kwargs=dict(inputs), input_names=list(inputs),
                                            output_names=["logits"], dynamic_axes=axes, opset_version=OPSET,
                                            dynamo=True)
                program.model.metadata_props[WEIGHTS_KEY] = weights
                program.save(str(staged["fp32"]), external_data=False)
            except Exception as exc:  # the exporter raises many types; one line names the model type
                raise UserError(f"torch.onnx could not export this {model.config.model_type} model "
                                f"({type(exc).__name__}{': ' + first_line(exc) if str(exc).strip() else ''})") from None
        made["fp32"] = {"file": GRAPH_FILES["fp32"], "sha256": provenance.sha256_of([staged["fp32"]])}
        if int8:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            with _quiet():
                quantize_dynamic(staged["fp32"], staged["int8"], weight_type=QuantType.QInt8)
            made["int8"] = {"file": GRAPH_FILES["int8"], "sha256": provenance.sha256_of([staged["int8"]]),
                            "quantization": "onnxruntime.quantization.quantize_dynamic, QInt8 weights (linear "
                                            "layers), activations quantized at run time"}
        if card is not None:
            card["onnx"] = {"exporter": "torch.onnx.export (dynamo)", "torch": torch.__version__, "opset": OPSET,
                            "weights_sha256": weights,
                            "onnxruntime": require_onnxruntime().__version__, "inputs": list(inputs),
                            "outputs": ["logits"], "dynamic_axes": ["batch", "sequence"], "precision": made,
                            "load": LOAD_HINT}
            stage(export_dir / CARD_NAME).write_text(dump_json(card) + "\n", encoding="utf-8")
    if marker is not None:  # the new files are ours: a later `export --overwrite` may replace them
        write_marker(export_dir, marker["kind"])
    return list(targets.values())


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The exporter's and quantizer's progress prints, log lines and warnings are not the user's business."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)
