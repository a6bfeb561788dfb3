"""Warnings from libraries we call are shown once and only when they matter (issue 23 item 7): a ``score`` run and
meta-eval runs under ``python -W always`` print no library warning line on stderr (only our own lines), the API does
not log transformers' "Token indices sequence length is longer ..." when it counts or cuts long texts itself, and
the one place that quiets transformers (``safety.quiet_transformers``) restores what it changed."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from tiny_models import GENERATIONS, GROUNDINGS

from learned_metrics.scoring import TruncationWarning, load_scorer

ROOT = Path(__file__).resolve().parents[2]
OURS = re.compile(r"^(scored |mean score |start-up |note: |warning: \d+ of \d+ rows|chunked |resuming )")
LIBRARY = re.compile(r"Warning\b|warnings\.warn|\[transformers\]|FutureWarning|DeprecationWarning|UserWarning|"
                     r"Token indices|it/s\]|huggingface/tokenizers")


def _stderr(args: list[str], tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONWARNINGS": "always", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("TOKENIZERS_PARALLELISM", None)  # as a user's shell has it
    done = subprocess.run([sys.executable, "-W", "always", "-m", "learned_metrics.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.mark.slow  # a fresh interpreter under -W always (6 s)
def test_a_score_run_prints_no_library_warning(tiny_deberta_nli, tmp_path):
    rows = [{"grounding": " ".join([g] * 20), "generation": h} for g, h in zip(GROUNDINGS, GENERATIONS, strict=True)]
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    stderr = _stderr(["score", "faithfulness", "--model", str(tiny_deberta_nli), "--input", str(source), "--output",
                      str(tmp_path / "out.jsonl"), "--mc-samples", "2", "--granularity", "sentence", "--details",
                      "--tokenizer-workers", "2", "--no-progress"], tmp_path)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines and not [line for line in lines if LIBRARY.search(line)], stderr
    assert all(OURS.match(line) for line in lines), stderr


@pytest.mark.slow  # a fresh interpreter under -W always (6 s)
def test_a_truncating_score_run_says_it_once_in_our_words(tiny_deberta_nli, tmp_path):
    source = tmp_path / "long.jsonl"
    source.write_text("".join(json.dumps({"grounding": " ".join([g] * 30), "generation": h}) + "\n"
                              for g, h in zip(GROUNDINGS, GENERATIONS, strict=True)))
    stderr = _stderr(["score", "faithfulness", "--model", str(tiny_deberta_nli), "--input", str(source), "--output",
                      str(tmp_path / "out.jsonl"), "--chunk-size", "2", "--no-progress"], tmp_path)
    assert stderr.count("rows were longer than max_length") == 1 and not LIBRARY.search(stderr), stderr


@pytest.mark.parametrize("command", [
    ["correlations", "--human", "examples/meta_eval/human.jsonl", "--metric", "examples/meta_eval/metric_good.jsonl",
     "--resamples", "30"],
    ["bias-matrix", "--human", "examples/meta_eval/human.jsonl", "--metric", "examples/meta_eval/metric_good.jsonl",
     "--plot", "{tmp}/bias.png"],
])
@pytest.mark.slow
def test_meta_eval_runs_print_no_library_warning(command, tmp_path):
    stderr = _stderr(["meta-eval", *[part.replace("{tmp}", str(tmp_path)) for part in command]], tmp_path)
    assert not LIBRARY.search(stderr), stderr


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _length_messages(scorer) -> tuple[list[str], list[type]]:
    handler, logger = _Records(), logging.getLogger("transformers")  # transformers does not propagate to root
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scorer.score(groundings=[" ".join(GROUNDINGS * 8)], generations=[GENERATIONS[0]], granularity="sentence")
            scorer.score(groundings=[" ".join(GROUNDINGS * 8)], generations=[GENERATIONS[0]])  # truncated: ours
    finally:
        logger.removeHandler(handler)
    return [m for m in handler.messages if "sequence length" in m], [w.category for w in caught]


def test_the_api_counts_long_texts_without_transformers_length_warning(tiny_deberta_nli):
    scorer = load_scorer(tiny_deberta_nli)
    assert _length_messages(scorer) == ([], [TruncationWarning])
    scorer.tokenizer.deprecation_warnings.clear()  # control: as the tokenizer comes from transformers
    assert _length_messages(scorer)[0]


def test_quiet_transformers_restores_verbosity_and_bars():
    from transformers.utils import logging as hf_logging

    from learned_metrics.safety import quiet_transformers

    before = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    with quiet_transformers(errors_only=True):
        assert hf_logging.get_verbosity() == hf_logging.ERROR and not hf_logging.is_progress_bar_enabled()
    with quiet_transformers():
        assert hf_logging.get_verbosity() == before[0]
    assert (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()) == before
