"""``learned-metrics meta-eval benchmark``: faithfulness benchmarks (LLM-AggreFact, AggreFact, SummaC, TRUE) judged
under a named threshold protocol: BAcc, ROC AUC, unsupported P/R/F1 per dataset and their mean."""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import BenchmarkCommand, BenchmarkSettings

SETTINGS = BenchmarkCommand

EPILOG = """\
threshold protocols (--threshold-protocol, required; the output names the one used):
  fixed        one threshold for every dataset, --threshold T (0.5 unless given): MiniCheck and
               LLM-AggreFact (on a probability); TRUE's library reports accuracy at 0.5 next to its AUC
  tune-on-val  tuned on --tune-split (val or dev), applied to --split (test): AggreFact, AlignScore
  same-split   tuned on the very rows it is judged on: SummaC's benchmark code (its issue 5); the
               output marks it OPTIMISTIC
tuning grids (--grid): percentile = the score percentiles 0, 0.2, ..., 99.8 of the tuning rows, best
  BAcc, ties to the later threshold (SummaC, AggreFact); fixed-0.001 = 0, 0.001, ..., 1, ties to the
  lowest (AlignScore). Every protocol predicts "supported" when score > threshold.

layouts (--layout auto recognizes them by their columns; score the file first with `learned-metrics score
faithfulness --input FILE ...`, which keeps every column):
  llm-aggrefact  dataset, doc, claim, label (1 = supported); split from the file name (dev/test)
  aggrefact      dataset, origin, id, doc, summary, model_name, label, cut (+ <Metric>_score columns,
                 --published-scores); dataset = origin (AggreFact-CNN/XSum), --sota for the SOTA subset
  summac         document, claim, label, dataset (+ cut, or one file per cut named ..._val/..._test)
  true           grounding, generated_text, label; one file per dataset (its name), no splits

examples:
  learned-metrics meta-eval benchmark --metric examples/benchmarks/scored_overlap/llm_aggrefact \\
      --threshold-protocol fixed
  learned-metrics meta-eval benchmark --metric examples/benchmarks/scored_overlap/summac \\
      --threshold-protocol tune-on-val --grid fixed-0.001 --markdown summac.md
  learned-metrics meta-eval benchmark --metric examples/benchmarks/aggre_fact_final.csv --published-scores \\
      --sota --threshold-protocol tune-on-val --latex aggrefact.tex

See docs/benchmarks.md for the layouts, where the files come from and a full run."""

COMMAND = common.Command(
    "benchmark", epilog=EPILOG,
    help="faithfulness benchmarks (LLM-AggreFact, AggreFact, SummaC, TRUE) under a named threshold protocol",
    description="Balanced accuracy, ROC AUC and the unsupported class's precision/recall/F1 per dataset and as "
    "their unweighted mean, at a threshold set by the protocol you name (fixed, tune-on-val, same-split), with "
    "bootstrap CIs; several metrics give report's table (bold best, significance markers from paired tests). "
    "The protocol, grid, split and the threshold of every dataset are printed and saved in the JSON.",
    inputs=(common.input_flag("--metric", "a scored benchmark file, or a folder of them (one per split or per "
                              "dataset); once per metric, all scoring the same rows", metavar="PATH", many=True),),
    outputs=dict(json="every number, the protocol, the thresholds, the tests and the settings as JSON",
                 markdown="the tables as Markdown", latex="the tables as LaTeX (booktabs)",
                 csv="every statistic as CSV, one row per metric and dataset"))


def run(args: argparse.Namespace, settings: BenchmarkCommand) -> int:
    from learned_metrics.meta_eval.benchmark import evaluate_benchmark
    from learned_metrics.meta_eval.benchmarks_io import read_benchmark

    common.require(settings.threshold_protocol is not None,
                   "meta-eval benchmark: give --threshold-protocol fixed, tune-on-val or same-split")
    rows = read_benchmark(args.metric, common.metric_names(settings), score_fields=common.score_fields(settings),
                          group_field=settings.group_field, layout=settings.layout, on_missing=settings.on_missing,
                          sota=settings.sota, published_scores=settings.published_scores)
    report = evaluate_benchmark(rows, settings=settings.narrow(BenchmarkSettings))
    named = [] if common.metric_names(settings) else [
        "metric names: " + ", ".join(f"{name} ({path})" for name, path in zip(rows.scores, args.metric, strict=False))
        + "; --names A,B,... sets them"]
    return common.finish(args, report, notes=[*named, *report.notes], warnings=report.warnings)
