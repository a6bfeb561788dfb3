"""Scoring for real workloads: resume after kill -9 / SIGTERM, progress in logs, per-system summaries, formats.

Resume tests run the real command in a subprocess and kill it while chunks are
being finished; the resumed file must equal an uninterrupted run byte for byte,
deterministic and under seeded MC dropout.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from tiny_models import GENERATIONS, GROUNDINGS

from learned_metrics.cli import main
from learned_metrics.progress import RowProgress, human_duration, human_rate

ROOT = Path(__file__).resolve().parents[2]
LEARNED_METRICS = str(Path(sys.executable).with_name("learned-metrics"))
SYSTEMS = ("lead3", "bart", "pegasus", "t5")


def rows(n: int) -> list[dict]:
    """Pairs of varied length with a system, an integer, a float and a list field to keep."""
    out = []
    for i in range(n):
        grounding = " ".join(GROUNDINGS[j % len(GROUNDINGS)] for j in range(i % 5, i % 5 + 1 + i % 3))
        out.append({"id": i, "system": SYSTEMS[i % 4], "grounding": grounding,
                    "generation": GENERATIONS[i % len(GENERATIONS)], "weight": i / 7, "tags": ["a" * (1 + i % 2), "x"]})
    return out


def write_jsonl(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def command(model: Path, source: Path, output: Path, *extra: str) -> list[str]:
    return [LEARNED_METRICS, "score", "faithfulness", "--model", str(model), "--input", str(source), "--output",
            str(output), *extra]


def run(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env(), capture_output=True, text=True, input=stdin, timeout=600)


def run_in_process(capsys, cmd: list[str]) -> subprocess.CompletedProcess:
    """``cmd`` (a ``learned-metrics`` command line) through ``main()`` in this process, with what it printed."""
    capsys.readouterr()
    code = main(cmd[1:])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(cmd, code, out, err)


def progress_record(output: Path) -> dict | None:
    try:
        return json.loads((output.parent / f".{output.name}.lmresume" / "progress.json").read_text())
    except (OSError, ValueError):
        return None


def kill_after_chunks(cmd: list[str], output: Path, chunks: int, signum: int) -> subprocess.CompletedProcess:
    """Start ``cmd`` and send ``signum`` once ``chunks`` chunks are recorded (and before the run ends)."""
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while (progress_record(output) or {}).get("chunks", 0) < chunks:
        assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "n_rows", "options"), [
    (signal.SIGKILL, 400, ()),
    (signal.SIGTERM, 100, ("--mc-samples", "3", "--seed", "7")),
])
def test_killed_run_resumes_to_the_uninterrupted_file(nli_export, tmp_path_factory, tmp_path, capsys, signum, n_rows,
                                                      options):
    """About 5-10 s on 2 cores: 20 chunks (400 rows deterministic; 100 under MC dropout, three forwards a row) are
    scored three times (whole, interrupted, resumed), and the interrupted run is a real process (a signal or
    kill -9 is what is under test). The uninterrupted run, the refusal and the resume go through ``main()`` in this
    process (no interpreter start-up)."""
    many_rows = write_jsonl(tmp_path_factory.mktemp("resume") / "pairs.jsonl", rows(n_rows))
    options = ("--chunk-size", str(n_rows // 20), "--no-progress", *options)
    whole = tmp_path / "whole.jsonl"
    assert main(command(nli_export, many_rows, whole, *options)[1:]) == 0

    resumed = tmp_path / "resumed.jsonl"
    killed = kill_after_chunks(command(nli_export, many_rows, resumed, *options), resumed, 3, signum)
    assert killed.returncode in (-signal.SIGKILL, 128 + signal.SIGTERM), killed.stderr[-2000:]
    assert not resumed.exists() and progress_record(resumed)["chunks"] >= 3
    if signum == signal.SIGTERM:
        assert "--resume to continue" in killed.stderr and "Traceback" not in killed.stderr

    capsys.readouterr()
    # forgot --resume: refused, nothing lost
    assert main(command(nli_export, many_rows, resumed, *options)[1:]) == 2
    assert "add --resume to continue it" in capsys.readouterr().err
    assert main(command(nli_export, many_rows, resumed, *options, "--resume")[1:]) == 0
    err = capsys.readouterr().err
    assert "resuming after" in err and "rows scored before the interruption" in err, err[-2000:]
    assert resumed.read_bytes() == whole.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["resumed.jsonl", "resumed.jsonl.provenance.json",
                                                         "whole.jsonl", "whole.jsonl.provenance.json"]


@pytest.mark.slow
def test_resume_refuses_another_command_and_restart_starts_over(nli_export, tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", rows(30))
    output = tmp_path / "out.jsonl"
    base = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output", str(output),
            "--chunk-size", "10", "--no-progress"]
    assert main(base) == 0
    expected = output.read_bytes()
    # an interrupted run of the same output, as a kill would leave it
    from learned_metrics.scoring.resume import ChunkStore

    store = ChunkStore(output.resolve(), "jsonl", {"mode": "e", "chunk_size": 10})
    store.open(resume=False, restart=False)
    store.save([{"x": 1}], {"rows": 10})
    store.close()
    assert main([*base, "--resume"]) == 2  # the fingerprint differs: refused, the progress stays
    assert "cannot resume: the earlier run differs" in capsys.readouterr().err
    assert progress_record(output)["chunks"] == 1
    assert main([*base, "--restart"]) == 0
    assert output.read_bytes() == expected and progress_record(output) is None


def test_resume_with_nothing_to_resume_scores_normally(nli_export, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", rows(12))
    output = tmp_path / "out.jsonl"
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(output), "--resume", "--no-progress"]) == 0
    assert len(output.read_text().splitlines()) == 12 and progress_record(output) is None


# -- progress and reporting ----------------------------------------------------------------------


@pytest.mark.slow
def test_progress_lines_when_stderr_is_not_a_terminal(nli_export, tmp_path, capsys):
    """In process: capsys's stderr is not a terminal, as a log file is not."""
    source = write_jsonl(tmp_path / "in.jsonl", rows(400))
    result = run_in_process(capsys, command(nli_export, source, tmp_path / "out.jsonl", "--chunk-size", "10",
                                            "--progress-every", "0.05", "--mc-samples", "2"))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    progress = [line for line in lines if line.startswith("scoring: ")]
    assert progress, result.stderr
    assert " / 400 rows (" in progress[0] and "ETA" in progress[0] and "\r" not in result.stderr
    assert any(line.startswith("scored 400 rows") and "tokens/s" in line for line in lines)
    assert any(line.startswith("mean score ") for line in lines)


