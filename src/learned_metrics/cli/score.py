"""``learned-metrics score coherence|faithfulness``: thin wrappers around :func:`score_file`. Under ``accelerate
launch -m learned_metrics.cli score ...`` the input is sharded and process 0 writes one output, as one process would.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys

from learned_metrics.cli import help_formatter
from learned_metrics.io import shown_text
from learned_metrics.outputs import input_path
from learned_metrics.render.formats import format_ci, format_number
from learned_metrics.render.terminal import console, table
from learned_metrics.scoring import options as scoring_options  # looked up at each call: a test extends the class
from learned_metrics.scoring.distributed import current_processes, launched_world_size
from learned_metrics.scoring.options import FileRun, RaySettings, of_kind
from learned_metrics.validate import seconds_option


def _add_kind(kinds, kind: str, **about: str) -> argparse.ArgumentParser:
    """``score KIND``'s parser (``about``: its help, description, examples) with the options every kind takes."""
    parser = kinds.add_parser(kind, formatter_class=help_formatter, **about)
    parser.add_argument("--model", required=True, type=input_path,
                        help="export folder, plain transformers classifier folder, or Hub id")
    parser.add_argument("--input", required=True, type=input_path,
                        help="input .jsonl, .csv or .parquet; - reads standard input")
    parser.add_argument("--output", required=True,
                        help="output .jsonl, .csv or .parquet (format by suffix; written to a temporary file renamed "
                        "at the end; an existing file is replaced, the input never); - writes standard output. "
                        "What made it (model, weights hash, settings) goes into Parquet metadata, else into "
                        "OUTPUT.provenance.json beside it")
    scoring_options.ScoringOptions.add_arguments(parser, where=of_kind(kind))
    files = parser.add_argument_group("files, resuming and reporting")
    FileRun.add_arguments(files, where=of_kind(kind))
    files.add_argument("--summary", default=None, metavar="FILE",
                       help="also write the mean score (and per-system means with CIs) as JSON to FILE")
    files.add_argument("--progress-every", type=seconds_option, default=30.0, metavar="SECONDS",
                       help="when stderr is not a terminal (SLURM, nohup), a progress line every SECONDS")
    files.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    files.add_argument("--quiet", action="store_true", help="print nothing but errors")
    RaySettings.add_arguments(parser.add_argument_group("--engine ray: where its actors run (docs/scaling.md)"))
    parser.set_defaults(func=_run)
    return parser


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
        "score", help="score a .jsonl/.csv/.parquet file with a coherence or faithfulness metric",
        description="Score every row of a file; the output keeps every input row, in order, and adds score, "
        "prob_<label> columns and (with --mc-samples K > 1) score_std.")
    kinds = score.add_subparsers(dest="kind", metavar="KIND", required=True)
    coherence = _add_kind(kinds, "coherence", help="P(coherent) of each text", epilog=COHERENCE_EPILOG,
                          description="Score texts with a coherence classifier (CCL). The card's sentence splitter "
                          "and joiner are applied, as in training.")
    text = coherence.add_mutually_exclusive_group()  # both given: refused by the parser, before any loading
    text.add_argument("--text-field", default=None, help="field with the text (default: text)")
    text.add_argument("--sentences-field", default=None,
                      help="field with a list of sentences instead (default: sentences, if there is no text)")

    faithfulness = _add_kind(kinds, "faithfulness", help="NLI faithfulness of generations to their groundings",
                             description="Score (grounding, generation) pairs with an NLI model: e = P(entailment), "
                             "e-c = P(entailment) - P(contradiction).", epilog=FAITHFULNESS_EPILOG)
    faithfulness.add_argument("--premise-field", default=None,
                              help="field with the grounding (premise) (default: grounding; in a benchmark file the "
                              "layout's: doc for LLM-AggreFact and AggreFact, document for SummaC, grounding for TRUE)")
    faithfulness.add_argument("--hypothesis-field", default=None,
                              help="field with the generation (hypothesis) (default: generation; in a benchmark file "
                              "the layout's: claim for LLM-AggreFact and SummaC, summary for AggreFact, generated_text "
                              "for TRUE)")
    faithfulness.set_defaults(premise_strategy=None)  # not chosen: chunk in a benchmark layout (_run), else truncate


def _benchmark_layout(args: argparse.Namespace, fields) -> bool:
    """Whether the input's first row is in a benchmark layout (standard input and object storage are not read
    ahead; a local folder for --engine ray by its first data file)."""
    from learned_metrics.io import is_stdio, iter_rows
    from learned_metrics.scoring import ray_engine

    if is_stdio(args.input):
        return False
    if ray_engine.through_ray(args.input):
        first = ray_engine.first_row(args.input, args.input_format)
    else:
        with contextlib.closing(iter_rows(args.input, args.input_format)) as rows:
            first = next(rows)[1]
    return first is not None and dataclasses.replace(fields).settle(first) is not None


