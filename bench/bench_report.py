"""The paper table: `learned-metrics meta-eval report` against the naive way, on SummEval-size input.

    .venv/bin/python bench/bench_report.py [--naive-samples 10] [--no-readme]

Input: the shipped examples (16 systems x 100 documents, 3 ratings per summary, five metrics:
examples/meta_eval/metric_{ensemble,good,lexical,length}.jsonl and metric_weak.csv). The table has 5 metrics x
5 statistics, 1,000 BOOT-BOTH resamples per metric and 1,000 permutations per pair of metrics (10 pairs) for the
significance markers.

Timed:
* the command end to end in a fresh process (start-up, reading, tables), as a user runs it;
* the API (`correlation_report`) on one worker and on every core;
* the naive way, as the original scripts and most meta-evaluation code do it: per resample or permutation,
  a pandas groupby and one `scipy.stats.kendalltau` call per group (bench_meta_eval.naive_statistics). It is
  timed on --naive-samples resamples of one metric and permutations of one pair, and extrapolated to the
  table's 5 x 1,000 resamples and 10 x 1,000 permutations (each permutation evaluates both metrics).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_meta_eval import naive_statistics
from common import README, ROOT, machine, replace_section

from learned_metrics.meta_eval import bootstrap_indices
from learned_metrics.meta_eval.data import load_grid
from learned_metrics.meta_eval.report import correlation_report
from learned_metrics.meta_eval.resampling import swap_masks
from learned_metrics.meta_eval.significance import standardize

EXAMPLES = ROOT / "examples" / "meta_eval"
SECTION = "## Paper table (meta-eval report)"
METRICS = ["metric_ensemble.jsonl", "metric_good.jsonl", "metric_lexical.jsonl", "metric_weak.csv",
           "metric_length.jsonl"]
NAMES = "ensemble,good,lexical,weak,length"
RESAMPLES = PERMUTATIONS = 1000


def command() -> list[str]:
    paths = [arg for name in METRICS for arg in ("--metric", str(EXAMPLES / name))]
    return [str(Path(sys.executable).parent / "learned-metrics"), "meta-eval", "report", "--human",
            str(EXAMPLES / "human.jsonl"), *paths, "--names", NAMES]


def time_command(repeats: int = 3) -> float:
    """Median wall time of the CLI in a fresh process."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command(), check=True, capture_output=True, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin"})
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def time_api(human: np.ndarray, metrics: dict, workers: int | None) -> float:
    start = time.perf_counter()
    correlation_report(human, metrics, resamples=RESAMPLES, permutations=PERMUTATIONS, workers=workers)
    return time.perf_counter() - start


def time_naive(human: np.ndarray, metrics: dict, samples: int) -> tuple[float, float]:
    """Seconds per bootstrap resample (one metric) and per permutation (one pair), the naive way."""
    a, b = (np.asarray(m) for m in list(metrics.values())[:2])
    n_docs, n_systems = human.shape
    start = time.perf_counter()
    for doc_idx, sys_idx in bootstrap_indices(n_docs, n_systems, samples, "both", 0):
        for docs, systems in zip(doc_idx, sys_idx, strict=True):
            naive_statistics(human[docs][:, systems], a[docs][:, systems])
    per_resample = (time.perf_counter() - start) / samples
    za, zb = standardize(a), standardize(b)
    start = time.perf_counter()
    for swapped in swap_masks(n_docs, n_systems, samples, "cell", 0):
        for mask in swapped.astype(bool):
            naive_statistics(human, np.where(mask, zb, za))
            naive_statistics(human, np.where(mask, za, zb))
    per_permutation = (time.perf_counter() - start) / samples
    return per_resample, per_permutation


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--naive-samples", type=int, default=10, help="resamples and permutations the naive way "
                        "is timed on before extrapolating (default: 10)")
    parser.add_argument("--no-readme", action="store_true", help="print only; leave bench/README.md alone")
    args = parser.parse_args(argv)
    started_on = machine("at start")
    grid = load_grid(EXAMPLES / "human.jsonl", [EXAMPLES / name for name in METRICS], names=NAMES.split(","))
    cli_seconds = time_command()
    one_worker = time_api(grid.human, grid.metrics, workers=1)
    all_cores = time_api(grid.human, grid.metrics, workers=None)
    per_resample, per_permutation = time_naive(grid.human, grid.metrics, args.naive_samples)
    pairs = len(METRICS) * (len(METRICS) - 1) // 2
    naive_total = len(METRICS) * RESAMPLES * per_resample + pairs * PERMUTATIONS * per_permutation
    rows = [
        ("naive: pandas groupby + scipy.stats.kendalltau per group, per resample and per permutation "
         f"(timed on {args.naive_samples} of each, extrapolated)", naive_total),
        ("`correlation_report` API, 1 worker", one_worker),
        ("`correlation_report` API, every core (default)", all_cores),
        ("`learned-metrics meta-eval report` command, fresh process (median of 3)", cli_seconds),
    ]
    lines = [SECTION, "",
             f"Machine: {started_on}. Input: the shipped examples, 16 systems x 100 documents (3 ratings per summary), "
             f"5 metrics x 5 statistics (Kendall), {RESAMPLES:,} BOOT-BOTH resamples per metric, {PERMUTATIONS:,} "
             f"permutations per pair of metrics ({pairs} pairs) for the significance markers.", "",
             "| way | seconds | speed-up |", "|---|---:|---:|"]
    lines += [f"| {way} | {seconds:,.1f} | {naive_total / seconds:,.0f}x |" for way, seconds in rows]
    lines += ["", f"Naive cost per unit: {1000 * per_resample:.0f} ms per resample, {1000 * per_permutation:.0f} ms "
              "per permutation (both metrics).", "",
              "Reproduce: `.venv/bin/python bench/bench_report.py`; the command timed is "
              "`learned-metrics meta-eval report --human examples/meta_eval/human.jsonl --metric ... (5 files) "
              f"--names {NAMES}`.", ""]
    section = "\n".join(lines)
    print(section)
    if not args.no_readme:
        replace_section(section)
        print(f"updated {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
