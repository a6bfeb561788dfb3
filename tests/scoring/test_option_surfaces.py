"""One declaration: a field added to ScoringOptions, and nothing else, is a flag, a keyword and, unless declared
``scores=False`` (then runs differing in it give the same bytes), a provenance setting and part of the resume
fingerprint.

The test extends :class:`ScoringOptions` by two fields (as a subclass put where the class is looked up), one that
can change a score and one declared not to, and checks every surface without any other edit.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json

import pytest
from hostile.hostile_tools import write_jsonl
from hostile.test_resume_integrity import base_args, interrupt, one_error_line, rows

from learned_metrics.cli import main
from learned_metrics.provenance import read_provenance
from learned_metrics.scoring import options as options_module
from learned_metrics.scoring import scorer as scorer_module
from learned_metrics.scoring.options import ScoringOptions, _option, of_kind
from learned_metrics.settings import takes


@pytest.fixture
def extended(monkeypatch):
    """ScoringOptions with ``smoothing`` (changes scores) and ``log_every`` (declared not to)."""
    cls = dataclasses.make_dataclass(
        "ScoringOptions",
        [("smoothing", int, _option(0, "a made-up score-changing option", minimum=0)),
         ("log_every", int, _option(0, "a made-up option that cannot change a score", minimum=0, scores=False))],
        bases=(ScoringOptions,), frozen=True)
    monkeypatch.setattr(options_module, "ScoringOptions", cls)
    monkeypatch.setattr(scorer_module, "ScoringOptions", cls)
    # load_scorer's keywords come from the class it is declared with (settings.takes): declared with the wider one
    monkeypatch.setattr(scorer_module, "load_scorer", takes(cls)(inspect.unwrap(scorer_module.load_scorer)))
    return cls


def test_a_new_field_is_a_flag_and_a_keyword(extended):
    parser = argparse.ArgumentParser()
    options_module.ScoringOptions.add_arguments(parser, where=of_kind("faithfulness"))
    args = parser.parse_args(["--smoothing", "3", "--log-every", "2"])
    options = options_module.ScoringOptions.from_arguments(args)
    assert (options.smoothing, options.log_every) == (3, 2)
    assert extended.from_keywords(smoothing=4).smoothing == 4  # load_scorer's keywords: the next test


def test_a_new_field_reaches_the_scorer_provenance_and_fingerprint(extended, nli_export, tmp_path, monkeypatch,
                                                                   capsys):
    from learned_metrics.scoring.runner import FileRun, InputFields, run_fingerprint

    scorer = scorer_module.load_scorer(nli_export, smoothing=2, log_every=5)
    assert (scorer.options.smoothing, scorer.options.log_every) == (2, 5)
    assert scorer.provenance()["smoothing"] == 2 and "log_every" not in scorer.provenance()
    fingerprint = run_fingerprint(scorer, tmp_path / "in.jsonl", InputFields("faithfulness"), FileRun(), 1,
                                  ["jsonl", "jsonl"])
    assert fingerprint["smoothing"] == 2 and "log_every" not in fingerprint

    source = write_jsonl(tmp_path / "pairs.jsonl", rows())
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, source, output, "--smoothing", "1", "--log-every", "1")
    interrupt(monkeypatch, args)
    capsys.readouterr()
    changed = base_args(nli_export, source, output, "--smoothing", "2", "--log-every", "1", "--resume")
    one_error_line(capsys, main(changed), "smoothing: 1 then, 2 now")
    # control: the field declared scores=False may differ; the output records what made its scores
    assert main(base_args(nli_export, source, output, "--smoothing", "1", "--log-every", "7", "--resume")) == 0
    record = read_provenance(output)
    assert record["smoothing"] == 1 and "log_every" not in record
    assert json.loads(output.read_text().splitlines()[0])["score"] is not None
