"""The example notebook runs where Jupyter runs it: through a real kernel (nbclient + ipykernel), started in
``examples/`` (Jupyter's working directory for a notebook there) and at the repository root, against a tiny model
folder; the file keeps the outputs of a real run so it reads on a code host without running."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"


def execute(workdir, monkeypatch, model) -> nbformat.NotebookNode:
    monkeypatch.setenv("LEARNED_METRICS_MODEL", str(model))
    monkeypatch.delenv("LEARNED_METRICS_EXAMPLES", raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return notebook


def text_of(cell) -> str:
    return "".join(output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
                   for output in cell.outputs)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["examples", "root"])
def test_every_cell_runs_through_a_kernel_where_jupyter_starts_it(nli_export, monkeypatch, where):
    notebook = execute(ROOT / "examples" if where == "examples" else ROOT, monkeypatch, nli_export)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert len(code) >= 5 and all(cell.outputs for cell in code)
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    shown = "\n".join(map(text_of, code))
    assert "examples: examples/" in shown
    assert "| dataset | threshold | tuned on |" in shown and "AggreFact-CNN" in shown  # the benchmark cell
    assert "metric_good" in shown and "tau_sys" in shown  # the paper table


def test_a_kernel_elsewhere_is_told_how_to_find_the_examples(tmp_path, monkeypatch):
    """Control: started outside the repository, the first cell says what to do instead of a bare FileNotFoundError
    deep in a later cell."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    setup = next(cell for cell in notebook.cells if cell.cell_type == "code")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEARNED_METRICS_EXAMPLES", raising=False)
    with pytest.raises(FileNotFoundError, match="LEARNED_METRICS_EXAMPLES"):
        exec(compile(setup.source, "notebook cell 1", "exec"), {})
    monkeypatch.setenv("LEARNED_METRICS_EXAMPLES", str(ROOT / "examples"))
    namespace: dict = {}
    exec(compile(setup.source, "notebook cell 1", "exec"), namespace)
    assert namespace["EXAMPLES"] == ROOT / "examples"


def test_the_file_keeps_the_outputs_of_a_real_run():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs for cell in code), "run the notebook and save it with its outputs (see README)"
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert all(cell.execution_count for cell in code)
