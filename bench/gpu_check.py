"""GPU check: one prepared script that measures scoring on a GPU machine in a few minutes, offline.

Builds random-weight sequence classifiers shaped like the paper's NLI models (DeBERTa-v3-large: deberta-v2,
relative attention, entailment=0; RoBERTa-large: contradiction=0 as roberta-large-mnli) from configs, with a
byte-level BPE tokenizer trained here on generated text, saves them as fp32 safetensors folders, and scores
generated pairs of short (~60-100 tokens) and article length (~400-512 tokens) through the public API
(``load_scorer(folder, device=..., precision=..., mc_samples=..., seed=0)`` and ``scorer.score(...)``).
Throughput does not depend on the weights' values. It records, per model and length:

- rows/s and tokens/s, deterministic (e-c) and MC dropout (K=15), at bf16 and at fp32 for reference;
- achieved model TFLOP/s and its fraction of the GPU's dense bf16 peak (``PEAK_BF16_TFLOPS``; an unknown GPU
  gets no fraction);
- bf16 against fp32 scores on the same rows (max and mean |diff|, Spearman, share of row pairs ordered alike);
- pipeline overlap: the share of wall time the GPU was not waiting for tokens (``ScoreResult.timings``), with
  background tokenization on and off (``tokenizer_workers=0``), and torch.compile on and off, where this
  version of the scorer has those options;
- with 2+ GPUs, ``accelerate launch --num_processes N -m learned_metrics.cli score faithfulness ...`` against a
  one-process run of the same command: the output files must be byte-identical.

Row counts follow the measured rate so that each case takes a few seconds; ``--budget-s`` (default 420) caps
the whole run, and parts that would not fit are skipped and say so. Writes one JSON (``--json``), prints one
table and a Markdown block for bench/README.md (``--readme`` writes it as its ``## GPU check`` section).

    python bench/gpu_check.py --json gpu_check.json      # on the GPU machine (CUDA torch installed)
    python bench/gpu_check.py --dry-run --json /tmp/x.json  # the same code on CPU, tiny shapes, seconds
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                      ("TOKENIZERS_PARALLELISM", "false")):
    os.environ.setdefault(_name, _value)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from bench_scoring import LARGE, model_flops, synced_wall, token_lengths  # noqa: E402
from common import README, ROOT, machine, replace_section  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from transformers import AutoConfig, AutoModelForSequenceClassification  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from learned_metrics.data.demo import coherent_document, nli_triple  # noqa: E402
from learned_metrics.scoring import load_scorer  # noqa: E402
from learned_metrics.scoring.options import ScoringOptions  # noqa: E402

console = Console() if sys.stdout.isatty() else Console(width=200)
K = 15
DRY_K = 3

# Dense (no sparsity) bf16 tensor-core peak in TFLOP/s, by a piece of torch.cuda.get_device_name(); the first
# match wins, so more specific names come first. None: a known name whose peak is not listed (no fraction).
# H100 SXM 989.4 and H100 PCIe 756 (half the 1,979 / 1,513 sparse figures of NVIDIA's datasheets), A100 312,
# L40S 362, H200 989 (the H100 SXM's compute with more memory). A10G 125 is the A10's datasheet figure, not
# checked for the A10G itself.
PEAK_BF16_TFLOPS: tuple[tuple[str, float | None], ...] = (
    ("GH200", 989.0),
    ("H200 NVL", None),
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100 NVL", None),
    ("H100", 989.0),  # "NVIDIA H100 80GB HBM3" is the SXM part
    ("A100", 312.0),
    ("L40S", 362.0),
    ("A10G", 125.0),
)


def peak_bf16_tflops(device_name: str) -> float | None:
    """The dense bf16 peak of a GPU by its name, None when unknown."""
    name = device_name.lower()
    for piece, peak in PEAK_BF16_TFLOPS:
        if piece.lower() in name:
            return peak
    return None


def peak_fraction(tflops: float | None, device_name: str) -> float | None:
    peak = peak_bf16_tflops(device_name)
    return None if peak is None or tflops is None else tflops / peak


# -- models -------------------------------------------------------------------------------------

DEBERTA, ROBERTA = "deberta-v3-large-shaped", "roberta-large-shaped"
MODELS = {
    # name: (model type, shapes, id2label); shapes as the real configs (bench_scoring.LARGE), with their vocab
    DEBERTA: ("deberta-v2", {**LARGE["deberta-v3-large-sized"][2], "vocab_size": 128100, "layer_norm_eps": 1e-7,
                             "max_relative_positions": -1},
              {0: "entailment", 1: "neutral", 2: "contradiction"}),
    ROBERTA: ("roberta", {**LARGE["roberta-large-sized"][2], "vocab_size": 50265, "layer_norm_eps": 1e-5},
              {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}),  # as roberta-large-mnli
}
# --dry-run: tiny shapes, same model types and label orders (a smaller vocabulary: building is faster)
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
        "vocab_size": 8200}


def build_tokenizer(folder: Path, vocab_size: int = 8000):
    """A byte-level BPE tokenizer trained here on generated text (tests/tiny_models.py), 512 tokens long."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import build_tokenizer as train

    tokenizer = train(folder, vocab_size=vocab_size)
    tokenizer.model_max_length = 512
    tokenizer.save_pretrained(folder)
    return tokenizer


