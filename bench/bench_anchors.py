"""Each metric against its paper's own scorer, on inputs of real length, in one run.

Faithfulness: the anchor is the way the NLI paper's scorer works (``nlifactspush/score.py``):
pairs tokenized with ``truncation="only_first"`` at 512 tokens, batches of 8
in input order padded per batch (``DataCollatorWithPadding``), ``model.eval()``;
MC dropout as K sequential ``model.train()`` forwards of each batch. (Padding
everything to 512 is the coherence code's way and is measured in
``bench_scoring.py``.) Inputs: article + summary pairs of SummEval length
(generated articles of 300 to 620 tokens with 2 to 4 summary sentences) and
dialogue-length pairs (a few sentences of grounding and one response).
Coherence: summary-length texts (3 to 6 sentences) against the coherence paper's
code, one text at a time padded to 512 tokens (``bench_scoring.Naive``).

Everything runs on one thread and is timed in CPU seconds, both ways interleaved
over rounds (best round counts), on the shipped MiniLM with a random 3-class head
(weights do not change throughput). The machine's own fp32 matmul throughput on
one thread is measured too, and the project's achieved model FLOP/s is given as a
fraction of it. Lower precision (bf16 on CPU, int8 dynamic quantisation) is a
user's choice: its speed is reported next to its largest score deviation.

    python bench/bench_anchors.py              # writes "### Against each paper's own scorer" in bench/README.md
    python bench/bench_anchors.py --quick      # small sizes, no README
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_scoring import minilm_models, model_flops  # noqa: E402
from common import machine, replace_section, timed  # noqa: E402
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding  # noqa: E402

from learned_metrics.data.demo import coherent_document, nli_triple  # noqa: E402
from learned_metrics.scoring import load_scorer  # noqa: E402
from learned_metrics.scoring.mc_dropout import mc_dropout_mode  # noqa: E402

HEADING = "### Against each paper's own scorer, real lengths"
PAPER_BATCH = 8
K = 15


# -- inputs -------------------------------------------------------------------------------------


def article_pairs(n: int, tokenizer, seed: int = 0) -> list[tuple[str, str]]:
    """Generated news-like articles of 300-620 tokens with a 2-4 sentence summary (half copied, half claims)."""
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < n:
        target = rng.randint(300, 620)
        sentences: list[str] = []
        while len(tokenizer(" ".join(sentences))["input_ids"]) < target:
            sentences.extend(coherent_document(rng))
        summary = [rng.choice(sentences) if rng.random() < 0.5 else nli_triple(rng)["hypothesis"]
                   for _ in range(rng.randint(2, 4))]
        pairs.append((" ".join(sentences), " ".join(summary)))
    return pairs


def dialogue_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """A few sentences of grounding knowledge and one response: Q2-like lengths."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        doc = coherent_document(rng)[: rng.randint(2, 3)]
        pairs.append((" ".join(doc), rng.choice(doc) if rng.random() < 0.5 else nli_triple(rng)["hypothesis"]))
    return pairs


# -- the paper scorer's way ---------------------------------------------------------------------


class PaperScorer:
    """Input order, batches of 8 padded per batch, e - c; MC = K sequential train-mode forwards per batch."""

    def __init__(self, model_dir: Path, label_ids: dict[str, int]):
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
        self.collate = DataCollatorWithPadding(self.tokenizer)
        self.label_ids = label_ids

    def __call__(self, pairs: list[tuple[str, str]], passes: int) -> np.ndarray:
        features = [self.tokenizer(p, h, truncation="only_first", max_length=512) for p, h in pairs]
        scores = []
        with torch.no_grad():
            for start in range(0, len(features), PAPER_BATCH):
                batch = self.collate(features[start:start + PAPER_BATCH])
                if passes == 1:
                    probs = self.model(**batch).logits.double().softmax(-1)
                else:
                    with mc_dropout_mode(self.model):  # the paper code's torch masks
                        probs = torch.stack([self.model(**batch).logits.double().softmax(-1)
                                             for _ in range(passes)]).mean(0)
                entail, contra = probs[:, self.label_ids["entailment"]], probs[:, self.label_ids["contradiction"]]
                scores.append((entail - contra).numpy())
        return np.concatenate(scores)


# -- timing -------------------------------------------------------------------------------------