def _run(args: argparse.Namespace) -> int:
    # checked before the model stack (torch, transformers) is imported: bad arguments are refused at once
    run = FileRun.from_arguments(args)
    ray = RaySettings.from_arguments(args)
    ray.check(args.engine, args.device, launched_world_size())
    if args.engine == "ray":
        from learned_metrics.outputs import inputs_of
        from learned_metrics.scoring import ray_engine

        ray_engine.check_paths(args.input, args.output, args.summary, inputs_of(args), ray, args.input_format)
    else:
        _check_paths(args)
    from learned_metrics.progress import RowProgress, StartUp

    startup = StartUp()
    import torch

    from learned_metrics.io import count_rows, write_json
    from learned_metrics.safety import quiet_transformers
    from learned_metrics.scoring.runner import InputFields, score_file
    from learned_metrics.scoring.scorer import load_scorer

    startup.lap("imports")
    # the input-field flags of ``score KIND`` (the other kind's are absent from ``args``)
    fields = InputFields(args.kind, **{spec.name: getattr(args, spec.name, None) for spec in dataclasses.fields(
        InputFields) if spec.name != "kind"})
    with quiet_transformers(errors_only=True):  # the CLI reports its own progress and errors
        processes = current_processes(cpu=args.device == "cpu")
        if processes.world > 1 and "OMP_NUM_THREADS" not in os.environ:  # several processes: split the cores
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // processes.world))
        if fields.kind == "faithfulness" and args.premise_strategy is None:  # benchmark documents are long
            args.premise_strategy = "chunk" if _benchmark_layout(args, fields) else "truncate"
        options = scoring_options.ScoringOptions.from_arguments(args)
        if options.torch_masks and options.seed is not None:  # per-row masks are the same in every process;
            options = dataclasses.replace(options, seed=options.seed + processes.rank)  # torch's stream: one each
        if args.engine != "ray":
            scorer = load_scorer(args.model, kind=fields.kind, settings=options)
            startup.lap("model load")
        shown = processes.is_main and not args.quiet
        counted = shown and args.engine != "ray"  # the Ray engine counts in its checking pass (folders too)
        progress = RowProgress(count_rows(args.input, args.input_format) if counted else None,
                               enabled=shown and not args.no_progress, every_seconds=args.progress_every)
        if shown:
            startup.lap("counting rows")
        say = (lambda line: print(shown_text(line), file=sys.stderr, flush=True)) if shown else None  # names: text
        if args.engine == "ray":  # the actors load the model; the summary's record says what they resolved
            summary = ray_engine.score_file(args.model, args.input, args.output, fields, options, run, ray,
                                            progress, say, startup.lap)
            scorer = argparse.Namespace(max_length=summary.provenance["max_length"], tokenizer_workers=0)
        else:
            summary = score_file(scorer, args.input, args.output, fields, run, processes, progress, say)
    if processes.is_main:
        if args.summary:
            write_json(args.summary, summary.scores.to_json())
        if not args.quiet:
            _report(summary, args.output, scorer.max_length, fields.kind)
            print(startup.line(", not counted in the rates above"), file=sys.stderr)
            timings, workers = summary.timings, scorer.tokenizer_workers
            if timings.wall > 0 and timings.wait >= 0.05 * timings.wall:  # a noticeable share waiting for tokens
                how = (f"{workers} tokenizer thread{'s' if workers != 1 else ''}" if workers
                       else "--tokenizer-workers 0: tokenizing before each forward")
                print(f"note: the model waited {timings.wait / timings.wall:.0%} of the scoring time for tokenized "
                      f"rows ({how}); more --tokenizer-workers may help when cores are free", file=sys.stderr)
    return 0


def _check_paths(args: argparse.Namespace) -> None:
    """Input, outputs and model folder checked before the model is loaded: no error after minutes of work."""
    from learned_metrics import provenance
    from learned_metrics.io import check_input_file, file_format, is_stdio
    from learned_metrics.outputs import check_outputs, file_output, inputs_of, json_file_output

    check_input_file(args.input, args.input_format)
    outputs = [] if is_stdio(args.output) else [
        file_output(args.output), *provenance.outputs(args.output, file_format(args.output, args.output_format))]
    if args.summary:
        outputs.append(json_file_output(args.summary, "--summary"))
    check_outputs(outputs, inputs=[path for path in inputs_of(args) if not is_stdio(path)])


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
    if summary.details.get("chunked_rows"):  # only when a row was chunked: "chunked 0 long rows" says nothing
        print(f"chunked {summary.details['chunked_rows']:,} long rows into {summary.details['pairs']:,} "
              "scored pairs in total", file=sys.stderr)
    print(shown_text(summary.line("standard output" if output == "-" else output)), file=sys.stderr)
    overall, system = summary.scores.overall, summary.scores.system_field
    print(f"mean score {format_number(overall.mean, 4)} (95% CI {format_ci(overall.ci, 4)}) over {overall.rows:,} rows",
          file=sys.stderr)
    if system:  # the per-system table
        rows = [(s.name, f"{s.rows:,}", format_number(s.mean, 4), format_ci(s.ci, 4)) for s in summary.scores.systems]
        columns = (system, "rows", "mean", "95% CI")
        console(stderr=True).print(table(f"mean score per {system} (bootstrap 95% CI)", columns, rows, left=(system,)))