def build_models(tmp: Path, tokenizer, dry_run: bool, device: torch.device) -> dict[str, dict]:
    """Save each model (fp32 safetensors, labels named) with the tokenizer; its description for the JSON."""
    out = {}
    for name, (model_type, shapes, id2label) in MODELS.items():
        shapes = {**shapes, **(TINY if dry_run else {})}
        config = AutoConfig.for_model(model_type, pad_token_id=tokenizer.pad_token_id,
                                      bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                      id2label=id2label, label2id={v: k for k, v in id2label.items()}, **shapes)
        assert len(tokenizer) <= config.vocab_size, "token ids must stay below the model's vocabulary"
        start = time.perf_counter()
        torch.manual_seed(0)
        try:
            with torch.device(device):  # random init on the GPU is much faster than on the CPU
                model = AutoModelForSequenceClassification.from_config(config, dtype=torch.float32)
        except (RuntimeError, TypeError, ValueError):
            model = AutoModelForSequenceClassification.from_config(config, dtype=torch.float32)
        folder = tmp / name
        model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
        out[name] = {"folder": folder, "model_type": model_type, "hidden_size": config.hidden_size,
                     "num_hidden_layers": config.num_hidden_layers, "num_attention_heads": config.num_attention_heads,
                     "intermediate_size": config.intermediate_size, "vocab_size": config.vocab_size,
                     "max_position_embeddings": config.max_position_embeddings,
                     "id2label": {str(k): v for k, v in config.id2label.items()},
                     "parameters": sum(p.numel() for p in model.parameters()),
                     "saved_dtype": str(model.dtype).removeprefix("torch."),
                     "build_seconds": round(time.perf_counter() - start, 2)}
        del model
        free_memory()
    return out


def follow_up_arguments(description: str, json_default: str) -> argparse.ArgumentParser:
    """The arguments every follow-up GPU measurement shares (--json, --dry-run); the caller adds its own."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=Path(json_default))
    parser.add_argument("--dry-run", action="store_true", help="the same code on CPU with tiny shapes")
    return parser


def measuring_device(dry_run: bool) -> torch.device | None:
    """The GPU, or the CPU for a dry run; None (after saying so) when there is no GPU and no dry run was asked."""
    if torch.cuda.is_available() and not dry_run:
        return torch.device("cuda")
    if dry_run:
        return torch.device("cpu")
    print("no GPU: run on a GPU machine, or use --dry-run", file=sys.stderr)
    return None


def free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# -- inputs -------------------------------------------------------------------------------------

# Tokens of the grounding alone (the claim and 3 special tokens come on top): short groundings, and article
# length that stays near the 512-token limit.
LENGTHS = {"short": (55, 85), "article": (385, 490)}


def make_pairs(tokenizer, n: int, tokens: tuple[int, int], seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (grounding, generation) pairs from ``learned_metrics.data.demo``: generated sentences joined into a
    grounding of about ``tokens`` tokens, and a one-sentence claim (one of its sentences, or an NLI hypothesis)."""
    rng = random.Random(seed)
    sentences = [s for _ in range(1500) for s in coherent_document(rng)]
    counts = [len(ids) for ids in tokenizer(sentences, add_special_tokens=False)["input_ids"]]
    pairs = []
    for _ in range(n):
        target, at, taken, total = rng.randint(*tokens), rng.randrange(len(sentences)), [], 0
        while total < target:
            taken.append(sentences[at])
            total += counts[at]
            at = (at + 1) % len(sentences)
        claim = rng.choice(taken) if rng.random() < 0.5 else nli_triple(rng)["hypothesis"]
        pairs.append((" ".join(taken), claim))
    return pairs


# -- measuring ----------------------------------------------------------------------------------


class Budget:
    def __init__(self, seconds: float):
        self.seconds, self.start = seconds, time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.seconds - self.elapsed()


