"""``learned-metrics score coherence|faithfulness``: thin wrappers around :func:`score_file`.

Works the same under ``accelerate launch -m learned_metrics.cli score ...``:
the input is sharded across the processes and process 0 writes one output,
identical to a single-process run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict

from learned_metrics.cli import help_formatter
from learned_metrics.cli.tables import console
from learned_metrics.scoring.distributed import Processes, current_processes
from learned_metrics.scoring.options import DEFAULT_CHUNK_SIZE, add_scoring_arguments, options_from_arguments
from learned_metrics.validate import int_option


def _add_common(parser: argparse.ArgumentParser, kind: str) -> None:
    parser.add_argument("--model", required=True, help="export folder, plain transformers classifier folder, or Hub id")
    parser.add_argument("--input", required=True, help="input .jsonl or .csv")
    parser.add_argument("--output", required=True,
                        help="output .jsonl or .csv (format by suffix; written to a temporary file renamed at the end; "
                        "an existing file is replaced, the input never)")
    add_scoring_arguments(parser, kind)
    parser.add_argument("--chunk-size", type=int_option(1), default=DEFAULT_CHUNK_SIZE,
                        help="rows read, sorted and scored at a time (bounds memory)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


COHERENCE_EPILOG = """examples:
  learned-metrics score coherence --model checkpoints/ccl_demo/latest/export \\
      --input examples/coherence_demo.jsonl --output scored.jsonl
  learned-metrics score coherence --model EXPORT --input summaries.csv --output scored.csv \\
      --text-field summary --device cuda --precision bf16

input: one JSON object per line (.jsonl) or a CSV with a header; every field is kept in the output."""

FAITHFULNESS_EPILOG = """examples:
  learned-metrics score faithfulness --model checkpoints/nli_demo/latest/export \\
      --input examples/faithfulness_demo.jsonl --output scored.jsonl --mc-samples 15 --mode e-c
  learned-metrics score faithfulness --model /models/roberta-large-mnli --input pairs.jsonl --output out.jsonl
  learned-metrics score faithfulness --model EXPORT --input frank.csv --output frank.scored.csv \\
      --premise-field grounding --hypothesis-field generated_text --premise-strategy chunk
  accelerate launch --num_processes 4 -m learned_metrics.cli score faithfulness ...   # same output file

A plain transformers NLI folder (no learned_metric.json) works: labels are found in id2label by name."""


def register(subparsers) -> None:
    score = subparsers.add_parser(
        "score",
        help="score a .jsonl/.csv file with a coherence or faithfulness metric",
        description="Score every row of a file; the output keeps every input row, in order, and adds score, "
        "prob_<label> columns and (with --mc-samples K > 1) score_std.",
    )
    kinds = score.add_subparsers(dest="kind", metavar="KIND", required=True)
    coherence = kinds.add_parser("coherence", help="P(coherent) of each text",
                                 description="Score texts with a coherence classifier (CCL). The card's sentence "
                                 "splitter and joiner are applied, as in training.",
                                 epilog=COHERENCE_EPILOG, formatter_class=help_formatter)
    _add_common(coherence, "coherence")
    coherence.add_argument("--text-field", default=None, help="field with the text (default: text)")
    coherence.add_argument("--sentences-field", default=None,
                           help="field with a list of sentences instead (default: sentences, if there is no text)")
    coherence.set_defaults(func=_run_coherence)

    faithfulness = kinds.add_parser("faithfulness", help="NLI faithfulness of generations to their groundings",
                                    description="Score (grounding, generation) pairs with an NLI model: "
                                    "e = P(entailment), e-c = P(entailment) - P(contradiction).",
                                    epilog=FAITHFULNESS_EPILOG, formatter_class=help_formatter)
    _add_common(faithfulness, "faithfulness")
    faithfulness.add_argument("--premise-field", default="grounding", help="field with the grounding (premise)")
    faithfulness.add_argument("--hypothesis-field", default="generation",
                              help="field with the generation (hypothesis); TRUE files use generated_text")
    faithfulness.set_defaults(func=_run_faithfulness)


def _run_coherence(args: argparse.Namespace) -> int:
    from learned_metrics.scoring.runner import InputFields

    fields = InputFields("coherence", text_field=args.text_field, sentences_field=args.sentences_field)
    return _run(args, fields)


def _run_faithfulness(args: argparse.Namespace) -> int:
    from learned_metrics.scoring.runner import InputFields

    fields = InputFields("faithfulness", premise_field=args.premise_field, hypothesis_field=args.hypothesis_field)
    return _run(args, fields)


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """The CLI reports its own progress and errors; transformers' bars and warnings are noise here.

    The previous settings come back afterwards, for callers of ``main()`` in the same process.
    """
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _share_cpu_threads(processes: Processes) -> None:
    """Several CPU processes on one machine: split the cores instead of oversubscribing them."""
    import torch

    if processes.world > 1 and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // processes.world))


def _run(args: argparse.Namespace, fields) -> int:
    from learned_metrics.scoring.runner import score_file
    from learned_metrics.scoring.scorer import load_scorer

    _check_paths(args)
    with _quiet_transformers():
        processes = current_processes(cpu=args.device == "cpu")
        _share_cpu_threads(processes)
        options = options_from_arguments(args, seed=args.seed + processes.rank)  # own dropout stream per process
        scorer = load_scorer(args.model, kind=fields.kind, **asdict(options))
        with _progress_bar(processes.is_main and not args.no_progress) as advance:
            summary = score_file(scorer, args.input, args.output, fields, args.chunk_size, processes, advance)
    if processes.is_main:
        _report(summary, args.output, scorer.max_length, fields.kind)
    return 0


def _check_paths(args: argparse.Namespace) -> None:
    """Input, output and model folder checked before the model is loaded: no error after minutes of work."""
    from learned_metrics.io import check_input_file, file_format
    from learned_metrics.outputs import check_outputs, file_output

    check_input_file(args.input)
    file_format(args.output)
    check_outputs([file_output(args.output)], inputs=[args.input, args.model])


def _report(summary, output: str, max_length: int, kind: str) -> None:
    if summary.replaced_columns:
        print(f"note: input column(s) {summary.replaced_columns} were replaced by the new scores", file=sys.stderr)
    if summary.truncated:
        how = "the end of the text was cut" if kind == "coherence" else (
            "the premise was truncated (--premise-strategy chunk scores whole groundings)"
            if "chunked_rows" not in summary.details else "a chunk or sentence longer than the limit was cut")
        print(f"warning: {summary.truncated:,} of {summary.rows:,} rows were longer than max_length={max_length} "
              f"tokens; {how}", file=sys.stderr)
    if summary.details.get("generation_truncated"):
        print(f"warning: in {summary.details['generation_truncated']:,} rows the generation alone exceeded "
              "max_length and was cut as well", file=sys.stderr)
    if "chunked_rows" in summary.details:
        print(f"chunked {summary.details['chunked_rows']:,} long rows into {summary.details['pairs']:,} "
              "scored pairs in total", file=sys.stderr)
    print(summary.line(output), file=sys.stderr)


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A rich progress display on stderr: rows done, rows/s, elapsed time."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class RowsPerSecond(ProgressColumn):
        def render(self, task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.1f} rows/s" if speed else "- rows/s", style="progress.data.speed")

    columns = (SpinnerColumn(), TextColumn("scoring"), TextColumn("{task.completed:,.0f} rows"), RowsPerSecond(),
               TimeElapsedColumn())
    with Progress(*columns, console=console(stderr=True), transient=True) as progress:
        task = progress.add_task("scoring", total=None)
        yield lambda n: progress.advance(task, n)

