"""``score --engine ray`` against the one-process engine on the same input, and 1 actor against 2.

Each way is the real command in a fresh process (``learned-metrics score faithfulness``), in the same run, on the
same dialogue-length pairs (``bench_anchors.dialogue_pairs``) with the shipped MiniLM and a random 3-class head
(weights do not change throughput). Two figures per way: the scoring rate the command prints (rows / seconds from
the first block handed out to the last one kept: for Ray this includes the actors' model loads and the block
hand-over, not the driver's start-up) and the end-to-end wall time of the process (start-up, Ray's included). The
overhead ratio is the one-process engine's rate over the Ray engine's with as many actors as cores.

    python bench/bench_ray.py             # writes "### Ray engine" in bench/README.md
    python bench/bench_ray.py --quick     # small sizes, no README
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_anchors import dialogue_pairs  # noqa: E402
from bench_scoring import minilm_models  # noqa: E402
from common import machine, replace_section, run_fresh  # noqa: E402

CLI = str(Path(sys.executable).with_name("learned-metrics"))
NOTE = ("On 2 shared cores the figures say what the engine costs, not what it gains: the Ray rate includes each "
        "actor's model load (seconds here, in the scoring time of a short run) and the hand-over of blocks through "
        "the object store, and one torch process on 2 threads competes with the other jobs of a shared machine "
        "as 2 one-thread actors do. The gain is on many GPUs, where each actor is a GPU's forward (docs/scaling.md, "
        "'Sizing a cluster from the cost model').")
RATE = re.compile(r"scored ([\d,]+) rows .* in .*?: ([\d.,]+) rows/s")


def run(model: Path, source: Path, output: Path, *extra: str) -> dict[str, float]:
    argv = [CLI, "score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
            "--no-progress", "--chunk-size", "250", *extra]
    done = run_fresh(argv, env={**os.environ, "RAY_ADDRESS": ""})
    match = RATE.search(done.proc.stderr)
    if match is None:
        raise SystemExit(f"no rate line in: {done.proc.stderr[-2000:]}")
    return {"rows": int(match.group(1).replace(",", "")), "rate": float(match.group(2).replace(",", "")),
            "wall": done.wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 rows, no README")
    args = parser.parse_args()
    rows = 200 if args.quick else args.rows
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = minilm_models(tmp)["faithfulness"]
        source = tmp / "pairs.jsonl"
        source.write_text("".join(json.dumps({"grounding": g, "generation": h}) + "\n"
                                  for g, h in dialogue_pairs(rows)), encoding="utf-8")
        results = {
            "one process (torch, every core)": run(model, source, tmp / "local.parquet"),
            "Ray, 1 actor x 1 CPU": run(model, source, tmp / "ray1", "--engine", "ray", "--ray-actors", "1"),
            "Ray, 2 actors x 1 CPU": run(model, source, tmp / "ray2", "--engine", "ray", "--ray-actors", "2"),
        }
        shutil.rmtree(tmp / "ray1", ignore_errors=True)
    local = results["one process (torch, every core)"]["rate"]
    one, two = results["Ray, 1 actor x 1 CPU"]["rate"], results["Ray, 2 actors x 1 CPU"]["rate"]
    lines = ["### Ray engine", "",
             f"Date: {datetime.date.today()}. Machine: {machine('at the end')}; `uptime` at the start: {load}. "
             f"{rows:,} dialogue-length pairs, the "
             "shipped MiniLM with a random 3-class head, `--chunk-size 250`, each way a fresh process of the real "
             "command, all in one run. Reproduce: `python bench/bench_ray.py`", "",
             "| way | rows | scoring rows/s | wall seconds (process, start-up included) |", "|---|---:|---:|---:|"]
    lines += [f"| {way} | {r['rows']:,} | {r['rate']:,.1f} | {r['wall']:.1f} |" for way, r in results.items()]
    lines += ["", f"Overhead: the one-process engine scores {local / two:.2f}x the rows/s of the Ray engine with as "
              f"many actors as cores; 2 actors score {two / one:.2f}x the rows/s of 1.", "", NOTE]
    block = "\n".join(lines)
    print(block)
    if not args.quick:
        replace_section(block)


if __name__ == "__main__":
    main()