@pytest.mark.slow
def test_quiet_prints_nothing_but_errors(nli_export, tmp_path, capfd):
    """The scoring run in process (capfd sees every byte written to file descriptors 1 and 2 while it runs,
    the libraries' included; a fresh interpreter's import-time warnings are test_library_warnings'); the error in
    a real process, where it costs no torch start-up."""
    source = write_jsonl(tmp_path / "in.jsonl", rows(10))
    capfd.readouterr()
    assert main(command(nli_export, source, tmp_path / "out.jsonl", "--quiet")[1:]) == 0
    out, err = capfd.readouterr()
    assert err == "" and out == "" and len((tmp_path / "out.jsonl").read_text().splitlines()) == 10
    bad = run(command(nli_export, tmp_path / "missing.jsonl", tmp_path / "o.jsonl", "--quiet"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_rates_and_durations_read_well():
    assert human_rate(30, 600) == "3.0 rows/min" and human_rate(2, 7200) == "1.00 rows/h"
    assert human_rate(500, 2) == "250.0 rows/s" and "0.0" not in human_rate(1, 1e5)
    assert human_duration(4.24) == "4.2 s" and human_duration(185) == "3 min 05 s"
    assert human_duration(7620) == "2 h 07 min"


def test_row_progress_counts_resumed_rows_towards_percent_only():
    class Log:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    log = Log()
    progress = RowProgress(100, every_seconds=0.0, stream=log)
    progress.skip(50)
    with progress:
        progress.advance(10)
    assert "60 / 100 rows (60%)" in log.text and "ETA" in log.text


def test_per_system_summary_matches_pandas(nli_export, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    source = write_jsonl(tmp_path / "in.jsonl", rows(41))
    output, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    result = run_in_process(capsys, command(nli_export, source, output, "--system-field", "system", "--summary",
                                            str(summary), "--no-progress"))
    assert result.returncode == 0, result.stderr[-2000:]
    frame = pd.read_json(output, lines=True)
    expected = frame.groupby("system")["score"].agg(["mean", "count"])
    report = json.loads(summary.read_text())
    assert report["rows"] == 41 and report["mean"] == pytest.approx(frame["score"].mean(), abs=1e-12)
    assert [s["system"] for s in report["systems"]] == list(expected["mean"].sort_values(ascending=False).index)
    for system in report["systems"]:
        assert system["mean"] == pytest.approx(expected.loc[system["system"], "mean"], abs=1e-12)
        assert system["rows"] == expected.loc[system["system"], "count"]
        low, high = system["ci"]
        assert low <= system["mean"] <= high
    for system in SYSTEMS:
        assert system in result.stderr  # the table
    assert "mean score per system" in result.stderr


def test_bootstrap_ci_of_the_mean_agrees_with_scipy():
    from scipy import stats

    from learned_metrics.scoring.summary import mean_ci

    values = np.random.default_rng(3).normal(0.2, 0.3, 400)
    low, high = mean_ci(values, resamples=4000)
    reference = stats.bootstrap((values,), np.mean, n_resamples=4000, method="percentile",
                                random_state=np.random.default_rng(5)).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.005) and high == pytest.approx(reference.high, abs=0.005)
    assert mean_ci(values[:1]) == (None, None)


def test_missing_system_field_names_file_row_and_field(nli_export, tmp_path, capsys):
    items = rows(6)
    del items[4]["system"]
    source = write_jsonl(tmp_path / "in.jsonl", items)
    result = run_in_process(capsys, command(nli_export, source, tmp_path / "out.jsonl", "--system-field", "system"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "in.jsonl" in result.stderr and "row 5" in result.stderr and "'system'" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


# -- formats -------------------------------------------------------------------------------------


def test_parquet_round_trip_keeps_every_column_and_row_order(nli_export, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    items = rows(25)
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(items), source)
    jsonl_source = write_jsonl(tmp_path / "in.jsonl", items)
    output = tmp_path / "out.parquet"
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(output), "--chunk-size", "7", "--no-progress"]) == 0
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(jsonl_source), "--output",
                 str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    table = pq.read_table(output)
    assert table.schema.names == [*items[0], "score", "prob_entailment", "prob_neutral", "prob_contradiction"]
    assert table.schema.field("id").type == pa.int64() and table.schema.field("weight").type == pa.float64()
    got = table.to_pylist()
    reference = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    for row, item, ref in zip(got, items, reference, strict=True):
        assert {k: row[k] for k in ("id", "system", "grounding", "generation", "weight")} == \
            {k: item[k] for k in ("id", "system", "grounding", "generation", "weight")}
        assert row["score"] == pytest.approx(ref["score"], abs=1e-9)


def test_stdin_to_stdout_equals_files(nli_export, tmp_path, capfd, monkeypatch):
    """In process: standard input is a byte stream, as a pipe is (a real process writing to standard output is
    tests/hostile/test_writers.py's /dev/full test); capfd holds everything written to descriptor 1."""
    items = rows(9)
    source = write_jsonl(tmp_path / "in.jsonl", items)
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source.read_bytes())))
    capfd.readouterr()
    code = main(["score", "faithfulness", "--model", str(nli_export), "--input", "-", "--output", "-"])
    piped = capfd.readouterr()
    assert code == 0, piped.err[-2000:]
    assert piped.out == (tmp_path / "out.jsonl").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out.jsonl.provenance.json"]


