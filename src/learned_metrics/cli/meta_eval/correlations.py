"""``learned-metrics meta-eval correlations``: one metric against the humans at five levels, with CIs."""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import CorrelationsCommand

SETTINGS = CorrelationsCommand

EPILOG = """\
statistics (Kendall tau-b unless --coefficient says otherwise; headed r_ for Pearson, rho_ for Spearman):
  tau_sys    per-system mean scores, correlated across systems
  tau_sum    all summaries pooled ("global")
  tau_pair   per document across its systems, mean over documents
             (what some papers call "summary-level")
  acc_pair   share of same-document summary pairs with a strict human order
             that the metric orders the same way (a metric tie counts wrong)
  tau_intra  per system across its documents, mean over systems
A per-group correlation that is undefined (constant scores) is left out of the mean and counted under "skipped".

input files: .jsonl, .csv or .parquet, one row per summary keyed by --doc-field and --system-field. The human file
may hold one row per annotator (averaged per summary). --human-format summeval reads the SummEval release file
model_annotations.aligned.paired.jsonl (id, model_id, expert_annotations).

example:
  learned-metrics meta-eval correlations --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --json out/correlations.json
"""

COMMAND = common.Command(
    "correlations", help="tau_sys, tau_sum, tau_pair, acc_pair, tau_intra with bootstrap 95%% CIs",
    description="Correlation of a metric with human judgements at five levels, with percentile bootstrap "
    "95% confidence intervals.", epilog=EPILOG, inputs=common.grid_inputs(),
    outputs=dict(json="{statistic: {value, ci, n, skipped, ...}} and the settings here",
                 markdown="the table as Markdown", latex="the table as LaTeX (booktabs)", csv="the table as CSV"))


def run(args: argparse.Namespace, settings: CorrelationsCommand) -> int:
    from learned_metrics.meta_eval.correlations import correlations

    grid = common.load_grid(args, settings)
    report = correlations(grid.human, next(iter(grid.metrics.values())), settings=settings)
    return common.finish(args, report, notes=grid.notes)
