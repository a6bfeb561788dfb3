"""``learned-metrics score``: files in, files out; the CLI agrees with the API; bad inputs fail cleanly.

Most runs call ``learned_metrics.cli.main`` in-process (a subprocess costs
seconds of imports); the multi-process identity test launches
``accelerate launch --cpu --num_processes 2`` for real.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tiny_models import DOCUMENTS, GENERATIONS, GROUNDINGS

from learned_metrics.cli import main
from learned_metrics.scoring import TruncationWarning, load_scorer

SCORE_COLUMNS = ["score", "prob_entailment", "prob_neutral", "prob_contradiction"]

def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def pair_rows(n: int = 24) -> list[dict]:
    """Pairs of varied length (some longer than the tiny models' 128 tokens), with an extra field to keep."""
    rows = []
    for i in range(n):
        grounding = " ".join(GROUNDINGS[j % len(GROUNDINGS)] for j in range(i, i + 1 + (i * 7) % 11))
        rows.append({"id": f"r{i}", "grounding": grounding, "generation": GENERATIONS[i % len(GENERATIONS)],
                     "meta": {"system": i % 3}})
    return rows


def score(*args: str) -> int:
    return main(["score", *args, "--no-progress"])


def assert_rows_match(got: list[dict], expected: list[dict], atol: float = 1e-6) -> None:
    """Same rows, same order, same non-score fields; score columns equal within ``atol``."""
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            if key.startswith(("score", "prob_")):
                assert a[key] == pytest.approx(b[key], abs=atol), key
            else:
                assert a[key] == b[key], key


# -- the CLI agrees with the API ----------------------------------------------------------------


def test_faithfulness_cli_keeps_rows_in_order_and_matches_the_api(tmp_path, nli_export, capsys):
    rows = pair_rows()
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert score("faithfulness", "--model", str(nli_export), "--input", str(src), "--output", str(out),
                 "--chunk-size", "7") == 0
    got = read_jsonl(out)
    assert [r["id"] for r in got] == [r["id"] for r in rows] and got[3]["meta"] == rows[3]["meta"]
    assert list(got[0])[-4:] == SCORE_COLUMNS and "score_std" not in got[0]
    with pytest.warns(TruncationWarning):
        api = load_scorer(nli_export).score(groundings=[r["grounding"] for r in rows],
                                            generations=[r["generation"] for r in rows])
    np.testing.assert_allclose([r["score"] for r in got], api.scores, atol=1e-6)
    np.testing.assert_allclose([r["prob_neutral"] for r in got], api.probabilities["neutral"], atol=1e-6)
    err = capsys.readouterr().err
    assert f"{api.truncated} of 24 rows were longer than max_length=128" in err and api.truncated > 0
    assert "scored 24 rows" in err and "rows/s" in err and "tokens/s" in err


def test_plain_nli_folder_scores_through_the_cli_with_mc_and_true_field_names(tmp_path, tiny_roberta_nli):
    rows = [{"grounding": r["grounding"], "generated_text": r["generation"]} for r in pair_rows(10)]
    src = write_jsonl(tmp_path / "true.jsonl", rows)
    outs = [tmp_path / f"out{i}.csv" for i in range(2)]
    for out in outs:
        assert score("faithfulness", "--model", str(tiny_roberta_nli), "--input", str(src), "--output", str(out),
                     "--hypothesis-field", "generated_text", "--mc-samples", "4", "--seed", "3", "--mode", "e",
                     "--premise-strategy", "chunk") == 0
    with outs[0].open() as handle:
        got = list(csv.DictReader(handle))
    assert list(got[0]) == ["grounding", "generated_text", *SCORE_COLUMNS, "score_std"]
    assert all(float(r["score_std"]) > 0 for r in got)
    assert outs[0].read_text() == outs[1].read_text()  # same seed, same file
    api = load_scorer(tiny_roberta_nli, mc_samples=4, seed=3, mode="e", premise_strategy="chunk")
    result = api.score(groundings=[r["grounding"] for r in rows], generations=[r["generated_text"] for r in rows])
    np.testing.assert_allclose([float(r["score"]) for r in got], result.scores, atol=1e-6)


def test_coherence_cli_reads_text_or_sentences_and_applies_the_card(tmp_path, coherence_export):
    texts = write_jsonl(tmp_path / "texts.jsonl", [{"text": " ".join(doc)} for doc in DOCUMENTS])
    sentences = tmp_path / "sentences.csv"
    with sentences.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["doc", "sents"])
        writer.writeheader()
        writer.writerows({"doc": i, "sents": json.dumps(doc)} for i, doc in enumerate(DOCUMENTS))
    assert score("coherence", "--model", str(coherence_export), "--input", str(texts),
                 "--output", str(tmp_path / "a.jsonl")) == 0
    assert score("coherence", "--model", str(coherence_export), "--input", str(sentences),
                 "--output", str(tmp_path / "b.csv"), "--sentences-field", "sents") == 0
    from_text = read_jsonl(tmp_path / "a.jsonl")
    with (tmp_path / "b.csv").open() as handle:
        from_sentences = list(csv.DictReader(handle))
    assert list(from_text[0]) == ["text", "score", "prob_coherent", "prob_incoherent"]
    assert json.loads(from_sentences[0]["sents"]) == DOCUMENTS[0]
    np.testing.assert_allclose([r["score"] for r in from_text], [float(r["score"]) for r in from_sentences],
                               atol=1e-9)
    api = load_scorer(coherence_export).score(sentences=DOCUMENTS)
    np.testing.assert_allclose([r["score"] for r in from_text], api.scores, atol=1e-6)


