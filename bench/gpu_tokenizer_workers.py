"""Background tokenization on a GPU, measured without warm-up bias: tokenizer workers 0 / 1 / auto, interleaved.

``bench/gpu_check.py`` measures each setting once, the first one right after the model's first call, so its
on/off comparison can carry warm-up effects. This script loads each model once, scores the same rows with
``tokenizer_workers`` 0, 1 and the automatic choice in turn (every setting warmed on those very rows first),
repeats the round ``--rounds`` times and keeps each setting's median, so the settings differ in nothing but the
workers. Scores must be identical across settings (the plan depends on the inputs alone).

    python bench/gpu_tokenizer_workers.py --json gpu_workers.json     # on the GPU machine
    python bench/gpu_tokenizer_workers.py --dry-run                    # tiny shapes on CPU, seconds
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from bench_scoring import synced_wall
from gpu_check import (
    DEBERTA,
    LENGTHS,
    MODELS,
    build_models,
    build_tokenizer,
    busy_share,
    follow_up_arguments,
    free_memory,
    make_pairs,
    measuring_device,
    timings_of,
)

from learned_metrics.scoring import load_scorer

ROWS = {"short": 2048, "article": 1024}
DRY_ROWS = {"short": 8, "article": 4}


def measure(folder: Path, device: torch.device, precision: str, pairs: list[tuple[str, str]], rounds: int,
            workers: list[int | None]) -> dict:
    """Median wall seconds and GPU-busy share per worker setting over interleaved rounds; scores compared."""
    groundings, generations = [p[0] for p in pairs], [p[1] for p in pairs]
    scorers = {w: load_scorer(folder, device=device.type, precision=precision, seed=0, tokenizer_workers=w)
               for w in workers}
    walls: dict[int | None, list[float]] = {w: [] for w in workers}
    busy: dict[int | None, list[float]] = {w: [] for w in workers}
    scores: dict[int | None, np.ndarray] = {}
    for w, scorer in scorers.items():  # warm-up: every batch shape of these rows once
        scores[w] = np.asarray(scorer.score(groundings, generations).scores)
    for _ in range(rounds):
        for w, scorer in scorers.items():
            result, wall = synced_wall(device, scorer.score, groundings, generations)
            walls[w].append(wall)
            share = busy_share(timings_of(result, scorer))
            if share is not None:
                busy[w].append(share)
    base = scores[workers[0]]
    out = {}
    for w, scorer in scorers.items():
        median = statistics.median(walls[w])
        out["auto" if w is None else str(w)] = {
            "resolved_workers": scorer.tokenizer_workers,
            "median_wall_s": median, "walls_s": walls[w], "rows_per_s": len(pairs) / median,
            "gpu_busy": statistics.median(busy[w]) if busy[w] else None,
            "identical_scores": bool(np.array_equal(scores[w], base))}
    del scorers
    free_memory()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = follow_up_arguments(__doc__, "gpu_workers.json")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    device = measuring_device(args.dry_run)
    if device is None:
        return 2
    cuda = device.type == "cuda"
    precision = "bf16" if cuda and torch.cuda.is_bf16_supported() else "fp32"
    rows = DRY_ROWS if args.dry_run else ROWS
    report: dict = {"device": torch.cuda.get_device_name(0) if cuda else "CPU", "precision": precision,
                    "rounds": args.rounds, "rows": rows, "results": {}}
    with tempfile.TemporaryDirectory(prefix="gpu_workers-") as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = build_tokenizer(tmp / "tokenizer")
        models = build_models(tmp, tokenizer, args.dry_run, device)
        for i, (length, tokens) in enumerate(LENGTHS.items()):
            pairs = make_pairs(tokenizer, rows[length], tokens, seed=i)
            for name in MODELS:
                result = measure(models[name]["folder"], device, precision, pairs, args.rounds, [0, 1, None])
                report["results"][f"{name} {length}"] = result
                line = ", ".join(f"workers {k} ({v['resolved_workers']}): {v['rows_per_s']:,.1f} rows/s "
                                 f"busy {v['gpu_busy'] or 0:.0%}" for k, v in result.items())
                print(f"{name} {length}: {line}", flush=True)
    assert all(v["identical_scores"] for r in report["results"].values() for v in r.values())
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}; models {', '.join(MODELS)} (first: {DEBERTA})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