def matmul_gflops(size: int = 1024, repeats: int = 8) -> float:
    """The machine's fp32 matmul throughput on this thread (best of ``repeats``), the ceiling for dense layers."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


NLI_ANCHOR = "NLI paper's scorer"
CCL_ANCHOR = "coherence paper's code"


@dataclass
class Row:
    inputs: str
    way: str
    passes: int
    rows: int
    mean_tokens: float
    seconds: float
    paper_seconds: float
    max_diff: float | None
    gflops: float
    anchor: str = NLI_ANCHOR

    @property
    def rows_per_cpu_s(self) -> float:
        """Rows per CPU second; under MC, row-passes (one pass of one row) per CPU second."""
        return self.rows * self.passes / self.seconds

    @property
    def paper_rows_per_cpu_s(self) -> float:
        return self.rows * self.passes / self.paper_seconds

    @property
    def ratio(self) -> float:
        return self.paper_seconds / self.seconds


def project_way(model_dir: Path, variant: str):
    """A scorer of the project, as a user would configure it for ``variant``."""
    precision = "bf16" if variant == "bf16" else "fp32"
    scorer = load_scorer(model_dir, device="cpu", precision=precision)
    if variant == "eager attention":
        scorer.model.set_attn_implementation("eager")
    if variant == "int8 dynamic":
        scorer.model = torch.ao.quantization.quantize_dynamic(scorer.model, {torch.nn.Linear}, dtype=torch.qint8)
    return scorer


VARIANTS = ("project (default)", "eager attention", "bf16", "int8 dynamic")


def measure(name: str, pairs: list[tuple[str, str]], model_dir: Path, passes: int, rounds: int,
            variants: tuple[str, ...]) -> list[Row]:
    scorer = load_scorer(model_dir, device="cpu")
    paper = PaperScorer(model_dir, scorer.label_ids)
    groundings, generations = [p for p, _ in pairs], [h for _, h in pairs]
    lengths = np.array([len(ids) for ids in paper.tokenizer(groundings, generations, truncation="only_first",
                                                            max_length=512)["input_ids"]])
    flops = model_flops(scorer.model.config, lengths) * passes
    reference = paper(pairs, 1)
    rows = []
    for variant in variants:
        way = project_way(model_dir, variant)
        paper_best, project_best, diffs = float("inf"), float("inf"), []
        for _ in range(rounds):
            _, seconds, _ = timed(lambda: paper(pairs, passes))
            paper_best = min(paper_best, seconds)
            result, seconds, _ = timed(lambda w=way: w.score(groundings=groundings, generations=generations,
                                                             mc_samples=passes, seed=0))
            project_best = min(project_best, seconds)
            if passes == 1:
                diffs.append(float(np.abs(result.scores - reference).max()))
        row = Row(name, variant, passes, len(pairs), float(lengths.mean()), project_best, paper_best,
                  max(diffs) if diffs else None, flops / project_best / 1e9)
        print(f"{name} K={passes} {variant}: {row.rows_per_cpu_s:.2f} rows/CPU-s vs paper "
              f"{row.paper_rows_per_cpu_s:.2f} ({row.ratio:.2f}x), {row.gflops:.1f} GFLOP/s"
              + (f", max |diff| {row.max_diff:.1e}" if row.max_diff is not None else ""), flush=True)
        rows.append(row)
    return rows


def coherence_case(model_dir: Path, n: int, rounds: int) -> Row:
    """Summary-length coherence inputs against the coherence paper's code: one text at a time, padded to 512."""
    from bench_scoring import Naive, make_inputs

    texts = [item[0] for item in make_inputs(n, (3, 6))["coherence"]]
    scorer = load_scorer(model_dir, kind="coherence", device="cpu")
    naive = Naive(model_dir, "coherence", scorer.label_ids, min(512, scorer.max_length))
    lengths = np.array([len(ids) for ids in naive.tokenizer(texts, truncation=True, max_length=512)["input_ids"]])
    naive_best, project_best, diffs = float("inf"), float("inf"), []
    for _ in range(rounds):
        reference, seconds, _ = timed(lambda: naive([(t,) for t in texts], 1))
        naive_best = min(naive_best, seconds)
        result, seconds, _ = timed(lambda: scorer.score(texts=texts))
        project_best = min(project_best, seconds)
        diffs.append(float(np.abs(result.scores - reference).max()))
    row = Row("coherence summaries, 3-6 sentences", "project (default)", 1, n, float(lengths.mean()), project_best,
              naive_best, max(diffs), model_flops(scorer.model.config, lengths) / project_best / 1e9, CCL_ANCHOR)
    print(f"coherence: {row.rows_per_cpu_s:.2f} rows/CPU-s vs {row.paper_rows_per_cpu_s:.2f} ({row.ratio:.2f}x), "
          f"{row.gflops:.1f} GFLOP/s, max |diff| {row.max_diff:.1e}", flush=True)
    return row