# -- bad inputs: one line, exit 2, no output ----------------------------------------------------


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = pair_rows(12)
    cases = {
        "missing field": ([*good[:9], {"grounding": "x"}], r"row 10, field 'generation': missing field"),
        "null": ([*good[:9], {"grounding": None, "generation": "y"}], r"row 10, field 'grounding': value is missing"),
        "empty": ([*good[:9], {"grounding": "x", "generation": "  "}], r"row 10, field 'generation': text is empty"),
    }
    files = {name: (write_jsonl(tmp_path / f"{i}.jsonl", rows), msg) for i, (name, (rows, msg)) in
             enumerate(cases.items())}
    nan = tmp_path / "nan.jsonl"
    nan.write_text(json.dumps(good[0]) + "\n" + '{"grounding": NaN, "generation": "y"}\n')
    files["nan"] = (nan, r"row 2, field 'grounding': value is missing")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(json.dumps(r) + "\n" for r in good[:9]) + "{not json\n")
    files["broken json late in the file"] = (broken, r"row 10: invalid JSON")
    files["unreadable file"] = (tmp_path / "missing.jsonl", "file not found")
    (tmp_path / "folder.jsonl").mkdir()
    files["directory"] = (tmp_path / "folder.jsonl", "is a directory")
    return files


def test_bad_inputs_give_one_line_errors_and_no_output(tmp_path, nli_export, capsys):
    for name, (src, message) in _bad_inputs(tmp_path).items():
        out = tmp_path / "out" / "scores.jsonl"
        code = score("faithfulness", "--model", str(nli_export), "--input", str(src), "--output", str(out),
                     "--chunk-size", "4")
        err = capsys.readouterr().err.strip()
        assert code == 2, name
        assert len(err.splitlines()) == 1 and err.startswith("learned-metrics score: error:"), (name, err)
        assert re.search(message, err), (name, err)
        assert not out.exists() and not list(out.parent.glob("*")), name  # no temp file left either


def test_model_folder_without_classifier_head_is_refused(tmp_path, bare_encoder, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", pair_rows(3))
    out = tmp_path / "out.jsonl"
    assert score("faithfulness", "--model", str(bare_encoder), "--input", str(src), "--output", str(out)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a sequence classifier" in err and not out.exists()


def test_wrong_kind_and_bad_options_are_refused(tmp_path, nli_export, coherence_export, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", pair_rows(3))
    assert score("coherence", "--model", str(nli_export), "--input", str(src), "--output",
                 str(tmp_path / "o.jsonl")) == 2
    assert "score it with `score faithfulness`" in capsys.readouterr().err
    assert score("faithfulness", "--model", str(nli_export), "--input", str(src), "--output",
                 str(tmp_path / "o.txt")) == 2
    assert "unsupported file type '.txt'" in capsys.readouterr().err
    assert score("faithfulness", "--model", str(nli_export), "--input", str(src), "--output",
                 str(tmp_path / "o.jsonl"), "--precision", "fp16") == 2
    assert "fp16 needs a GPU" in capsys.readouterr().err
    assert not list(tmp_path.glob("o.*"))


# -- several processes --------------------------------------------------------------------------


def _free_port() -> int:
    """A port nobody listens on now: parallel test workers must not share accelerate's default 29500."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("mc", [[], ["--mc-samples", "3", "--seed", "2"]], ids=["deterministic", "seeded-mc"])
def test_accelerate_two_processes_write_the_same_file_as_one(tmp_path, nli_export, mc):
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or shutil.which("accelerate")
    if accelerate is None:
        pytest.skip("accelerate launcher not installed")
    rows = pair_rows(30)
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    single, multi = tmp_path / "single.jsonl", tmp_path / "multi.jsonl"
    options = ["--chunk-size", "8", "--premise-strategy", "chunk", "--no-progress", *mc]  # MC: per-row masks
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(src),
                 "--output", str(single), *options]) == 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    launched = subprocess.run(
        [accelerate, "launch", "--cpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
         "--dynamo_backend", "no", "--main_process_port", str(_free_port()), "-m", "learned_metrics.cli", "score",
         "faithfulness", "--model", str(nli_export),
         "--input", str(src), "--output", str(multi), *options],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stderr.count("scored 30 rows") == 1  # one process reports
    assert_rows_match(read_jsonl(multi), read_jsonl(single))
    assert [r["id"] for r in read_jsonl(multi)] == [r["id"] for r in rows]
