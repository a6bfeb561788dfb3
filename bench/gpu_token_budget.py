"""GPU token budget: does a larger ``max_tokens`` (rows x padded length per forward) fill an H100 better?

``bench/gpu_check.py`` found deterministic bf16 scoring of article-length pairs at 8-11 % of the dense bf16 peak
with the default budget (32,768 tokens for large models: ~70 rows of ~460 tokens per forward). This loads a
DeBERTa-v3-large-shaped classifier once per budget, warms it on the very rows it then times, and scores the same
1,024 article-length pairs at each budget (2 interleaved rounds, best), checking the scores agree.

    python bench/gpu_token_budget.py --json gpu_budget.json     # on the GPU machine
    python bench/gpu_token_budget.py --dry-run                   # tiny shapes on CPU
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from bench_scoring import model_flops, synced_wall, token_lengths
from gpu_check import DEBERTA, LENGTHS, build_models, build_tokenizer, follow_up_arguments, make_pairs, measuring_device

from learned_metrics.scoring import load_scorer

BUDGETS = (16_384, 32_768, 65_536, 131_072)


def main(argv: list[str] | None = None) -> int:
    parser = follow_up_arguments(__doc__, "gpu_budget.json")
    parser.add_argument("--rows", type=int, default=1024)
    args = parser.parse_args(argv)
    device = measuring_device(args.dry_run)
    if device is None:
        return 2
    cuda = device.type == "cuda"
    precision = "bf16" if cuda else "fp32"
    rows = args.rows if cuda else 6
    budgets = BUDGETS if cuda else (512, 2048)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="gpu_budget-") as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = build_tokenizer(tmp / "tokenizer")
        folder = build_models(tmp, tokenizer, args.dry_run, device)[DEBERTA]["folder"]
        pairs = make_pairs(tokenizer, rows, LENGTHS["article"], seed=1)
        groundings, generations = [p[0] for p in pairs], [p[1] for p in pairs]
        scorers = {b: load_scorer(folder, device=device.type, precision=precision, seed=0, max_tokens=b)
                   for b in budgets}
        lengths = token_lengths(scorers[budgets[0]].tokenizer, "faithfulness", pairs, scorers[budgets[0]].max_length)
        flops = model_flops(scorers[budgets[0]].model.config, lengths)
        scores = {b: np.asarray(s.score(groundings, generations).scores) for b, s in scorers.items()}  # warm-up
        walls: dict[int, list[float]] = {b: [] for b in budgets}
        for _ in range(2):
            for b, scorer in scorers.items():
                walls[b].append(synced_wall(device, scorer.score, groundings, generations)[1])
        base = scores[budgets[0]]
        for b in budgets:
            wall = min(walls[b])
            results[str(b)] = {"rows_per_s": rows / wall, "tflops": flops / wall / 1e12, "walls_s": walls[b],
                               "max_abs_diff_vs_smallest": float(np.max(np.abs(scores[b] - base)))}
            print(f"max_tokens {b:>7,}: {rows / wall:8,.1f} rows/s, {flops / wall / 1e12:6.1f} TFLOP/s, "
                  f"max |diff| {results[str(b)]['max_abs_diff_vs_smallest']:.1e}", flush=True)
    report = {"device": torch.cuda.get_device_name(0) if cuda else "CPU", "precision": precision, "rows": rows,
              "mean_tokens": float(np.mean(lengths)), "results": results}
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
