"""Rule: the file options of ``learned-metrics score`` (chunk size, resume, restart, formats, system field, details)
are one Settings declaration: parsed strictly from the API as from the CLI, and the ones that change an output are
in the resume fingerprint without being listed there by hand."""

from __future__ import annotations

import dataclasses

import pytest

from learned_metrics.errors import UserError
from learned_metrics.scoring.options import FileRun


@pytest.mark.parametrize(("name", "value"), [("resume", "no"), ("restart", 0.0), ("details", "false"),
                                             ("chunk_size", 0), ("chunk_size", True), ("output_format", "xlsx")])
def test_a_file_option_of_the_wrong_kind_is_one_line_naming_it(name, value):
    with pytest.raises(UserError) as caught:
        FileRun(**{name: value})
    message = str(caught.value)
    assert (name in message or "--" + name.replace("_", "-") in message) and "\n" not in message


def test_valid_file_options_are_kept():  # control
    run = FileRun(resume=True, chunk_size=5, output_format="csv", system_field="system", details=True)
    assert (run.resume, run.chunk_size, run.output_format, run.system_field, run.details) == (True, 5, "csv",
                                                                                              "system", True)


def test_resume_and_restart_together_are_refused_by_the_api_as_by_the_cli(nli_export, tmp_path, capsys):
    from learned_metrics.cli import main

    with pytest.raises(UserError, match="--resume or --restart, not both"):
        FileRun(resume=True, restart=True)
    assert FileRun(restart=True).restart and FileRun(resume=True).resume  # controls: each alone
    source = tmp_path / "in.jsonl"
    source.write_text('{"grounding": "a", "generation": "b"}\n', encoding="utf-8")
    args = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
            str(tmp_path / "out.jsonl"), "--no-progress"]
    assert main([*args, "--resume", "--restart"]) == 2
    assert capsys.readouterr().err.strip().endswith("give --resume or --restart, not both")
    assert main([*args, "--restart"]) == 0 and (tmp_path / "out.jsonl").exists()  # control


def test_the_fingerprint_takes_the_file_options_that_change_an_output(nli_export, tmp_path):
    from learned_metrics.scoring.runner import InputFields, run_fingerprint
    from learned_metrics.scoring.scorer import load_scorer

    scorer = load_scorer(nli_export)
    changed = {spec.name for spec in dataclasses.fields(FileRun) if spec.metadata["scores"]}
    assert changed == {"chunk_size", "details"}
    base = run_fingerprint(scorer, tmp_path / "in.jsonl", InputFields("faithfulness"), FileRun(), 1, ["jsonl"] * 2)
    for name, value in (("chunk_size", 7), ("details", True)):
        other = run_fingerprint(scorer, tmp_path / "in.jsonl", InputFields("faithfulness"),
                                FileRun(**{name: value}), 1, ["jsonl"] * 2)
        assert other[name] == value and other != base
    # control: resuming, restarting and the system field never change the output's scores
    same = run_fingerprint(scorer, tmp_path / "in.jsonl", InputFields("faithfulness"),
                           FileRun(resume=True, system_field="system"), 1, ["jsonl"] * 2)
    assert same == base
