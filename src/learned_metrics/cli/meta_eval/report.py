"""``learned-metrics meta-eval report``: the paper table, many metrics x statistics (or corpora in AUC mode)."""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import AucReportSettings, ReportCommand, ReportSettings

SETTINGS = ReportCommand

EPILOG = f"""example (the coherence paper's Table 4.3 layout: five metrics x five statistics):
  learned-metrics meta-eval report --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --metric examples/meta_eval/metric_weak.csv \\
      --names good,weak --latex table.tex --markdown table.md

A cell shows the value, its 95% bootstrap CI and, as superscript numbers, the metrics (by row number)
this one is significantly better than (one-sided permutation test as in compare, p < --alpha).

example (TRUE-style AUC table, one folder of scored TRUE files per metric):
  learned-metrics meta-eval report --auc --format true --metric examples/meta_eval/true_scored/nli_aug \\
      --metric examples/meta_eval/true_scored/nli_base --baseline nli_base --on-missing drop --latex true_table.tex

{common.TRUE_FORMAT_HELP}"""

COMMAND = common.Command(
    "report", help="the paper table: many metrics x statistics, CIs, best in bold, significance markers",
    description="One table for a paper: rows are metrics, columns the statistics, each cell the value with "
    "its bootstrap CI; the best per column in bold; per cell the metrics it beats significantly. Written to "
    "the terminal and, if asked, as Markdown, LaTeX (booktabs), CSV and JSON.", epilog=EPILOG,
    inputs=(*common.grid_inputs(many_metrics=True, human_required=False),
            common.flag("--auc", action="store_true", group="AUC mode (TRUE-style: corpora as columns, no human file)",
                        help="rows = metrics, columns = corpora + their unweighted mean, ROC AUC against "
                        "--label-field; a --metric may be a folder of scored corpora (the corpus is the file name)")),
    outputs=dict(markdown="the table as Markdown", latex="the table as LaTeX (booktabs)", csv="the table as CSV",
                 json="the table, the tests and the settings as JSON"))


def run(args: argparse.Namespace, settings: ReportCommand) -> int:
    from learned_metrics.meta_eval.report import auc_report, correlation_report

    if not args.auc:
        common.require(settings.format == "rows",
                       f"--format {settings.format} reads labelled score files for the AUC table; add --auc")
        common.require(args.human is not None, "give --human FILE (or --auc for a table of ROC AUC per corpus)")
        grid = common.load_grid(args, settings)
        table = correlation_report(grid.human, grid.metrics, settings=settings.narrow(ReportSettings))
        return common.finish(args, table, notes=grid.notes)
    from learned_metrics.meta_eval.data import read_scored_corpora

    common.require(args.human is None, "--auc reads labelled score files; --human is for the correlation table")
    defaults = ReportCommand()
    common.require(settings.test == defaults.test and settings.ci_method == defaults.ci_method,
                   "the AUC table uses bootstrap CIs and approximate randomization; --test and --ci-method are for the "
                   "correlation table")
    scored = read_scored_corpora(args.metric, common.metric_names(settings), score_fields=common.score_fields(settings),
                                 label_field=settings.label_field, group_field=settings.group_field,
                                 fmt=settings.format, on_missing=settings.on_missing, doc_field=settings.doc_field)
    table, tests = auc_report(scored, baseline=settings.baseline, settings=settings.narrow(AucReportSettings))
    return common.finish(args, table, payload={**table.to_json(), "tests": [t.to_json() for t in tests]},
                         notes=next(iter(scored.values())).notes)
