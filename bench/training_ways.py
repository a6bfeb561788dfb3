"""The three ways of training one epoch that bench_training.py compares; each runs in its own process.

    python bench/training_ways.py plain  --set DIR --model DIR --rows N --lr LR --max-length L
    python bench/training_ways.py paper  --set DIR --model DIR --rows N --lr LR
    (the project's way is `python train.py experiment=ccl_demo ...` with the probe below as a callback)

Each way prints one line ``RESULT {json}``: rows trained, seconds from the first batch to the last
optimizer step, and the resident memory at every tenth of the epoch (from /proc/self/status).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class EpochTrace:
    """Rows, seconds, and the highest resident memory seen in each tenth of one epoch of ``total`` batches."""

    def __init__(self, total_batches: int):
        self.total = total_batches
        self.rows = 0
        self.batches = 0
        self.rss = [0.0] * 10
        self.start = time.perf_counter()
        self.end = self.start

    def batch_done(self, rows: int) -> None:
        self.rows += rows
        tenth = min(9, self.batches * 10 // max(self.total, 1))
        self.batches += 1
        self.end = time.perf_counter()
        self.rss[tenth] = max(self.rss[tenth], rss_mib())

    def report(self, way: str) -> None:
        seconds = self.end - self.start
        rss = [r for r in self.rss if r]
        print("RESULT " + json.dumps({"way": way, "rows": self.rows, "seconds": seconds, "rss": rss}), flush=True)


try:  # the project's way: a Lightning callback added with +callbacks.probe._target_=training_ways.LightningProbe
    from lightning.pytorch import Callback

    class LightningProbe(Callback):
        def on_train_epoch_start(self, trainer, pl_module) -> None:
            self.trace = EpochTrace(trainer.num_training_batches)

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            self.trace.batch_done(int(batch["labels"].shape[0]))

        def on_train_epoch_end(self, trainer, pl_module) -> None:
            self.trace.report("project")
except ImportError:  # pragma: no cover
    pass


def _model_and_rows(args: argparse.Namespace):
    """Seeded, as every way starts: the tokenizer, a 2-class head on the model, the first ``rows`` training rows."""
    import datasets
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(42)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2, ignore_mismatched_sizes=True)
    ds = datasets.load_from_disk(args.set)["train"]
    return tokenizer, model, ds.select(range(min(args.rows, len(ds))))


def plain(args: argparse.Namespace) -> None:
    """A plain PyTorch loop: AdamW, linear warm-up, clipping, the project's length-grouped batches."""
    import torch
    from torch.utils.data import DataLoader
    from transformers import DataCollatorWithPadding, get_linear_schedule_with_warmup

    from learned_metrics.train.sampler import LengthGroupedBatchSampler

    tokenizer, model, ds = _model_and_rows(args)
    ds = ds.map(lambda b: {**tokenizer(b["text"], truncation=True, max_length=args.max_length), "labels": b["label"]},
                batched=True, remove_columns=ds.column_names)
    lengths = [len(ids) for ids in ds["input_ids"]]
    loader = DataLoader(ds, batch_sampler=LengthGroupedBatchSampler(lengths, args.batch_size, shuffle=True, seed=42),
                        collate_fn=DataCollatorWithPadding(tokenizer))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * len(loader)), len(loader))
    model.train()
    trace = EpochTrace(len(loader))
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        trace.batch_done(int(batch["labels"].shape[0]))
    trace.report("plain")


def paper(args: argparse.Namespace) -> None:
    """The original scripts' way: HF Trainer, every text padded to 512 tokens."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    tokenizer, model, ds = _model_and_rows(args)
    ds = ds.map(lambda b: {**tokenizer(b["text"], truncation=True, padding="max_length", max_length=512),
                           "labels": b["label"]}, batched=True, remove_columns=ds.column_names)

    class Probe(TrainerCallback):
        def on_train_begin(self, targs, state, control, **kwargs):
            self.trace = EpochTrace(state.max_steps)

        def on_step_end(self, targs, state, control, **kwargs):
            self.trace.batch_done(args.batch_size)

        def on_train_end(self, targs, state, control, **kwargs):
            self.trace.rows = min(self.trace.rows, len(ds))
            self.trace.report("paper")

    training = TrainingArguments(output_dir=str(Path(args.workdir) / "hf"), per_device_train_batch_size=args.batch_size,
                                 num_train_epochs=1, learning_rate=args.lr, weight_decay=0.01, warmup_steps=0.1,
                                 max_grad_norm=1.0, save_strategy="no", eval_strategy="no", report_to=[],
                                 logging_strategy="no", disable_tqdm=True, use_cpu=True, seed=42)
    Trainer(model=model, args=training, train_dataset=ds, callbacks=[Probe()]).train()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("way", choices=("plain", "paper"))
    parser.add_argument("--set", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--workdir", default="/tmp")
    args = parser.parse_args()
    {"plain": plain, "paper": paper}[args.way](args)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