# -- granularity and details ---------------------------------------------------------------------

SUPPORT = "Anna bought seven green apples at the market."
OTHERS = ["The weather was cold on Monday.", "Ben read a long book in the library.",
          "The train to Leeds was late again.", "A dog slept under the kitchen table."]


def word_overlap_model(monkeypatch, scorer) -> list[int]:
    """Replace the network by a known judge: P(entail) = share of hypothesis words found in the premise.

    ``_predict`` gets the texts (token counts and truncation come from the real ``encode``); the list returned
    counts its calls (one per stream of pairs, each batched inside).
    """
    from learned_metrics.scoring.batching import encode

    forwards: list[int] = []

    def predict(premises, hypotheses, passes, progress):
        forwards.append(1)
        probs = np.zeros((passes, len(premises), 3))
        for i, (p, h) in enumerate(zip(premises, hypotheses, strict=True)):
            words = {w.strip(".,").lower() for w in h.split()}
            share = len(words & {w.strip(".,").lower() for w in p.split()}) / max(1, len(words))
            probs[:, i] = [0.9 * share, 1 - 0.9 * share - 0.05, 0.05]
        if progress:
            progress(len(premises))
        return probs, encode(scorer.tokenizer, premises, hypotheses, scorer.max_length)

    monkeypatch.setattr(scorer, "_predict", predict)
    return forwards