def markdown(rows: list[Row], peak: float, command: str) -> str:
    lines = [
        f"{HEADING}\n",
        "Faithfulness: the NLI paper's scorer way (input order, batches of 8 padded per batch, "
        "`truncation=only_first` at 512; MC as K sequential train-mode forwards per batch with torch's masks). "
        "Coherence: the coherence paper's code (one text at a time, padded to 512). The project against each on "
        "the same inputs, in one run, one thread, CPU seconds, best of the rounds. Model: the shipped MiniLM with a "
        "random head (2 or 3 classes; weights do not change throughput). "
        f"Machine: {machine()}; its fp32 matmul on one thread reaches {peak:.0f} GFLOP/s (1024x1024, measured), "
        "the ceiling for the dense layers.\n",
        "| inputs | mean tokens | K | way | rows/CPU-s | anchor | anchor rows/CPU-s | ratio | max \\|diff\\| vs anchor,"
        " K=1 | model GFLOP/s | of matmul peak |",
        "|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        diff = "—" if r.max_diff is None else f"{r.max_diff:.1e}"
        per_pass = "" if r.passes == 1 else " (per pass)"
        lines.append(f"| {r.inputs} | {r.mean_tokens:.0f} | {r.passes} | {r.way} | {r.rows_per_cpu_s:.2f}{per_pass} "
                     f"| {r.anchor} | {r.paper_rows_per_cpu_s:.2f} | {r.ratio:.2f}x | {diff} | {r.gflops:.1f} | "
                     f"{r.gflops / peak:.0%} |")
    lines += ["", verdict(rows, peak), "", f"Reproduce: `{command}`", ""]
    return "\n".join(lines)


def verdict(rows: list[Row], peak: float) -> str:
    """The sentences under the table, computed from it."""
    default = {(r.inputs, r.passes): r for r in rows if r.way == "project (default)"}
    parts = []
    for inputs in dict.fromkeys(r.inputs for r in rows):
        det, mc = default.get((inputs, 1)), default.get((inputs, K))
        if det is None:
            continue
        text = (f"{inputs}: {det.ratio:.2f}x the rows per CPU-second of the {det.anchor} at equal scores, "
                f"{det.gflops / peak:.0%} of the measured matmul peak")
        if mc is not None:
            text += (f"; with {K} MC passes {mc.ratio:.2f}x the paper way, and a pass costs "
                     f"{det.rows_per_cpu_s / mc.rows_per_cpu_s:.2f}x a deterministic one")
        parts.append(text + ".")
    for r in rows:
        if r.way in ("bf16", "int8 dynamic"):
            parts.append(f"{r.way} on CPU ({r.inputs}): {r.ratio:.2f}x the paper way, scores off by up to "
                         f"{r.max_diff:.1e} (a user's choice, never a default).")
    return " ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=64, help="article-length pairs")
    parser.add_argument("--short-rows", type=int, default=512, help="dialogue-length pairs")
    parser.add_argument("--coherence-rows", type=int, default=256, help="summary-length coherence texts")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="small sizes, no README")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # truncation of the longest articles and torch's quantisation deprecations
    if args.quick:
        args.rows, args.short_rows, args.coherence_rows, args.rounds = 16, 64, 32, 1
    with tempfile.TemporaryDirectory() as tmp:
        models = minilm_models(Path(tmp))
        model_dir = models["faithfulness"]
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        articles = article_pairs(args.rows, tokenizer)
        dialogue = dialogue_pairs(args.short_rows)
        rows = measure("article + summary", articles, model_dir, 1, args.rounds, VARIANTS)
        rows += measure("article + summary", articles[: max(8, args.rows // 4)], model_dir, K, 1,
                        ("project (default)",))
        rows += measure("dialogue", dialogue, model_dir, 1, args.rounds, ("project (default)",))
        rows += measure("dialogue", dialogue[: args.short_rows // 4], model_dir, K, 1, ("project (default)",))
        rows.append(coherence_case(models["coherence"], args.coherence_rows, args.rounds))
    peak = matmul_gflops()
    command = "python bench/bench_anchors.py" + ("" if args.rows == 64 else f" --rows {args.rows}")
    block = markdown(rows, peak, command)
    print(block)
    if not args.quick:
        replace_section(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
