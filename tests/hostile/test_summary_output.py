"""``score --summary``: the summary is written as JSON, so a name without ``.json`` is refused in one line before any
model loads, by the one-process and the Ray engine alike (outputs.json_file_output); a ``.json`` name gets past."""

from __future__ import annotations

import pytest

from hostile.hostile_tools import write_jsonl
from learned_metrics.cli import main

MISSING_MODEL = "/nonexistent/model-for-option-checks"


@pytest.mark.parametrize("engine", [[], ["--engine", "ray"]])
@pytest.mark.parametrize("name", ["summary.txt", "summary.jsonl", "summary"])
def test_a_summary_not_named_json_is_refused_before_the_model(tmp_path, capsys, engine, name):
    source = write_jsonl(tmp_path / "pairs.jsonl", [{"grounding": "A b.", "generation": "A."}])
    output = tmp_path / ("folder" if engine else "out.jsonl")

    def run(summary: str) -> str:
        code = main(["score", "faithfulness", "--model", MISSING_MODEL, "--input", str(source), "--output",
                     str(output), "--summary", str(tmp_path / summary), "--no-progress", *engine])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        return err

    line = run(name)
    assert "--summary is written as JSON" in line and name in line
    assert "--summary is written as JSON" not in run("summary.json")  # control: past this check (to the model)
    assert not list(tmp_path.glob("summary*")) and not output.exists()
