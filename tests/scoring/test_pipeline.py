"""Tokenization overlapped with the forward (``--tokenizer-workers``) changes when work is done, never the result.

The batches are planned from the inputs alone (character order, fixed slices), so a run with background tokenizer
threads must give exactly the scores, MC masks and output bytes of the sequential pipeline (``--tokenizer-workers
0``): deterministic and seeded MC, coherence and faithfulness, whole pairs and chunked premises, several slices
and several chunks, and a run interrupted in one mode and resumed in the other. The pipeline's pieces
(ordered map, prefetch) keep order, raise errors where the consumer reaches them and stop their threads when the
consumer stops.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hostile.hostile_tools import write_jsonl
from tiny_models import GENERATIONS, GROUNDINGS

from learned_metrics.cli import main
from learned_metrics.scoring import load_scorer, pipeline
from learned_metrics.scoring.scorer import Scorer

WORKER_MODES = (0, 1, 3)


@pytest.fixture(autouse=True)
def eight_cores(monkeypatch):
    """Three tokenizer threads even on a 2-core machine (requests are capped at the cores available)."""
    monkeypatch.setattr(pipeline, "available_cores", lambda: 8)


@pytest.fixture
def small_slices(monkeypatch):
    """Slices of 2, 4, then 5 rows, so a few dozen rows make many slices (the worker threads really run ahead)."""
    from learned_metrics.scoring import scorer as scorer_module

    original = pipeline.slices_longest_first
    monkeypatch.setattr(scorer_module, "slices_longest_first", lambda *columns: original(*columns, rows=5, first=2))


def pairs(n: int = 37) -> tuple[list[str], list[str]]:
    groundings = [" ".join(GROUNDINGS[j % len(GROUNDINGS)] for j in range(i % 5, i % 5 + 1 + i % 4)) for i in range(n)]
    generations = [GENERATIONS[i % len(GENERATIONS)] + " extra words" * (i % 3) for i in range(n)]
    return groundings, generations


def score_with(model, workers: int, **call) -> dict[str, np.ndarray]:
    scorer = load_scorer(model, tokenizer_workers=workers, max_tokens=256, seed=11)
    result = scorer.score(**call)
    assert scorer.tokenizer_workers == workers
    return {"scores": result.scores, "std": result.score_std, **result.probabilities}


@pytest.mark.parametrize("mc_samples", [1, 4])
@pytest.mark.parametrize("strategy", ["truncate", "chunk"])
@pytest.mark.slow
def test_faithfulness_scores_are_identical_with_and_without_workers(nli_export, small_slices, mc_samples, strategy):
    groundings, generations = pairs()
    runs = [score_with(nli_export, w, groundings=groundings, generations=generations, mc_samples=mc_samples,
                       premise_strategy=strategy) for w in WORKER_MODES]
    for other in runs[1:]:
        for key, values in runs[0].items():
            assert np.array_equal(values, other[key]), key  # bit for bit, not approximately
    if mc_samples > 1:
        assert runs[0]["std"].max() > 0  # the MC passes really differed


def test_coherence_scores_are_identical_with_and_without_workers(coherence_export, small_slices):
    texts = [" ".join(GROUNDINGS[i % len(GROUNDINGS)] for _ in range(1 + i % 4)) for i in range(23)]
    runs = [score_with(coherence_export, w, texts=texts, mc_samples=3) for w in WORKER_MODES]
    for other in runs[1:]:
        assert all(np.array_equal(runs[0][key], other[key]) for key in runs[0])


def test_timings_say_where_the_time_went(nli_export, small_slices):
    groundings, generations = pairs(20)
    scorer = load_scorer(nli_export, tokenizer_workers=1)
    result = scorer.score(groundings=groundings, generations=generations)
    timings = result.timings
    assert set(timings) == {"tokenize_seconds", "forward_seconds", "wait_seconds", "wall_seconds"}
    assert timings["tokenize_seconds"] > 0 and timings["forward_seconds"] > 0
    assert timings["forward_seconds"] + timings["wait_seconds"] <= timings["wall_seconds"] + 1e-6
    sequential = load_scorer(nli_export, tokenizer_workers=0).score(groundings=groundings, generations=generations)
    # without workers the model waits for every slice's tokenization
    assert sequential.timings["wait_seconds"] >= sequential.timings["tokenize_seconds"] * 0.99


def test_a_background_thread_tokenizes_while_the_model_runs(nli_export, small_slices, monkeypatch):
    """Not just a thread doing the same sequence: slice k+1 is tokenized while slice k is in the forward."""
    events: list[tuple[str, int]] = []
    real_encode = pipeline.SliceFeed._encode

    def encode(self, rows):
        events.append(("tokenized", threading.get_ident()))
        return real_encode(self, rows)

    monkeypatch.setattr(pipeline.SliceFeed, "_encode", encode)
    from learned_metrics.scoring import batching

    real_predict = batching.predict_probabilities

    def slow_predict(*args, **kwargs):
        events.append(("forward", threading.get_ident()))
        if len([kind for kind, _ in events if kind == "forward"]) == 1:  # only the first forward is looked into
            time.sleep(0.2)  # a slow model: the tokenizer thread fills the queue meanwhile
        return real_predict(*args, **kwargs)

    monkeypatch.setattr(batching, "predict_probabilities", slow_predict)
    groundings, generations = pairs(30)  # 6 slices of 5
    load_scorer(nli_export, tokenizer_workers=1).score(groundings=groundings, generations=generations)
    main_thread = threading.get_ident()
    assert {ident for kind, ident in events if kind == "tokenized"} - {main_thread}, "tokenized on the main thread"
    forwards = [i for i, event in enumerate(events) if event == ("forward", main_thread)]
    # while the first slice was in the forward, the thread tokenized the third (the second was queued already)
    assert sum(kind == "tokenized" for kind, _ in events[: forwards[1]]) >= 3


# -- file runs: byte-identical outputs, resume across modes ------------------------------------------------------


def file_rows(n: int = 33) -> list[dict]:
    groundings, generations = pairs(n)
    return [{"id": i, "system": "abc"[i % 3], "grounding": g, "generation": h}
            for i, (g, h) in enumerate(zip(groundings, generations, strict=True))]


def score_args(model, source, output, workers: int, *extra: str) -> list[str]:
    return ["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
            "--chunk-size", "8", "--tokenizer-workers", str(workers), "--no-progress", "--quiet",
            "--max-tokens", "256", *extra]


@pytest.mark.parametrize("extra", [(), ("--mc-samples", "3", "--seed", "5")], ids=["deterministic", "mc"])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.slow
def test_file_outputs_are_byte_identical(nli_export, small_slices, tmp_path, extra, suffix):
    source = write_jsonl(tmp_path / "pairs.jsonl", file_rows())
    outputs = []
    for workers in WORKER_MODES:
        output = tmp_path / f"scored-{workers}{suffix}"
        assert main(score_args(nli_export, source, output, workers, *extra)) == 0
        outputs.append(output.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


@pytest.mark.parametrize(("first", "then"), [(0, 2), (2, 0)])
@pytest.mark.slow
def test_resume_across_modes_is_byte_identical(nli_export, small_slices, tmp_path, monkeypatch, first, then):
    """Interrupted with one pipeline after 2 of 5 chunks, resumed with the other: the uninterrupted bytes."""
    source = write_jsonl(tmp_path / "pairs.jsonl", file_rows())
    extra = ("--mc-samples", "3", "--seed", "5")
    whole = tmp_path / "whole.jsonl"
    assert main(score_args(nli_export, source, whole, 0, *extra)) == 0
    output = tmp_path / "resumed.jsonl"
    real = Scorer.score_validated
    calls = {"n": 0}

    def crash_on_third(self, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("simulated crash")
        return real(self, **kwargs)

    monkeypatch.setattr(Scorer, "score_validated", crash_on_third)
    with pytest.raises(RuntimeError, match="simulated crash"):
        main(score_args(nli_export, source, output, first, *extra))
    monkeypatch.setattr(Scorer, "score_validated", real)
    assert main(score_args(nli_export, source, output, then, *extra, "--resume")) == 0
    assert output.read_bytes() == whole.read_bytes()


def test_a_bad_row_is_reported_as_without_prefetching(nli_export, tmp_path, capsys):
    """The reader runs a chunk ahead; the error still names the row, and nothing is written."""
    rows = file_rows(20)
    rows[17]["generation"] = ""
    source = write_jsonl(tmp_path / "pairs.jsonl", rows)
    messages = []
    for workers in (0, 1):
        output = tmp_path / f"out-{workers}.jsonl"
        assert main(score_args(nli_export, source, output, workers)) == 2
        messages.append(capsys.readouterr().err.strip().splitlines()[-1])
        assert not output.exists() and not list(tmp_path.glob(f".out-{workers}*"))
    assert messages[0] == messages[1] and "row 18" in messages[0]


def test_the_summary_reports_start_up_apart_from_the_rates(nli_export, tmp_path, capsys):
    source = write_jsonl(tmp_path / "pairs.jsonl", file_rows(6))
    args = score_args(nli_export, source, tmp_path / "out.jsonl", 1)
    assert main([a for a in args if a != "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "scored 6 rows" in err
    startup = next(line for line in err.splitlines() if line.startswith("start-up "))
    assert "imports" in startup and "model load" in startup and "not counted in the rates" in startup


# -- the pieces --------------------------------------------------------------------------------------------------


def test_slices_are_longest_first_by_characters_ties_in_input_order():
    first = ["aa", "a", "aaaa", "aa", "aaa"]
    second = ["", "bbbb", "", "", ""]
    slices = pipeline.slices_longest_first(first, second, rows=2, first=1)
    assert [s.tolist() for s in slices] == [[1], [2, 4], [0, 3]]
    assert pipeline.slice_sizes(10_000) == [256, 512, 1024, 2048, 2048, 2048, 2048, 16]
    assert pipeline.slice_sizes(100) == [100] and pipeline.slice_sizes(0) == []


@pytest.mark.parametrize("workers", [0, 1, 4])
def test_ordered_map_keeps_order_and_stays_bounded(workers):
    running = {"now": 0, "most": 0, "started": 0}
    lock = threading.Lock()

    def work(i):
        with lock:
            running["now"] += 1
            running["started"] += 1
            running["most"] = max(running["most"], running["now"])
        time.sleep(0.002 * (i % 3))
        with lock:
            running["now"] -= 1
        return i * i

    for consumed, value in enumerate(pipeline.ordered_map(work, range(40), workers), start=1):
        assert value == (consumed - 1) ** 2
        assert running["started"] <= consumed + workers + 1  # never more than workers + 1 items ahead
    assert running["most"] <= max(1, workers)


def test_ordered_map_stops_its_threads_when_the_consumer_stops():
    started = []

    def work(i):
        started.append(i)
        time.sleep(0.01)
        return i

    mapped = pipeline.ordered_map(work, range(1000), 2)
    assert next(mapped) == 0
    mapped.close()
    settled = len(started)
    time.sleep(0.05)
    assert len(started) == settled <= 4
    assert not [t for t in threading.enumerate() if t.name.startswith("learned-metrics-tokenize")]


def test_ordered_map_raises_a_worker_error_at_its_item():
    def work(i):
        if i == 3:
            raise ValueError("bad item 3")
        return i

    seen = []
    with pytest.raises(ValueError, match="bad item 3"):
        for value in pipeline.ordered_map(work, range(10), 2):
            seen.append(value)
    assert seen == [0, 1, 2]


def test_prefetch_raises_where_the_consumer_reaches_the_error_and_stops_early():
    produced = []

    def items():
        for i in range(100):
            if i == 5:
                raise ValueError("row 5 is bad")
            produced.append(i)
            yield i

    seen = []
    with pytest.raises(ValueError, match="row 5"):
        for item in pipeline.prefetch(items(), depth=1):
            seen.append(item)
    assert seen == [0, 1, 2, 3, 4]

    endless = pipeline.prefetch(iter(range(10**9)), depth=2)
    assert next(endless) == 0
    endless.close()
    assert not [t for t in threading.enumerate() if t.name == "learned-metrics-read" and t.is_alive()]


def test_workers_default_from_the_cores_and_never_oversubscribe_torch_on_cpu(monkeypatch):
    monkeypatch.setattr(pipeline, "available_cores", lambda: 16)
    assert pipeline.tokenizer_workers(None, "cpu", torch_threads=16) == 0  # torch has every core: none
    assert pipeline.tokenizer_workers(None, "cpu", torch_threads=12) == 4
    assert pipeline.tokenizer_workers(None, "cpu", torch_threads=14) == 2
    assert pipeline.tokenizer_workers(None, "cuda", torch_threads=16) == pipeline.MAX_AUTO_WORKERS
    monkeypatch.setattr(pipeline, "available_cores", lambda: 2)
    assert pipeline.tokenizer_workers(None, "cuda", torch_threads=2) == 1
    assert pipeline.tokenizer_workers(3, "cpu", torch_threads=2) == 2  # asked for: as asked, one per core at most
    monkeypatch.setattr(pipeline, "available_cores", lambda: 16)
    assert pipeline.tokenizer_workers(None, "cuda", torch_threads=4, processes=4) == 3  # 4 cores each, one drives
    assert pipeline.tokenizer_workers(None, "cpu", torch_threads=4, processes=4) == 0
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")
    from learned_metrics.scoring.distributed import processes_on_this_machine

    assert processes_on_this_machine() == 8
    assert pipeline.tokenizer_workers(0, "cuda", torch_threads=2) == 0


def test_tokenizer_workers_is_refused_below_zero(nli_export, capsys):
    with pytest.raises(ValueError, match="tokenizer_workers"):
        load_scorer(nli_export, tokenizer_workers=-1)
    with pytest.raises(SystemExit) as stopped:
        main(["score", "faithfulness", "--model", str(nli_export), "--input", "x.jsonl", "--output", "y.jsonl",
              "--tokenizer-workers", "-2"])
    assert stopped.value.code == 2 and "--tokenizer-workers" in capsys.readouterr().err


def test_threads_share_no_tokenizer(nli_export, small_slices, monkeypatch):
    """Each of several threads gets its own tokenizer (a fast tokenizer's backend refuses concurrent use)."""
    active: set[int] = set()
    used: set[int] = set()
    overlaps = []
    lock = threading.Lock()
    real = pipeline.TokenizerCopies.run

    def run(self, function):
        def spy(tokenizer):
            with lock:
                overlaps.append(id(tokenizer) in active)
                active.add(id(tokenizer))
                used.add(id(tokenizer))
            try:
                time.sleep(0.002)
                return function(tokenizer)
            finally:
                with lock:
                    active.discard(id(tokenizer))

        return real(self, spy)

    monkeypatch.setattr(pipeline.TokenizerCopies, "run", run)
    groundings, generations = pairs(60)
    load_scorer(nli_export, tokenizer_workers=3).score(groundings=groundings, generations=generations)
    assert len(used) == 3 and not any(overlaps)


# -- --compile: the forward goes through torch.compile, with the same scores ---------------------------------------


@pytest.fixture
def eager_backend_compile(monkeypatch):
    """torch.compile with dynamo's ``eager`` backend: the same tracing and guards without inductor's C++ build
    (minutes on this machine; bench/bench_compile.py measures the real inductor). Records the calls."""
    import torch

    calls = []
    real = torch.compile

    def compile_(model, **kwargs):
        calls.append(kwargs)
        return real(model, **{**kwargs, "backend": "eager"})

    monkeypatch.setattr(torch, "compile", compile_)
    yield calls
    torch._dynamo.reset()


@pytest.mark.slow  # dynamo traces the model (3-7 s)
def test_compile_runs_the_forward_compiled_with_the_eager_scores(nli_export, eager_backend_compile):
    groundings, generations = pairs(12)
    eager = load_scorer(nli_export).score(groundings=groundings, generations=generations)
    scorer = load_scorer(nli_export, compile=True)
    assert eager_backend_compile == [{"dynamic": True}]  # varying batch shapes: one dynamic graph, no recompiles
    result = scorer.score(groundings=groundings, generations=generations)
    assert np.abs(result.scores - eager.scores).max() < 1e-5
    assert result.provenance["compile"] is True and eager.provenance["compile"] is False
    mc = scorer.score(groundings=groundings, generations=generations, mc_samples=3, seed=2)
    assert mc.score_std.max() > 0  # dropout really on through the compiled module (torch's masks)
    again = scorer.score(groundings=groundings, generations=generations, mc_samples=3, seed=2)
    assert np.array_equal(mc.scores, again.scores)  # seeded: reproducible


@pytest.mark.slow  # dynamo traces the model (3-7 s)
def test_compile_is_a_flag_of_the_score_command(nli_export, eager_backend_compile, tmp_path):
    source = write_jsonl(tmp_path / "pairs.jsonl", file_rows(5))
    output = tmp_path / "out.jsonl"
    assert main(score_args(nli_export, source, output, 1, "--compile")) == 0
    assert eager_backend_compile and output.exists()
    assert '"compile": true' in (tmp_path / "out.jsonl.provenance.json").read_text()


def test_a_huge_worker_count_is_capped_at_the_cores(nli_export, monkeypatch):
    """--tokenizer-workers 1000 (a typo, a hostile config) would start 1000 threads and copy the tokenizer 999
    times; threads beyond the cores only wait, so the request is capped there (scores are the same anyway)."""
    monkeypatch.setattr(pipeline, "available_cores", lambda: 4)
    scorer = load_scorer(nli_export, tokenizer_workers=1000)
    assert scorer.tokenizer_workers == 4
    groundings, generations = pairs(8)
    scorer.score(groundings, generations)
    assert scorer._tokenizers._made <= 4
