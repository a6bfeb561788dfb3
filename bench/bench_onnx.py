"""The ONNX Runtime engine (``score --engine onnx``, fp32 and int8) against the PyTorch engine and the NLI paper's
scorer, on the same pairs, with 1 thread and with every core.

Inputs are those of ``bench_anchors.py``: article-length pairs (SummEval-like, 300 to 620 tokens) and
dialogue-length pairs. Models: the BERT shape is the shipped MiniLM (BERT, 6 x 384) with a random 3-class head;
the DeBERTa-v2 shape is DeBERTa-v3 with xsmall sizes (12 x 384, relative attention p2c/c2p, as
``bench_compile.py``): random weights, as in the other benches (weights do not change throughput). Each way scores
the same pairs; with 1 thread the time is CPU seconds, with every core wall seconds; the best of ``--rounds``
counts, ways interleaved. Ratios are the paper scorer's time over the way's; max |diff| is against the paper
scorer's scores (fp32 ways) or the fp32 graph's (int8).

    python bench/bench_onnx.py            # writes "### ONNX Runtime engine" in bench/README.md
    python bench/bench_onnx.py --quick    # small sizes, no README
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_anchors import PaperScorer, article_pairs, dialogue_pairs  # noqa: E402
from bench_compile import deberta_folder  # noqa: E402
from bench_scoring import minilm_models  # noqa: E402
from common import machine, replace_section, timed  # noqa: E402

from learned_metrics.onnx_export import add_onnx  # noqa: E402
from learned_metrics.scoring import load_scorer  # noqa: E402

HEADING = "### ONNX Runtime engine (--engine onnx)"
WAYS = ("PyTorch engine", "ONNX fp32", "ONNX int8")


def scorer_of(folder: Path, way: str):
    if way == "PyTorch engine":
        return load_scorer(folder, device="cpu")
    return load_scorer(folder, engine="onnx", onnx_precision="int8" if way == "ONNX int8" else "fp32")


def measure(model: str, folder: Path, inputs: str, pairs: list[tuple[str, str]], threads: int,
            rounds: int) -> list[dict]:
    torch.set_num_threads(threads)  # the ONNX sessions take torch's thread count when made
    groundings, generations = [p for p, _ in pairs], [h for _, h in pairs]
    clock = 1 if threads == 1 else 2  # CPU seconds on one thread, wall seconds on every core
    paper = PaperScorer(folder, load_scorer(folder, device="cpu").label_ids)
    scorers = {way: scorer_of(folder, way) for way in WAYS}
    best = {way: float("inf") for way in ("paper", *WAYS)}
    scores: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        out = timed(lambda: paper(pairs, 1))
        scores["paper"], best["paper"] = out[0], min(best["paper"], out[clock])
        for way, scorer in scorers.items():
            out = timed(lambda s=scorer: s.score(groundings, generations))
            scores[way], best[way] = out[0].scores, min(best[way], out[clock])
    rows = []
    for way in WAYS:
        reference = scores["ONNX fp32"] if way == "ONNX int8" else scores["paper"]
        row = {"model": model, "inputs": inputs, "threads": threads, "way": way, "rows": len(pairs),
               "rows_per_s": len(pairs) / best[way], "paper_rows_per_s": len(pairs) / best["paper"],
               "ratio": best["paper"] / best[way], "max_diff": float(np.abs(scores[way] - reference).max())}
        print(f"{model} {inputs} {threads} thread(s) {way}: {row['rows_per_s']:.2f} rows/s vs paper "
              f"{row['paper_rows_per_s']:.2f} ({row['ratio']:.2f}x), max |diff| {row['max_diff']:.1e}", flush=True)
        rows.append(row)
    return rows


def table(rows: list[dict], cores: int, note: str) -> str:
    lines = [HEADING, "", f"Machine: {machine()}. {note}", "",
             "Rows per second (1 thread: per CPU second; all cores: per wall second) and the ratio to the NLI "
             "paper's scorer (batches of 8 in input order, PyTorch eager) on the same pairs, same threads. "
             "max |diff|: fp32 ways against the paper scorer's scores, int8 against the fp32 graph's.", "",
             "| model | pairs | threads | way | rows/s | paper rows/s | vs paper | max \\|diff\\| |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        threads = "1" if r["threads"] == 1 else f"{cores} (all)"
        lines.append(f"| {r['model']} | {r['inputs']} ({r['rows']}) | {threads} | {r['way']} | {r['rows_per_s']:.2f} "
                     f"| {r['paper_rows_per_s']:.2f} | {r['ratio']:.2f}x | {r['max_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few pairs, one round, no README")
    parser.add_argument("--articles", type=int, default=24)
    parser.add_argument("--dialogues", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--note", default="", help="a sentence for the README (sizes, load)")
    args = parser.parse_args()
    if args.quick:
        args.articles, args.dialogues, args.rounds = 4, 8, 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        models = {"BERT (MiniLM 6x384)": minilm_models(tmp_path)["faithfulness"],
                  "DeBERTa-v2 (v3-xsmall shape 12x384)": deberta_folder(tmp_path)}
        for name, folder in models.items():
            exported = shutil.copytree(folder, tmp_path / f"{folder.name}-onnx")
            add_onnx(exported, int8=True)
            paper_tokenizer = PaperScorer(exported, load_scorer(exported).label_ids).tokenizer
            inputs = {"article": article_pairs(args.articles, paper_tokenizer),
                      "dialogue": dialogue_pairs(args.dialogues)}
            for label, pairs in inputs.items():
                for threads in sorted({1, cores}):
                    rows += measure(name, exported, label, pairs, threads, args.rounds)
    if not args.quick:
        replace_section(table(rows, cores, args.note))


if __name__ == "__main__":
    main()
