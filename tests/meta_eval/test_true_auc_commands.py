"""The three commands that print TRUE AUCs agree to the last digit (docs/meta_eval.md names ``report --auc --format
true`` as the one to cite; ``auc --format true`` and ``benchmark --layout true`` give the same numbers)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from learned_metrics.cli import main

CORPORA = ("frank_valid_download", "paws_download")


def _true_folder(folder, seed: int):
    """A metric's folder in TRUE's layout: one CSV per corpus, distinct rows, both labels (the same rows and labels
    for every metric, as scoring the same files gives; the scores differ by ``seed``)."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for number, corpus in enumerate(CORPORA):
        labels = np.random.default_rng(number).random(40) < 0.5
        scores = rng.random(40) + 0.6 * labels
        with open(folder / f"{corpus}.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["grounding", "generated_text", "label", "score"])
            writer.writerows([f"document {i} of {corpus}", f"claim {i}", int(y), s]
                             for i, (y, s) in enumerate(zip(labels, scores, strict=True)))
    return folder


@pytest.fixture
def metrics(tmp_path):
    return _true_folder(tmp_path / "m1", 1), _true_folder(tmp_path / "m2", 2)


def _json(tmp_path, name: str, argv: list[str]) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["meta-eval", *argv, "--resamples", "50", "--seed", "3", "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_report_auc_auc_and_benchmark_give_the_same_true_aucs(tmp_path, metrics):
    m1, m2 = metrics
    cited = _json(tmp_path, "report", ["report", "--auc", "--format", "true", "--metric", str(m1), "--metric",
                                       str(m2), "--permutations", "10"])["cells"]["m1"]
    alone = _json(tmp_path, "auc", ["auc", "--format", "true", "--input", str(m1)])
    bench = _json(tmp_path, "benchmark", ["benchmark", "--metric", str(m1), "--layout", "true",
                                          "--threshold-protocol", "fixed", "--permutations", "10"])
    bench = bench["results"]["m1"]["datasets"]
    for corpus in ("frank", "paws"):
        assert cited[corpus]["value"] == alone["groups"][corpus]["value"] == bench[corpus]["auc"]["value"]
        assert cited[corpus]["ci"] == alone["groups"][corpus]["ci"] == bench[corpus]["auc"]["ci"]
    assert cited["mean"]["value"] == alone["mean"]["value"]


def test_the_agreement_is_not_vacuous(tmp_path, metrics):
    """Control: another metric's folder gives other AUCs, so equal numbers above mean the same computation."""
    m1, m2 = metrics
    one = _json(tmp_path, "one", ["auc", "--format", "true", "--input", str(m1)])
    two = _json(tmp_path, "two", ["auc", "--format", "true", "--input", str(m2)])
    assert one["groups"]["frank"]["value"] != two["groups"]["frank"]["value"]