@dataclasses.dataclass
class Sizes:
    """How big each case is: rows are the measured rate times ``slice_s``, between ``min_rows`` and ``max_rows``."""

    max_rows: dict[str, int]
    min_rows: int
    warm_rows: int
    slice_s: float  # most seconds one timed case aims at
    floor_s: float  # least: below this left per case, cases are skipped
    compile_reserve_s: float  # a compile warm-up is not interruptible: start it only with this much left
    compile_rows: int  # the compiled case scores the eager case's rows, at most these (fewer shapes to compile)
    agree_rows: int  # MC agreement: these rows scored again at each precision with the same seed
    multi_gpu_reserve_s: float


GPU_SIZES = Sizes({"short": 4096, "article": 2048}, min_rows=32, warm_rows=32, slice_s=6.0, floor_s=1.0,
                  compile_reserve_s=100.0, compile_rows=512, agree_rows=32, multi_gpu_reserve_s=90.0)
DRY_SIZES = Sizes({"short": 4, "article": 3}, min_rows=3, warm_rows=1, slice_s=0.1, floor_s=0.0,
                  compile_reserve_s=0.0, compile_rows=3, agree_rows=3, multi_gpu_reserve_s=0.0)

CASE_KEYS = ("model", "length", "setting", "precision", "mc_samples", "status", "rows", "mean_tokens", "seconds",
             "rows_per_s", "tokens_per_s", "forward_tokens_per_s", "tflops", "peak_fraction", "timings",
             "gpu_busy_share", "warmup_seconds")


def case_record(**values) -> dict:
    record = dict.fromkeys(CASE_KEYS)
    record.update(values)
    return record


def timings_of(result, scorer) -> dict[str, float] | None:
    """``ScoreResult.timings`` as a dict of seconds (older scorers have none)."""
    timings = getattr(result, "timings", None)
    if timings is None:
        timings = getattr(scorer, "timings", None)
    if timings is not None and not isinstance(timings, dict) and hasattr(timings, "to_json"):
        timings = timings.to_json()
    if not isinstance(timings, dict) or not timings.get("wall_seconds"):
        return None
    return {key: float(value) for key, value in timings.items()}


def busy_share(timings: dict[str, float] | None) -> float | None:
    """Share of wall time the model was not waiting for tokenized batches: 1 - wait / wall."""
    if not timings or "wait_seconds" not in timings:
        return None
    return max(0.0, 1.0 - timings["wait_seconds"] / timings["wall_seconds"])


