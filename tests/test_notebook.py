"""The example notebook runs: every code cell, in order, in one namespace, as a kernel would (no Jupyter needed),
against a tiny model folder, so the notebook cannot rot."""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"


def test_every_code_cell_of_the_example_notebook_runs(nli_export, monkeypatch):
    monkeypatch.setenv("LEARNED_METRICS_MODEL", str(nli_export))
    monkeypatch.chdir(ROOT)  # the notebook reads the shipped example files by relative path
    cells = [cell for cell in json.loads(NOTEBOOK.read_text())["cells"] if cell["cell_type"] == "code"]
    assert len(cells) >= 4
    namespace: dict = {}
    for number, cell in enumerate(cells, start=1):
        tree = ast.parse("".join(cell["source"]), filename=f"{NOTEBOOK.name} cell {number}")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:  # a kernel displays the value of a cell's last expression: evaluate it too
            tree.body.pop()
        exec(compile(tree, f"{NOTEBOOK.name} cell {number}", "exec"), namespace)
        if last is not None:
            namespace["_"] = eval(compile(ast.Expression(last.value), f"{NOTEBOOK.name} cell {number}", "eval"),
                                  namespace)
    scored, table = namespace["scored"], namespace["table"]
    assert len(scored) == 200 and scored["score"].between(-1, 1).all() and (scored["score_std"] >= 0).all()
    assert list(scored.index) == list(range(200))
    assert table.metrics == ["metric_good", "metric_weak"] and len(namespace["_"]) == 5  # head() of the frame
