"""A library's failure is one line naming what failed, whatever its message: an exception whose message is empty
(or blank) took ``str(exc).splitlines()[0]`` to an IndexError, a traceback instead of the line. The rule lives in
errors.first_line; each place that turns a library error into a UserError goes through it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from learned_metrics import io, sweeps
from learned_metrics.errors import UserError

EMPTY = ["", "   \n\n"]


@pytest.fixture
def parquet_file(tmp_path):
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([{"text": "a"}, {"text": "b"}]), path)
    return path


@pytest.mark.parametrize("message", [*EMPTY, "control: the library's own words"])
def test_a_parquet_file_the_library_cannot_open(parquet_file, monkeypatch, message):
    def refuse(*args, **kwargs):
        raise pa.ArrowInvalid(message)

    monkeypatch.setattr(pq, "ParquetFile", refuse)
    with pytest.raises(UserError, match="not a readable Parquet file") as refused:
        list(io.iter_rows(parquet_file))
    assert (message.strip() or "ArrowInvalid") in str(refused.value)


@pytest.mark.parametrize("message", [*EMPTY, "control: the library's own words"])
def test_parquet_data_the_library_cannot_read(parquet_file, monkeypatch, message):
    def refuse(self, *args, **kwargs):
        raise OSError(message)
        yield

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refuse)
    with pytest.raises(UserError, match="unreadable Parquet data") as refused:
        list(io.iter_rows(parquet_file))
    assert "row 1" in str(refused.value) and (message.strip() or "OSError") in str(refused.value)


@pytest.mark.parametrize("message", [*EMPTY, "control: the library's own words"])
def test_a_sweep_file_the_yaml_reader_refuses(tmp_path, monkeypatch, message):
    path = tmp_path / "sweep.yml"
    path.write_text("program: train.py\n")

    def refuse(*args, **kwargs):
        raise yaml.YAMLError(message)

    monkeypatch.setattr(yaml, "safe_load", refuse)
    with pytest.raises(UserError, match="not valid YAML") as refused:
        sweeps.load_sweep(path, check_config=False)
    assert (message.strip() or "YAMLError") in str(refused.value)


@pytest.mark.parametrize("message", [*EMPTY, "control: the library's own words"])
def test_an_onnx_graph_the_runtime_cannot_load(tmp_path, monkeypatch, message):
    ort = pytest.importorskip("onnxruntime", reason="the ONNX engine is the optional extra learned-metrics[onnx]")
    from learned_metrics.scoring import onnx_engine

    monkeypatch.setattr(onnx_engine, "graph_file", lambda folder, precision: tmp_path / "model.onnx")

    def refuse(*args, **kwargs):
        raise RuntimeError(message)

    monkeypatch.setattr(ort, "InferenceSession", refuse)
    with pytest.raises(UserError, match="onnxruntime cannot load this graph") as refused:
        onnx_engine.OnnxClassifier(tmp_path, "fp32", None)
    assert (message.strip() or "RuntimeError") in str(refused.value)
