"""GPU Monte-Carlo batching: what per-row dropout masks cost on a GPU, and what one padded width a batch gives back.

Per-row masks (scoring/mc_dropout.py) make a row's MC score independent of its batch, but each row's masks are
drawn for its padded shape, so a batch may only hold rows of one padded width. Until 2026-11-27 that was one exact
length a batch: ``bench/gpu_check.py`` then measured 1.6-1.9 rows/s at K=15 for the DeBERTa-v3-large shape on an
H100 (against 18-134 rows/s with torch's own dropout the day before). Since then a batch holds the rows whose
lengths pad to one width (the GPU pads to a multiple of 8 anyway), so a row's masks are the same as before.

On the same generated rows (bf16, K=15, seed 0) this times, per model shape and length: the previous batching (one
exact length a batch), the current one (one padded width a batch), torch's own dropout (the paper code's way, masks
depending on the batch), and the deterministic K=1 score; it checks that the previous and the current batching give
the same scores (the same masks: only bf16 batch noise may differ) and that the in-place mask draw equals the
previous ``torch.cat`` of ``torch.rand`` draws bit for bit.

    python bench/gpu_mc_batching.py --json gpu_mc_batching.json     # on the GPU machine
    python bench/gpu_mc_batching.py --dry-run                        # tiny shapes on CPU
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from bench_scoring import synced_wall
from gpu_check import LENGTHS, MODELS, build_models, build_tokenizer, follow_up_arguments, make_pairs, measuring_device

from learned_metrics.scoring import batching, load_scorer, mc_dropout
from learned_metrics.scoring import scorer as scorer_module

K = 15
ROWS = {"short": 512, "article": 96}


@contextlib.contextmanager
def way(name: str):
    """Patch the scorer to batch MC the way ``name`` says (the current code needs no patch)."""
    plan = batching.plan_batches
    keyed = scorer_module.KeyedDropout
    if name == "previous: one length a batch":
        batching.plan_batches = lambda lengths, max_tokens, max_rows=None, bucket=None: plan(
            lengths, max_tokens, max_rows, 1 if bucket else None)
    elif name == "torch's dropout (batch-dependent)":
        scorer_module.KeyedDropout = lambda seed: None  # mc_dropout_mode(model, None): torch's own masks
    elif name == "one width of 32 tokens a batch":  # coarser buckets: bigger batches, more padding
        scorer_module.BatchSettings = lambda *args: settings(*args[:4], 32)
    try:
        yield
    finally:
        batching.plan_batches, scorer_module.KeyedDropout, scorer_module.BatchSettings = plan, keyed, settings


settings = batching.BatchSettings
WAYS = ("previous: one length a batch", "now: one padded width a batch", "torch's dropout (batch-dependent)",
        "one width of 32 tokens a batch")


def previous_masks(x: torch.Tensor, p: float, generators: list) -> torch.Tensor:
    """The draw before 2026-11-27: one torch.rand per block, concatenated."""
    size = x.numel() // len(generators)
    draws = torch.cat([torch.rand(size, generator=g, device=x.device) for g in generators])
    return (draws >= p).to(x.dtype) / (1.0 - p)


def masks_equal(device: torch.device) -> bool:
    """The in-place draw gives the previous draw's masks, bit for bit (GPU path; the CPU path draws with numpy)."""
    if device.type == "cpu":
        return True
    for shape, blocks in (((6, 16, 97, 97), 6), ((30, 113, 1024), 15), ((4, 1024), 4)):
        x = torch.ones(shape, device=device, dtype=torch.bfloat16)
        seeds = [mc_dropout._derived_seed(0, block) for block in range(blocks)]
        new = mc_dropout._masks(x, 0.1, [mc_dropout._generator(s, device) for s in seeds])
        old = previous_masks(x, 0.1, [mc_dropout._generator(s, device) for s in seeds])
        if not torch.equal(new, old):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = follow_up_arguments(__doc__, "gpu_mc_batching.json")
    parser.add_argument("--budget-s", type=float, default=330.0, help="cases that would not fit are skipped")
    args = parser.parse_args(argv)
    device = measuring_device(args.dry_run)
    if device is None:
        return 2
    cuda = device.type == "cuda"
    started = time.perf_counter()
    report: dict = {"device": torch.cuda.get_device_name() if cuda else "cpu (dry run)", "k": K,
                    "torch": torch.__version__, "masks_equal_previous_draw": masks_equal(device), "cases": []}
    print(f"in-place mask draw equals the previous draw: {report['masks_equal_previous_draw']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="gpu_mc-") as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = build_tokenizer(tmp / "tokenizer")
        models = build_models(tmp, tokenizer, args.dry_run, device)
        for model in MODELS:
            scorer = load_scorer(models[model]["folder"], device=device.type, precision="bf16" if cuda else "fp32",
                                 seed=0)
            for length, rows in ROWS.items():
                pairs = make_pairs(tokenizer, rows if cuda else 12, LENGTHS[length], seed=2)
                groundings, generations = [p[0] for p in pairs], [p[1] for p in pairs]
                scorer.score(groundings[:16], generations[:16], mc_samples=K)  # warm-up: kernels, allocator
                _, wall = synced_wall(device, scorer.score, groundings, generations)
                case = {"model": model, "length": length, "rows": len(pairs), "k1_rows_per_s": len(pairs) / wall}
                scores = {}
                for name in WAYS:
                    if time.perf_counter() - started > args.budget_s:
                        case[name] = "skipped: time budget"
                        continue
                    with way(name):
                        result, wall = synced_wall(device, functools.partial(scorer.score, mc_samples=K), groundings,
                                                   generations)
                    scores[name] = np.asarray(result.scores)
                    case[name] = {"rows_per_s": len(pairs) / wall, "wall_s": wall}
                    print(f"{model} {length} K={K} {name}: {len(pairs) / wall:,.2f} rows/s ({wall:.1f} s)", flush=True)
                if all(name in scores for name in WAYS[:2]):
                    first, second = (scores[name] for name in WAYS[:2])
                    case["max_abs_diff_previous_vs_now"] = float(np.max(np.abs(first - second)))
                    case["mean_abs_diff_previous_vs_now"] = float(np.mean(np.abs(first - second)))
                report["cases"].append(case)
            del scorer
    report["seconds"] = time.perf_counter() - started
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    for case in report["cases"]:
        cells = [f"{case[name]['rows_per_s']:,.2f}" if isinstance(case[name], dict) else "-" for name in WAYS]
        print(f"| {case['model']} | {case['length']} | {case['rows']} | {case['k1_rows_per_s']:,.1f} | "
              + " | ".join(cells) + f" | {case.get('max_abs_diff_previous_vs_now', float('nan')):.1e} |")
    return 0 if report["masks_equal_previous_draw"] else 1


if __name__ == "__main__":
    sys.exit(main())
