"""Class 7: every option is validated, and truncation warnings are true.

Found before: ``--max-tokens 0``/``--max-length 0`` silently meant "default", ``--max-length -1`` was an
OverflowError traceback, ``--max-length 1`` warned that every row was cut while nothing was, ``3``
dropped whole hypotheses without a word, and a negative ``--seed`` was a numpy traceback. Option
types come from ``learned_metrics.validate`` (the parser names the allowed range); the smallest usable
max length comes from ``learned_metrics.text.encoding`` for training and scoring alike.
"""

from __future__ import annotations

import pytest

from hostile.hostile_tools import anli_augmented, assert_refused, cli, shuffle_set, write_jsonl
from learned_metrics.scoring import load_scorer


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grid")
    rows = [{"doc_id": d, "system_id": s, "score": float((d * 7 + s * 3) % 5), "label": (d + s) % 2, "corpus": "x"}
            for d in range(6) for s in range(4)]
    return write_jsonl(folder / "human.jsonl", rows), write_jsonl(folder / "metric.jsonl", rows)


SCORE_CASES = [
    (["--max-tokens", "0"], "--max-tokens: must be an integer >= 1, got 0"),
    (["--max-length", "0"], "--max-length: must be an integer >= 1, got 0"),
    (["--max-length", "-1"], "--max-length: must be an integer >= 1, got -1"),
    (["--batch-size", "0"], "--batch-size: must be an integer >= 1"),
    (["--chunk-size", "0"], "--chunk-size: must be an integer >= 1"),
    (["--mc-samples", "-1"], "--mc-samples: must be an integer >= 0"),
    (["--seed", "-1"], "--seed: must be an integer >= 0"),
    (["--seed", "1.5"], "--seed: expected an integer >= 0, got '1.5'"),
    (["--max-length", "1"], "max_length 1 is too small"),  # below what the tokenizer needs: refused once it is read
    (["--max-length", "3"], "max_length 3 is too small: the model adds 4 special tokens"),
]


@pytest.mark.parametrize(("options", "message"), SCORE_CASES, ids=[" ".join(c[0]) for c in SCORE_CASES])
def test_score_options_out_of_range(tiny_deberta_nli, pairs_file, tmp_path, capsys, options, message):
    result = cli(capsys, "score", "faithfulness", "--model", tiny_deberta_nli, "--input", pairs_file,
                 "--output", tmp_path / "out.jsonl", *options)
    assert_refused(result, message)
    assert not (tmp_path / "out.jsonl").exists()


META_CASES = [
    ("correlations", ["--seed", "-1"], "--seed: must be an integer >= 0"),
    ("correlations", ["--resamples", "-5"], "--resamples: must be an integer >= 0"),
    ("compare", ["--seed", "-3"], "--seed: must be an integer >= 0"),
    ("compare", ["--permutations", "0"], "--permutations: must be an integer >= 1"),  # --resamples: bootstrap
    ("auc", ["--seed", "-1"], "--seed: must be an integer >= 0"),
    ("shuffle-test", ["--resamples", "x"], "--resamples: expected an integer >= 0, got 'x'"),
]


@pytest.mark.parametrize(("command", "options", "message"), META_CASES,
                         ids=[f"{c[0]} {' '.join(c[1])}" for c in META_CASES])
def test_meta_eval_options_out_of_range(grid, capsys, command, options, message):
    human, metric = grid
    if command in ("auc", "shuffle-test"):
        inputs = ["--input", str(metric)]
    elif command == "compare":
        inputs = ["--human", str(human), "--metric", str(metric), "--metric", str(metric)]
    else:
        inputs = ["--human", str(human), "--metric", str(metric)]
    assert_refused(cli(capsys, "meta-eval", command, *inputs, *options), message)


@pytest.mark.parametrize(
    ("script", "options", "message"),
    [(shuffle_set, ["--shuffles-per-doc", "0"], "--shuffles-per-doc: must be an integer >= 1"),
     (shuffle_set, ["--val-fraction", "1.5"], "--val-fraction: must be in [0, 1)"),
     (shuffle_set, ["--seed", "-2"], "--seed: must be an integer >= 0"),
     (shuffle_set, ["--joiner", "\\x1"], "--joiner: malformed escape"),
     (anli_augmented, ["--seed", "-1"], "--seed: must be an integer >= 0"),
     (anli_augmented, ["--phrase-subset", "0"], "--phrase-subset: must be an integer >= 1")],
    ids=["shuffles-0", "val-1.5", "seed-neg", "joiner-escape", "anli-seed", "anli-subset"],
)
def test_data_prep_options_out_of_range(tmp_path, capsys, script, options, message):
    source = "jsonl:" + str(write_jsonl(tmp_path / "docs.jsonl", [{"text": "A.\nB."}]))
    result = script(capsys, "--source", source, "--output", tmp_path / "out", *options)
    assert_refused(result, message)
    assert not (tmp_path / "out").exists()


def test_truncation_counts_only_rows_that_were_cut(tiny_deberta_nli):
    """At the smallest allowed length every long row is really cut, and rows that fit are not counted."""
    scorer = load_scorer(tiny_deberta_nli, max_length=6)  # 4 special tokens + one token of each side
    with pytest.warns(UserWarning, match="2 of 2 rows were longer than max_length=6"):
        result = scorer.score(groundings=["Anna went to the market on Monday.", "Ben slept."],
                              generations=["Anna went there.", "Ben slept a lot."])
    assert result.truncated == 2 and result.tokens == 12
    fits = load_scorer(tiny_deberta_nli, max_length=64).score(groundings=["Ben slept."], generations=["Ben slept."])
    assert fits.truncated == 0