class Runner:
    def __init__(self, args: argparse.Namespace, sizes: Sizes, device: torch.device, device_name: str,
                 budget: Budget, planned_cases: int):
        self.args, self.sizes, self.device, self.device_name = args, sizes, device, device_name
        self.budget, self.cases_left = budget, planned_cases
        self.cases: list[dict] = []
        self.scores: dict[tuple, np.ndarray] = {}  # (model, length, setting, K) -> scores in input order
        self.multi_gpu_planned = False  # then its part's seconds are kept out of the cases' share

    def reserve(self) -> float:
        return self.sizes.multi_gpu_reserve_s if self.multi_gpu_planned else 0.0

    def slice_s(self) -> float:
        share = (self.budget.left() - self.reserve()) / max(self.cases_left, 1) * 0.5  # half: loads, warm-ups
        return min(self.sizes.slice_s, share)

    def skip(self, reason: str, **where) -> None:
        self.cases_left -= 1
        self.cases.append(case_record(status=reason, **where))
        console.log(f"[yellow]{where.get('model')} {where.get('length')} {where.get('setting')} "
                    f"K={where.get('mc_samples')}: {reason}")

    def measure(self, scorer, model: str, length: str, setting: str, pairs: list[tuple[str, str]],
                lengths: np.ndarray, passes: int, rows: int | None = None, warm_full: bool = False) -> dict | None:
        """One timed call of ``scorer.score`` (after a warm-up call that also gives the rate); its record."""
        where = {"model": model, "length": length, "setting": setting, "precision": precision_name(scorer.dtype),
                 "mc_samples": passes}
        slice_s = self.slice_s()
        if slice_s < self.sizes.floor_s:
            self.skip(f"skipped: time budget ({self.budget.left():.0f} s of --budget-s {self.args.budget_s:g} "
                      "left)", **where)
            return None
        self.cases_left -= 1
        groundings, generations = [p[0] for p in pairs], [p[1] for p in pairs]

        def call(n: int):
            return scorer.score(groundings=groundings[:n], generations=generations[:n], mc_samples=passes)

        warm_n = rows if warm_full else min(max(1, self.sizes.warm_rows // (4 if passes > 1 else 1)), len(pairs))
        _, warm_s = synced_wall(self.device, call, warm_n)
        if not warm_full:  # a model's first call pays one-off start-up costs: the rate comes from a second call
            _, warm_s = synced_wall(self.device, call, warm_n)
        if rows is None:
            rate = warm_n / max(warm_s, 1e-9)
            rows = int(min(self.sizes.max_rows[length], len(pairs), max(self.sizes.min_rows, rate * slice_s)))
        result, wall = synced_wall(self.device, call, rows)
        used = lengths[:rows]
        tflops = model_flops(scorer.model.config, used) * passes / wall / 1e12
        timings = timings_of(result, scorer)
        record = case_record(**where, status="ok", rows=rows, mean_tokens=float(used.mean()), seconds=wall,
                             rows_per_s=rows / wall, tokens_per_s=float(result.tokens) / wall,
                             forward_tokens_per_s=float(result.tokens) * passes / wall, tflops=tflops,
                             peak_fraction=peak_fraction(tflops, self.device_name), timings=timings,
                             gpu_busy_share=busy_share(timings) if timings else "n/a: scorer has no timings",
                             warmup_seconds=warm_s)
        self.cases.append(record)
        if passes == 1:  # deterministic scores do not depend on which other rows were scored
            self.scores[(model, length, setting, passes)] = np.asarray(result.scores, dtype=np.float64)
        else:  # MC masks do: the agreement rows again, the dropout stream restarted at the same seed
            n = min(self.sizes.agree_rows, rows)
            again = scorer.score(groundings=groundings[:n], generations=generations[:n], mc_samples=passes, seed=0)
            self.scores[(model, length, setting, passes)] = np.asarray(again.scores, dtype=np.float64)
        busy = record["gpu_busy_share"]
        console.log(f"{model} {length} {setting} K={passes}: {rows} rows, {rows / wall:,.1f} rows/s, "
                    f"{record['tokens_per_s']:,.0f} tokens/s, {tflops:.3g} TFLOP/s"
                    + (f", busy {busy:.0%}" if isinstance(busy, float) else ""))
        return record


def failure(error: BaseException) -> str:
    """A status line for an exception: its type and the first line of its message."""
    text = str(error).strip()
    return f"failed: {type(error).__name__}" + (f": {text.splitlines()[0][:200]}" if text else "")


def precision_name(dtype: torch.dtype) -> str:
    return {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, str(dtype))


def cpu_bf16_works() -> bool:
    try:
        a = torch.ones(4, 4, dtype=torch.bfloat16)
        return bool(torch.isfinite((a @ a).float()).all())
    except RuntimeError:
        return False


def scoring_option_names() -> set[str]:
    return {spec.name for spec in dataclasses.fields(ScoringOptions)}


# -- agreement, overlap, compile ----------------------------------------------------------------


def agreement(a: np.ndarray, b: np.ndarray, max_pairs_rows: int = 2000) -> dict:
    """How close ``a`` (bf16) is to ``b`` (fp32) on the same rows, as values and as a ranking."""
    from scipy.stats import spearmanr

    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    diff = np.abs(a - b)
    m = min(n, max_pairs_rows)
    sa, sb = np.sign(a[:m, None] - a[None, :m]), np.sign(b[:m, None] - b[None, :m])
    upper = np.triu(np.ones((m, m), dtype=bool), 1)
    rho = float(spearmanr(a, b).statistic) if n > 2 and np.ptp(a) > 0 and np.ptp(b) > 0 else None
    return {"rows": n, "max_abs_diff": float(diff.max()), "mean_abs_diff": float(diff.mean()),
            "fp32_score_std": float(b.std()), "spearman": rho,
            "same_order_pairs_share": float((sa == sb)[upper].mean()) if m > 1 else None,
            "identical_ranking": bool(np.array_equal(np.argsort(a, kind="stable"), np.argsort(b, kind="stable")))}


def agreements(runner: Runner, ks: list[int]) -> list[dict]:
    out = []
    for model in MODELS:
        for length in LENGTHS:
            for passes in ks:
                bf16, fp32 = (runner.scores.get((model, length, s, passes)) for s in ("bf16", "fp32"))
                row = {"model": model, "length": length, "mc_samples": passes, "compared": "bf16 vs fp32"}
                if bf16 is None or fp32 is None:
                    row.update(status="n/a: bf16 or fp32 not measured", rows=0, max_abs_diff=None,
                               mean_abs_diff=None, fp32_score_std=None, spearman=None, same_order_pairs_share=None,
                               identical_ranking=None)
                else:
                    row.update(status="ok", **agreement(bf16, fp32))
                out.append(row)
    return out


def find_case(cases: list[dict], model: str, length: str, setting: str, passes: int = 1) -> dict | None:
    return next((c for c in cases if (c["model"], c["length"], c["setting"], c["mc_samples"]) ==
                 (model, length, setting, passes)), None)


def comparison(cases: list[dict], model: str, length: str, off: str, on: str, option: str,
               available: bool) -> dict:
    """Deterministic rows/s with a feature ``on`` against ``off`` (setting labels), GPU busy shares, a status."""
    a, b = find_case(cases, model, length, off), find_case(cases, model, length, on)
    row = {"model": model, "length": length, "off": off, "on": on,
           "off_rows_per_s": a and a["rows_per_s"], "on_rows_per_s": b and b["rows_per_s"], "speedup": None,
           "off_gpu_busy_share": a and a["gpu_busy_share"], "on_gpu_busy_share": b and b["gpu_busy_share"],
           "on_warmup_seconds": b and b["warmup_seconds"]}
    if not available:
        row["status"] = f"not available in this version (ScoringOptions has no {option})"
    elif a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
        row["status"] = next((c["status"] for c in (a, b) if c is not None and c["status"] != "ok"), "not measured")
    else:
        row["speedup"] = b["rows_per_s"] / a["rows_per_s"]
        row["status"] = "ok"
    return row


# -- several GPUs -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_group(argv: list[str], timeout: float) -> tuple[int, float, str]:
    """Run ``argv`` in its own process group (killed as a whole on timeout): return code, seconds, stderr tail."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return -9, time.perf_counter() - start, f"timed out after {timeout:.0f} s\n{err[-2000:]}"
    return proc.returncode, time.perf_counter() - start, err[-2000:]


def multi_gpu(args: argparse.Namespace, folder: Path, pairs: list[tuple[str, str]], tmp: Path,
              budget: Budget, gpus: int) -> dict:
    """``accelerate launch --num_processes N`` against one process: the same CLI command, byte-identical output."""
    out: dict = {"gpus": gpus, "status": None, "identical": None}
    if args.dry_run:
        out["status"] = "skipped: --dry-run"
        return out
    if gpus < 2:
        out["status"] = "skipped: one GPU" if gpus == 1 else "skipped: no GPU"
        return out
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or shutil.which("accelerate")
    if accelerate is None:
        out["status"] = "skipped: accelerate launcher not installed"
        return out
    if budget.left() < 30:
        out["status"] = f"skipped: time budget ({budget.left():.0f} s left)"
        return out
    source = tmp / "multi-gpu-in.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        for i, (grounding, generation) in enumerate(pairs):
            handle.write(json.dumps({"id": i, "grounding": grounding, "generation": generation}) + "\n")
    single, multi = tmp / "one-process.jsonl", tmp / "multi-process.jsonl"
    tail = ["-m", "learned_metrics.cli", "score", "faithfulness", "--model", str(folder), "--input", str(source)]
    commands = {
        "one_process": [sys.executable, *tail, "--output", str(single), "--no-progress"],
        "multi_process": [accelerate, "launch", "--num_processes", str(gpus), "--num_machines", "1",
                          "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port",
                          str(free_port()), *tail, "--output", str(multi), "--no-progress"],
    }
    out.update(rows=len(pairs), commands={k: shlex.join(v) for k, v in commands.items()})
    for key, argv in commands.items():
        timeout = max(10.0, budget.left() - 5) / (2 if key == "one_process" else 1)
        code, seconds, err = run_group(argv, timeout)
        out[f"{key}_seconds"] = seconds
        if code != 0:
            out["status"] = f"failed: {key} exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}"
            out["stderr_tail"] = err
            return out
    out["identical"] = single.read_bytes() == multi.read_bytes()
    if not out["identical"]:
        a = [json.loads(line) for line in single.read_text(encoding="utf-8").splitlines()]
        b = [json.loads(line) for line in multi.read_text(encoding="utf-8").splitlines()]
        same_ids = [r.get("id") for r in a] == [r.get("id") for r in b]
        diffs = [abs(x["score"] - y["score"]) for x, y in zip(a, b, strict=False)] if same_ids else []
        out.update(same_row_order=same_ids, max_abs_score_diff=max(diffs) if diffs else None,
                   rows_differing=sum(d > 0 for d in diffs))
    out["status"] = "ok" if out["identical"] else "differs"
    return out


# -- report -------------------------------------------------------------------------------------


def fmt(value, spec: str = ",.1f", none: str = "-") -> str:
    if value is None:
        return none
    if isinstance(value, str):
        return value
    return format(value, spec)


def rate(value) -> str:
    if not isinstance(value, (int, float)):
        return fmt(value)
    return f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def share(value) -> str:
    return fmt(value, ".0%") if not isinstance(value, str) else "n/a"


def case_cells(c: dict) -> list[str]:
    if c["status"] != "ok":
        return [c["model"], c["length"], c["setting"], str(c["mc_samples"]), "-", "-", "-", "-", "-", "-", "-",
                c["status"]]
    return [c["model"], c["length"], c["setting"], str(c["mc_samples"]), str(c["rows"]), f"{c['mean_tokens']:.0f}",
            rate(c["rows_per_s"]), f"{c['tokens_per_s']:,.0f}", f"{c['tflops']:.3g}", share(c["peak_fraction"]),
            share(c["gpu_busy_share"]), "ok"]


CASE_HEADER = ("model", "length", "setting", "K", "rows", "mean tokens", "rows/s", "tokens/s", "model TFLOP/s",
               "of bf16 peak", "GPU busy", "status")


def rich_table(report: dict) -> Table:
    table = Table(title=f"gpu_check on {report['device']['name']}" + (" (dry run)" if report["dry_run"] else ""))
    for name in CASE_HEADER:
        table.add_column(name, justify="left" if name in ("model", "length", "setting", "status") else "right")
    for c in report["cases"]:
        table.add_row(*case_cells(c))
    return table


def markdown(report: dict) -> str:
    device, versions = report["device"], report["versions"]
    peak = device["peak_bf16_tflops"]
    lines = [
        "## GPU check",
        "",
        ("Dry run on CPU: tiny shapes, a handful of rows, K=3; a check of the code, not a GPU figure"
         if report["dry_run"] else f"Device: {device['name']} x {device['count']}"
         + (f" (dense bf16 peak {peak:g} TFLOP/s)" if peak else " (dense bf16 peak unknown: no fraction)"))
        + f"; torch {versions['torch']}, CUDA {versions['cuda']}, transformers {versions['transformers']}; "
        f"{report['machine']}. Reproduce: `{report['command']}` ({report['elapsed_s']:.0f} s of a "
        f"{report['budget_s']:g} s budget).",
        "",
        "Random-weight classifiers shaped like DeBERTa-v3-large (deberta-v2, 24 layers, hidden 1024, relative "
        "attention) and RoBERTa-large (24 layers, hidden 1024), byte-level BPE tokenizer trained offline, fp32 "
        "safetensors folders loaded with `load_scorer(folder, precision=..., mc_samples=..., seed=0)`. Inputs: "
        "generated pairs with short (~60-100 tokens) or article-length (~400-512 tokens) groundings. Wall-clock "
        "with the GPU synchronised at both ends, after a warm-up call. Model TFLOP/s counts the dense layers and "
        "the n^2 attention products of the unpadded tokens (DeBERTa's relative-position terms not counted, so a "
        "lower bound), x K for MC. GPU busy = 1 - (time waiting for tokenized batches) / wall.",
        "",
        "| " + " | ".join(CASE_HEADER) + " |",
        "|" + "---|" * len(CASE_HEADER),
    ]
    lines += ["| " + " | ".join(case_cells(c)) + " |" for c in report["cases"]]
    lines += ["", "bf16 against fp32 on the same rows (K=1: the timed rows both precisions scored; MC: the first "
              "rows scored again at each precision with the dropout stream restarted at seed 0). Random weights give "
              "scores with little spread (the fp32 std column), so the ranking columns are a harsh test; the |diff| "
              "columns carry over to trained models more directly.", "",
              "| model | length | K | rows | max abs diff | mean abs diff | fp32 score std | Spearman | "
              "pairs in the same order | identical ranking | status |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for a in report["agreement"]:
        lines.append(f"| {a['model']} | {a['length']} | {a['mc_samples']} | {a['rows']} | "
                     f"{fmt(a['max_abs_diff'], '.1e')} | {fmt(a['mean_abs_diff'], '.1e')} | "
                     f"{fmt(a['fp32_score_std'], '.1e')} | {fmt(a['spearman'], '.4f')} | "
                     f"{fmt(a['same_order_pairs_share'], '.2%')} | {fmt(a['identical_ranking'], '')} | "
                     f"{a['status']} |")
    for title, rows in (("Background tokenization (pipeline overlap) on vs off (`tokenizer_workers=0`)",
                         report["overlap"]), ("torch.compile on vs off", report["compile"])):
        lines += ["", f"{title}, deterministic:", "", "| model | length | off rows/s | on rows/s | speed-up | "
                  "GPU busy off | GPU busy on | status |", "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['model']} | {r['length']} | {rate(r['off_rows_per_s'])} | {rate(r['on_rows_per_s'])} "
                         f"| {fmt(r['speedup'], '.2f')}x | {share(r['off_gpu_busy_share'])} | "
                         f"{share(r['on_gpu_busy_share'])} | {r['status']} |")
    mg = report["multi_gpu"]
    lines += ["", f"Several GPUs (`accelerate launch` vs one process, same CLI command): {mg['status']}"
              + (f"; output byte-identical: {mg['identical']}" if mg.get("identical") is not None else "") + "."]
    if report["skipped"]:
        lines += ["", "Skipped: " + "; ".join(report["skipped"]) + "."]
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------


def versions() -> dict[str, str | None]:
    import learned_metrics

    return {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
            "transformers": transformers.__version__, "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "learned_metrics": getattr(learned_metrics, "__version__", None)}


def json_ready(value):
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=Path("gpu_check.json"), help="where the figures go")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="seconds the whole run may take; parts that would not fit are skipped and say so")
    parser.add_argument("--dry-run", action="store_true",
                        help="the same code on CPU with tiny shapes, a handful of rows and K=3 (CI)")
    parser.add_argument("--readme", action="store_true",
                        help="write the Markdown block as the '## GPU check' section of bench/README.md")
    args = parser.parse_args(argv)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    budget = Budget(args.budget_s)
    command = shlex.join(["python", "bench/gpu_check.py", *(sys.argv[1:] if argv is None else argv)])
    cuda = torch.cuda.is_available() and not args.dry_run
    device = torch.device("cuda" if cuda else "cpu")
    device_name = torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.machine()})"
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not cuda and not args.dry_run:
        console.log("[red]no GPU: run on a GPU machine, or use --dry-run to check the code on CPU")
        return 2
    sizes = DRY_SIZES if args.dry_run else GPU_SIZES
    ks = [1, DRY_K if args.dry_run else K]
    options = scoring_option_names()
    has_workers, has_compile = "tokenizer_workers" in options, "compile" in options
    skipped: list[str] = []
    # settings: (label, precision, extra load_scorer keywords, the passes measured); the first is the main one
    if cuda and torch.cuda.is_bf16_supported():
        settings = [("bf16", "bf16", {}, ks), ("fp32", "fp32", {}, ks)]
    elif cuda:
        settings = [("fp32", "fp32", {}, ks)]
        skipped.append("bf16: not supported on this GPU")
    else:  # dry run: fp32 is the main setting; bf16 (slow on most CPUs) deterministic only, where torch has it
        settings = [("fp32", "fp32", {}, ks)] + ([("bf16", "bf16", {}, [1])] if cpu_bf16_works() else [])
    precisions = [s[1] for s in settings]
    main_precision = precisions[0]

    with tempfile.TemporaryDirectory(prefix="gpu_check-") as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = build_tokenizer(tmp / "tokenizer")
        models = build_models(tmp, tokenizer, args.dry_run, device)
        biggest = max(sizes.max_rows.values())
        pairs = {length: make_pairs(tokenizer, max(sizes.max_rows[length], sizes.warm_rows), tokens, seed=i)
                 for i, (length, tokens) in enumerate(LENGTHS.items())}
        console.log(f"built {len(models)} models and {sum(map(len, pairs.values()))} pairs in "
                    f"{budget.elapsed():.1f} s on {device_name}")
        settings.append((f"{main_precision}, sequential tokenization", main_precision, {"tokenizer_workers": 0}, [1]))
        compile_setting = (f"{main_precision}, torch.compile", main_precision, {"compile": True}, [1])
        planned = len(MODELS) * len(LENGTHS) * (sum(len(s[3]) for s in settings) + 1)
        runner = Runner(args, sizes, device, device_name, budget, planned)
        runner.multi_gpu_planned = gpus >= 2 and not args.dry_run
        lengths_of: dict[tuple[str, str], np.ndarray] = {}

        def run_setting(name: str, setting: tuple, compiled: bool = False) -> None:
            label, precision, extra, passes_list = setting
            missing = [key for key in extra if key not in options]
            where = [(length, passes) for length in LENGTHS for passes in passes_list]
            if missing:
                for length, passes in where:
                    runner.cases_left -= 1
                    runner.cases.append(case_record(model=name, length=length, setting=label, precision=precision,
                                                    mc_samples=passes, status=f"not available in this version "
                                                    f"(ScoringOptions has no {missing[0]})"))
                return
            if compiled and args.dry_run:
                for length, passes in where:
                    runner.skip("skipped: --dry-run (a torch.compile warm-up takes minutes on CPU)", model=name,
                                length=length, setting=label, precision=precision, mc_samples=passes)
                return
            if compiled and budget.left() < sizes.compile_reserve_s:
                for length, passes in where:
                    runner.skip(f"skipped: time budget (a compile warm-up needs ~{sizes.compile_reserve_s:.0f} s, "
                                f"{budget.left():.0f} s left)", model=name, length=length, setting=label,
                                precision=precision, mc_samples=passes)
                return
            if runner.slice_s() < sizes.floor_s:  # not even worth loading the model
                for length, passes in where:
                    runner.skip(f"skipped: time budget ({budget.left():.0f} s of --budget-s {args.budget_s:g} left)",
                                model=name, length=length, setting=label, precision=precision, mc_samples=passes)
                return
            done = len(runner.cases)
            scorer = None
            try:  # one failure (out of memory, a compile error) costs its setting, not the other figures
                scorer = load_scorer(models[name]["folder"], device=device.type, precision=precision, mc_samples=1,
                                     seed=0, **extra)
                for length, passes in where:
                    key = (name, length)
                    if key not in lengths_of:
                        lengths_of[key] = token_lengths(scorer.tokenizer, "faithfulness", pairs[length],
                                                        scorer.max_length)
                    rows = None
                    if compiled:  # the eager case's rows, all of them in the warm-up: every shape compiled first
                        eager = find_case(runner.cases, name, length, main_precision, passes)
                        rows = min(eager["rows"] if eager and eager["rows"] else sizes.min_rows, sizes.compile_rows)
                    runner.measure(scorer, name, length, label, pairs[length], lengths_of[key], passes, rows=rows,
                                   warm_full=compiled)
            except Exception as error:  # recorded in the JSON and the table
                message = failure(error)
                recorded = {(c["length"], c["mc_samples"]) for c in runner.cases[done:]}
                for length, passes in where:
                    if (length, passes) not in recorded:
                        runner.skip(message, model=name, length=length, setting=label, precision=precision,
                                    mc_samples=passes)
            del scorer
            free_memory()

        for name in MODELS:
            for setting in settings:
                run_setting(name, setting)
        try:
            multi = multi_gpu(args, models[DEBERTA]["folder"], pairs["article"][:biggest // 2], tmp, budget, gpus)
        except Exception as error:  # recorded as the part's status
            multi = {"gpus": gpus, "status": failure(error), "identical": None}
        console.log(f"several GPUs: {multi['status']}")
        for name in MODELS:
            run_setting(name, compile_setting, compiled=True)

    cases = runner.cases
    skipped += sorted({f"{c['setting']}: {c['status']}" for c in cases if c["status"] != "ok"})
    report = {
        "script": "bench/gpu_check.py",
        "command": command,
        "dry_run": args.dry_run,
        "budget_s": args.budget_s,
        "elapsed_s": budget.elapsed(),
        "device": {"name": device_name, "type": device.type, "count": gpus,
                   "peak_bf16_tflops": peak_bf16_tflops(device_name) if cuda else None,
                   "capability": ".".join(map(str, torch.cuda.get_device_capability(0))) if cuda else None},
        "versions": versions(),
        "machine": machine("at the end"),
        "precisions": precisions,
        "mc_samples": ks[1],
        "scoring_options": {"tokenizer_workers": has_workers, "compile": has_compile},
        "models": {name: {k: v for k, v in info.items() if k != "folder"} for name, info in models.items()},
        "inputs": {length: {"grounding_tokens_target": list(LENGTHS[length]), "rows_available": len(pairs[length]),
                            "mean_tokens": float(lengths_of[(DEBERTA, length)].mean())
                            if (DEBERTA, length) in lengths_of else None}
                   for length in LENGTHS},
        "cases": cases,
        "agreement": agreements(runner, ks),
        "overlap": [comparison(cases, m, length, settings[-1][0], main_precision, "tokenizer_workers", has_workers)
                    for m in MODELS for length in LENGTHS],
        "compile": [comparison(cases, m, length, main_precision, compile_setting[0], "compile", has_compile)
                    for m in MODELS for length in LENGTHS],
        "multi_gpu": multi,
        "skipped": skipped,
    }
    report = json_ready(report)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(rich_table(report))
    block = markdown(report)
    print("\n--- Markdown for bench/README.md ---\n")
    print(block)
    console.log(f"wrote {args.json} in {report['elapsed_s']:.1f} s")
    if args.readme:
        if args.dry_run:
            console.log("[yellow]--readme ignored: a dry run checks the code, its figures are not GPU figures")
        else:
            replace_section(block, README)
            console.log(f"wrote the ## GPU check section of {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