def test_sentence_granularity_does_not_depend_on_where_the_support_is(nli_export):
    from learned_metrics.scoring import load_scorer

    scorer = load_scorer(nli_export)
    generation = "Anna bought apples. The train was late."
    orders = [" ".join([*OTHERS, SUPPORT]), " ".join([OTHERS[2], OTHERS[0], SUPPORT, OTHERS[3], OTHERS[1]]),
              " ".join([SUPPORT, *reversed(OTHERS)])]
    scores = [scorer.score(groundings=[g], generations=[generation], granularity="sentence").scores[0]
              for g in orders]
    assert scores == pytest.approx([scores[0]] * 3, abs=1e-6)
    paragraphs = scorer.score(groundings=["\n\n".join(OTHERS[:2]) + "\n\n" + SUPPORT], generations=[generation],
                              granularity="paragraph", details=True)
    assert {d["support"] for d in paragraphs.sentences[0]} <= {OTHERS[0], OTHERS[1], SUPPORT}


def test_details_point_at_the_supporting_sentence(nli_export, monkeypatch):
    from learned_metrics.scoring import load_scorer

    scorer = load_scorer(nli_export)
    forwards = word_overlap_model(monkeypatch, scorer)
    groundings = [" ".join([OTHERS[0], SUPPORT, OTHERS[1]]), " ".join([*OTHERS, SUPPORT])] * 10
    generations = ["Anna bought apples. Ben read a book.", "The dog slept."] * 10
    result = scorer.score(groundings=groundings, generations=generations, granularity="sentence", details=True)
    first, second = result.sentences[0], result.sentences[1]
    assert [d["sentence"] for d in first] == ["Anna bought apples.", "Ben read a book."]
    assert [d["support"] for d in first] == [SUPPORT, OTHERS[1]] and [d["unit"] for d in first] == [1, 2]
    assert second[0]["support"] == OTHERS[3] and second[0]["unit"] == 3
    # the row's e-c is the mean over its sentences of the best unit's e-c
    assert result.scores[0] == pytest.approx(np.mean([d["score"] for d in first]), abs=1e-12)
    pairs = sum(len(g.split(". ")) * len(h.split(". ")) for g, h in zip(groundings, generations, strict=True))
    assert len(forwards) * 8 <= pairs  # batched: not one forward per (unit, sentence) pair


def test_details_column_in_the_output_file(nli_export, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", rows(6))
    output = tmp_path / "out.jsonl"
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(output), "--granularity", "sentence", "--details", "--no-progress"]) == 0
    got = [json.loads(line) for line in output.read_text().splitlines()]
    assert list(got[0])[-1] == "details"
    for row in got:
        assert row["details"] and {"sentence", "score", "unit", "support"} <= set(row["details"][0])
        assert all(d["support"] in row["grounding"] for d in row["details"])
        assert row["score"] == pytest.approx(np.mean([d["score"] for d in row["details"]]), abs=1e-9)


# -- out of memory -------------------------------------------------------------------------------


