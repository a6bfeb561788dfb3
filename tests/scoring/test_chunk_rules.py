"""The leaderboards' chunking rules: ``--chunk-tokens`` and ``--claim-split`` (docs/benchmarks.md).

MiniCheck chunks every document into sentence-packed chunks of a fixed token count and scores the whole claim
against each, the best chunk deciding; AlignScore splits the claim into sentences, takes per sentence the best
chunk and averages. Each rule is checked against the same scorer's truncate-mode scores of the chunk pairs,
maximised by hand; the refusals have their control beside them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hostile.test_resume_integrity import base_args, interrupt, one_error_line, progress

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.provenance import describe
from learned_metrics.scoring.scorer import load_scorer
from learned_metrics.scoring.units import pack_sentences
from learned_metrics.text.sentences import get_splitter

GROUNDING = ("Anna bought two tickets at the station. The weather was mild all day. Liam went to the museum. "
             "He bought five coffees there. The museum closed at six.")
CLAIM = "Liam went to the museum. He bought five coffees."
CHUNK = 12


def _chunks(scorer, text: str, budget: int) -> list[str]:
    sentences = get_splitter("pysbd")(text)
    lengths = [len(scorer.tokenizer(s, add_special_tokens=False)["input_ids"]) for s in sentences]
    return pack_sentences(sentences, lengths, budget)


def _best(scorer, chunks: list[str], claim: str) -> float:
    scores = scorer.score(groundings=chunks, generations=[claim] * len(chunks), mode="e",
                          premise_strategy="truncate").scores
    return float(np.max(scores))


@pytest.fixture(scope="module")
def scorer(nli_export):
    return load_scorer(nli_export, device="cpu", mode="e", premise_strategy="chunk", chunk_tokens=CHUNK,
                       claim_split="whole")


def test_whole_claim_scores_the_best_chunk_of_a_grounding_that_fits(scorer):
    chunks = _chunks(scorer, GROUNDING, CHUNK)
    assert len(chunks) > 1  # the grounding fits the model whole, yet is chunked
    result = scorer.score(groundings=[GROUNDING], generations=[CLAIM])
    assert result.scores[0] == pytest.approx(_best(scorer, chunks, CLAIM), abs=1e-6)
    assert result.details["pairs"] == len(chunks)


def test_claim_sentences_take_the_mean_of_their_best_chunks(nli_export, scorer):
    sentences = load_scorer(nli_export, device="cpu", mode="e", premise_strategy="chunk", chunk_tokens=CHUNK)
    chunks = _chunks(scorer, GROUNDING, CHUNK)
    claims = get_splitter("pysbd")(CLAIM)
    assert len(claims) == 2
    expected = np.mean([_best(scorer, chunks, claim) for claim in claims])
    result = sentences.score(groundings=[GROUNDING], generations=[CLAIM])
    assert result.scores[0] == pytest.approx(expected, abs=1e-6)
    assert result.details["pairs"] == len(chunks) * 2


def test_without_chunk_tokens_a_grounding_that_fits_is_scored_whole(nli_export, scorer):
    today = load_scorer(nli_export, device="cpu", mode="e", premise_strategy="chunk")
    whole = scorer.score(groundings=[GROUNDING], generations=[CLAIM], premise_strategy="truncate").scores[0]
    assert today.score(groundings=[GROUNDING], generations=[CLAIM]).scores[0] == pytest.approx(whole, abs=1e-6)


@pytest.mark.parametrize("option", [{"chunk_tokens": 400}, {"claim_split": "whole"}])
def test_chunk_rules_without_chunking_are_refused(nli_export, option):
    with pytest.raises(UserError, match="--premise-strategy chunk"):
        load_scorer(nli_export, device="cpu", **option)
    assert load_scorer(nli_export, device="cpu", premise_strategy="chunk", **option)  # control
    assert load_scorer(nli_export, device="cpu", granularity="sentence", **option)  # control


@pytest.mark.parametrize(("flag", "value", "accepted"), [("--chunk-tokens", "0", ">= 1"),
                                                         ("--claim-split", "halves", "'whole'")])
def test_bad_values_are_one_line(nli_export, tmp_path, capsys, flag, value, accepted):
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"grounding": GROUNDING, "generation": CLAIM}) + "\n")
    args = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--no-progress",
            "--premise-strategy", "chunk"]
    with pytest.raises(SystemExit) as refused:  # argparse refuses the value before anything runs
        main([*args, "--output", str(tmp_path / "bad.jsonl"), flag, value])
    one_error_line(capsys, refused.value.code, flag, accepted)
    assert main([*args, "--output", str(tmp_path / "good.jsonl"), flag, "1" if value == "0" else "whole"]) == 0


def test_the_cli_refuses_chunk_rules_with_truncation_in_one_line(nli_export, tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"grounding": GROUNDING, "generation": CLAIM}) + "\n")
    args = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--no-progress",
            "--output", str(tmp_path / "out.jsonl"), "--chunk-tokens", "400"]
    one_error_line(capsys, main([*args, "--premise-strategy", "truncate"]), "--premise-strategy chunk")
    assert main(args) == 2  # a plain file keeps the truncate default
    assert main([*args, "--premise-strategy", "chunk"]) == 0  # control


def _true_file(folder: Path) -> Path:
    path = folder / "paws_download.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["grounding", "generated_text", "label"])
        writer.writerows([[GROUNDING, CLAIM, 1], [GROUNDING, "Anna bought two tickets.", 0]])
    return path


def _record(output: Path) -> dict:
    return json.loads(Path(f"{output}.provenance.json").read_text())


def test_a_true_layout_file_scores_chunked_unless_told_otherwise(nli_export, tmp_path, capsys):
    source = _true_file(tmp_path)
    chunked, truncated = tmp_path / "chunked.jsonl", tmp_path / "truncated.jsonl"
    args = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--no-progress"]
    assert main([*args, "--output", str(chunked)]) == 0
    note = capsys.readouterr().err.replace("\n", " ")
    assert "TRUE layout recognized" in note and "--premise-strategy chunk (benchmark documents" in note
    assert _record(chunked)["premise_strategy"] == "chunk" and _record(chunked)["chunk_tokens"] is None
    assert main([*args, "--output", str(truncated), "--premise-strategy", "truncate"]) == 0  # an explicit choice
    assert _record(truncated)["premise_strategy"] == "truncate"
    plain = tmp_path / "plain.jsonl"  # control: a file in no benchmark layout keeps the truncate default
    plain.write_text(json.dumps({"grounding": GROUNDING, "generation": CLAIM}) + "\n")
    assert main([*args[:5], str(plain), "--no-progress", "--output", str(tmp_path / "p.jsonl")]) == 0
    assert _record(tmp_path / "p.jsonl")["premise_strategy"] == "truncate"


@pytest.mark.parametrize(("first", "then", "named"), [
    (["--chunk-tokens", "50"], ["--chunk-tokens", "60"], "chunk_tokens: 50 then, 60 now"),
    (["--chunk-tokens", "50"], ["--chunk-tokens", "50", "--claim-split", "whole"], "claim_split")])
def test_resume_with_other_chunk_rules_is_refused(nli_export, tmp_path, monkeypatch, capsys, first, then, named):
    from hostile.hostile_tools import write_jsonl
    from hostile.test_resume_integrity import rows

    source = write_jsonl(tmp_path / "pairs.jsonl", rows())
    output = tmp_path / "scored.jsonl"
    args = base_args(nli_export, source, output, "--premise-strategy", "chunk", *first)
    interrupt(monkeypatch, args)
    assert progress(output)["chunks"] == 3
    capsys.readouterr()
    changed = base_args(nli_export, source, output, "--premise-strategy", "chunk", *then)
    one_error_line(capsys, main([*changed, "--resume"]), "cannot resume", named)
    assert main([*args, "--resume"]) == 0 and output.exists()  # control: the same rules resume
    assert "chunks of 50 tokens" in describe(_record(output))  # what the meta-eval captions say
