"""``--resume`` continues only the run it interrupted: every option that can change a score is in the fingerprint.

A resumed run whose options differ from the interrupted run's would join rows scored one way to rows scored
another (``--label-order`` reversed gives the opposite sign) and record the new options for all of them. So each
score-changing option, changed on resume, is one line naming the option, the old and the new value; the control
beside each refusal resumes with the same options and gives the uninterrupted run's bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile.hostile_tools import write_jsonl
from hostile.test_resume_integrity import base_args, folder_of, interrupt, one_error_line, progress, rows
from tiny_models import build_model

from learned_metrics.cli import main
from learned_metrics.errors import UserError

ORDER = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def generic_nli(tmp_path_factory) -> Path:
    """A tiny NLI head whose config never named its classes (LABEL_0..2): ``--label-order`` is accepted."""
    return build_model(tmp_path_factory.mktemp("generic-nli"), "deberta",
                       id2label={i: f"LABEL_{i}" for i in range(3)})


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("resume-fingerprint") / "pairs.jsonl", rows())


def _resume_refused(monkeypatch, capsys, args: list[str], changed: list[str], output: Path) -> str:
    interrupt(monkeypatch, args)
    assert progress(output)["chunks"] == 3
    capsys.readouterr()
    line = one_error_line(capsys, main([*changed, "--resume"]), "cannot resume")
    assert not output.exists() and progress(output)["chunks"] == 3  # the interrupted work is kept
    return line


def test_resume_with_another_label_order_is_refused_naming_it(generic_nli, source, tmp_path, monkeypatch, capsys):
    output = tmp_path / "scored.jsonl"
    args = base_args(generic_nli, source, output, "--label-order", ",".join(ORDER))
    reversed_order = tuple(reversed(ORDER))
    line = _resume_refused(monkeypatch, capsys, args,
                           base_args(generic_nli, source, output, "--label-order", ",".join(reversed_order)), output)
    assert f"label_order: {list(ORDER)!r} then, {list(reversed_order)!r} now" in line

    # control: the same order resumes, and gives the uninterrupted run's bytes
    whole = tmp_path / "whole.jsonl"
    assert main(base_args(generic_nli, source, whole, "--label-order", ",".join(ORDER))) == 0
    assert main([*args, "--resume"]) == 0
    assert output.read_bytes() == whole.read_bytes() and not folder_of(output).exists()


def test_the_same_order_in_its_short_spelling_is_the_same_run(generic_nli, source, tmp_path, monkeypatch):
    output = tmp_path / "scored.jsonl"
    interrupt(monkeypatch, base_args(generic_nli, source, output, "--label-order", ",".join(ORDER)))
    assert main(base_args(generic_nli, source, output, "--label-order", "e,n,c", "--resume")) == 0


# (option, options of the interrupted run, options of the resume, old value, new value as the fingerprint holds them)
CHANGES = [
    ("mode", ["--mode", "e-c"], ["--mode", "e"], "e-c", "e"),
    ("mc_samples", ["--mc-samples", "1"], ["--mc-samples", "2"], 1, 2),
    ("seed", ["--mc-samples", "2", "--seed", "0"], ["--mc-samples", "2", "--seed", "1"], 0, 1),
    ("max_length", ["--max-length", "64"], ["--max-length", "48"], 64, 48),
    ("premise_strategy", [], ["--premise-strategy", "chunk"], "truncate", "chunk"),
    ("granularity", [], ["--granularity", "sentence"], "document", "sentence"),
    ("precision", ["--precision", "fp32"], ["--precision", "bf16"], "fp32", "bf16"),
    ("mc_masks", ["--mc-samples", "2"], ["--mc-samples", "2", "--mc-masks", "torch"], "per-row", "torch"),
]


@pytest.mark.parametrize(("option", "before", "after", "old", "new"), CHANGES, ids=[c[0] for c in CHANGES])
@pytest.mark.slow
def test_each_score_changing_option_changed_on_resume_is_refused(nli_export, source, tmp_path, monkeypatch, capsys,
                                                                 option, before, after, old, new):
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, source, output, *before, "--device", "cpu")
    line = _resume_refused(monkeypatch, capsys, args, base_args(nli_export, source, output, *after, "--device", "cpu"),
                           output)
    assert f"{option}: {old!r} then, {new!r} now" in line
    assert main([*args, "--resume"]) == 0  # control: the interrupted run's own options continue it
    assert output.exists() and not folder_of(output).exists()


@pytest.mark.parametrize("change", [["--seed", "9"], ["--mc-masks", "torch"]], ids=["seed", "mc_masks"])
def test_a_deterministic_run_resumes_across_settings_of_the_masks_it_never_drew(nli_export, source, tmp_path,
                                                                                monkeypatch, change):
    """Without MC dropout (--mc-samples 1) no mask is drawn, so the seed and the masks' source change no score: the
    resume continues (it was refused, naming a setting that does not apply) and gives the uninterrupted run's
    bytes. The refusals under MC are in CHANGES above."""
    output, whole = tmp_path / "scored.jsonl", tmp_path / "whole.jsonl"
    interrupt(monkeypatch, base_args(nli_export, source, output))
    assert main(base_args(nli_export, source, whole)) == 0
    assert main([*base_args(nli_export, source, output, *change), "--resume"]) == 0
    assert output.read_bytes() == whole.read_bytes() and not folder_of(output).exists()


def _api_run(model: Path, source: Path, output: Path, reseed: int | None, resume: bool = False) -> None:
    """A file run through the API with MC dropout (seed 0 at the load), the scorer reseeded by ``score(seed=)``."""
    from learned_metrics.scoring import load_scorer
    from learned_metrics.scoring.options import FileRun
    from learned_metrics.scoring.runner import InputFields, score_file

    scorer = load_scorer(model, kind="faithfulness", mc_samples=3, seed=0)
    if reseed is not None:
        scorer.score(groundings=["A grounding."], generations=["A claim."], seed=reseed)  # masks from here on
    score_file(scorer, source, output, InputFields("faithfulness"), FileRun(chunk_size=7, resume=resume))


def test_the_fingerprint_holds_the_seed_the_masks_are_drawn_from(nli_export, source, tmp_path, monkeypatch):
    """score(seed=5) reseeds a scorer's masks for its later calls, a file run's too, but the fingerprint held the seed
    of the load: a run interrupted with the reseeded scorer resumed under a fresh one, its rows scored with two seeds
    (exit 0). Refused now, naming the seed; control: the same reseeded scorer resumes to the uninterrupted bytes."""
    from hostile.test_resume_integrity import Counting

    whole, output = tmp_path / "whole.jsonl", tmp_path / "scored.jsonl"
    _api_run(nli_export, source, whole, reseed=5)
    Counting(monkeypatch, fail_on=4)  # the 4th chunk crashes: 3 kept
    with pytest.raises(RuntimeError, match="simulated crash"):
        _api_run(nli_export, source, output, reseed=5)
    monkeypatch.undo()
    with pytest.raises(UserError, match=r"cannot resume.*seed: 5 then, 0 now"):
        _api_run(nli_export, source, output, reseed=None, resume=True)
    _api_run(nli_export, source, output, reseed=5, resume=True)
    assert output.read_bytes() == whole.read_bytes()