def test_out_of_memory_halves_the_token_budget_and_retries(nli_export, monkeypatch):
    import torch

    import learned_metrics.scoring.batching as batching
    from learned_metrics.errors import UserError
    from learned_metrics.scoring import load_scorer
    from learned_metrics.scoring.batching import OutOfMemoryWarning

    items = rows(40)
    groundings, generations = [r["grounding"] for r in items], [r["generation"] for r in items]
    scorer = load_scorer(nli_export, max_tokens=4096)
    expected = scorer.score(groundings=groundings, generations=generations).scores
    real = batching.forward_passes
    seen: list[int] = []

    def fake_allocator(model, batch, passes, max_tokens, masks=None, limit=600):
        tokens = batch["input_ids"].numel()
        seen.append(tokens)
        if tokens > limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (fake)")
        return real(model, batch, passes, max_tokens, masks)

    monkeypatch.setattr(batching, "forward_passes", fake_allocator)
    with pytest.warns(OutOfMemoryWarning, match="token budget halved"):
        got = scorer.score(groundings=groundings, generations=generations).scores
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert scorer.max_tokens <= 1024 and max(seen) > 600  # it did fail, then stayed at the smaller budget

    monkeypatch.setattr(batching, "forward_passes", lambda *a, **k: fake_allocator(*a, **k, limit=1))
    with pytest.raises(UserError, match="out of device memory on a single input"), \
            pytest.warns(OutOfMemoryWarning):
        scorer.score(groundings=groundings[:3], generations=generations[:3])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_resume_after_a_crash_gives_the_same_csv_and_parquet(nli_export, tmp_path, monkeypatch, suffix):
    from learned_metrics.scoring.scorer import Scorer

    source = write_jsonl(tmp_path / "in.jsonl", rows(30))
    args = ["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--chunk-size", "7",
            "--mc-samples", "2", "--seed", "5", "--system-field", "system", "--no-progress"]
    whole, resumed = tmp_path / f"whole{suffix}", tmp_path / f"resumed{suffix}"
    assert main([*args, "--output", str(whole)]) == 0
    real, calls = Scorer.score_validated, []

    def crash_on_third_chunk(self, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("simulated crash (out of host memory)")
        return real(self, **kwargs)

    monkeypatch.setattr(Scorer, "score_validated", crash_on_third_chunk)
    with pytest.raises(RuntimeError, match="simulated crash"):
        main([*args, "--output", str(resumed)])
    assert progress_record(resumed)["chunks"] == 2 and not resumed.exists()
    monkeypatch.setattr(Scorer, "score_validated", real)
    assert main([*args, "--output", str(resumed), "--resume"]) == 0
    assert resumed.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize(("count", "said"), [(5, "and 2 more"), (3, None)], ids=["five", "control-three"])
def test_a_refusal_over_foreign_files_says_how_many_it_did_not_list(tmp_path, count, said):
    """The progress folder's refusal names three of the files learned-metrics did not write and counts the rest
    (outputs.shown_names, as every other folder refusal)."""
    from learned_metrics.errors import UserError
    from learned_metrics.scoring.resume import ChunkStore

    store = ChunkStore((tmp_path / "out.jsonl").resolve(), "jsonl", {"mode": "e"})
    store.folder.mkdir()
    for index in range(count):
        (store.folder / f"mine-{index}.txt").write_text("notes")
    with pytest.raises(UserError) as caught:
        store.open(resume=True, restart=False)
    message = str(caught.value)
    assert "mine-0.txt, mine-1.txt, mine-2.txt" in message
    assert (said in message) if said else "more" not in message
    assert len(list(store.folder.iterdir())) == count  # nothing deleted


def test_system_names_follow_the_key_rule_of_every_reader(nli_export, tmp_path, capsys):
    """1, 1.0 and "1" are one key everywhere (validate.key): the summary grouped 1 with "1" and made 1.0 a system of
    its own. A NaN or empty system is refused naming the row."""
    items = rows(6)
    for item, system in zip(items, [1, 1.0, "1", 2, 2.0, "2"], strict=True):
        item["system"] = system
    source, summary = write_jsonl(tmp_path / "in.jsonl", items), tmp_path / "summary.json"
    result = run_in_process(capsys, command(nli_export, source, tmp_path / "out.jsonl", "--system-field", "system",
                                            "--summary", str(summary), "--no-progress"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted((s["system"], s["rows"]) for s in json.loads(summary.read_text())["systems"]) == [("1", 3), ("2", 3)]
    items[3]["system"] = "  "
    source = write_jsonl(tmp_path / "blank.jsonl", items)
    result = run_in_process(capsys, command(nli_export, source, tmp_path / "out2.jsonl", "--system-field", "system"))
    assert result.returncode == 2 and "row 4, field 'system'" in result.stderr


def test_one_field_for_both_texts_is_refused(nli_export, tmp_path, capsys):
    """--premise-field generation (the hypothesis's default) scored every text against itself, exit 0."""
    source = write_jsonl(tmp_path / "in.jsonl", rows(3))
    for extra in (["--premise-field", "generation"], ["--hypothesis-field", "grounding"]):
        result = run_in_process(capsys, command(nli_export, source, tmp_path / "out.jsonl", *extra))
        assert result.returncode == 2 and "would be scored against itself" in result.stderr
        assert not (tmp_path / "out.jsonl").exists()
