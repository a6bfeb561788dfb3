"""``learned-metrics meta-eval auc``: ROC AUC per corpus and their unweighted mean (faithfulness, TRUE-style)."""

from __future__ import annotations

import argparse
from pathlib import Path

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import AucCommand, AucSettings

SETTINGS = AucCommand

EPILOG = f"""\
examples:
  learned-metrics meta-eval auc --input examples/meta_eval/faithfulness.jsonl --group-field corpus \\
      --system-field system --plot out/auc.png --roc-plot out/roc.png
  learned-metrics meta-eval auc --format true --input examples/meta_eval/true_scored/nli_aug --on-missing drop

{common.TRUE_FORMAT_HELP}"""

COMMAND = common.Command(
    "auc", help="ROC AUC per corpus and their unweighted mean, with bootstrap CIs (faithfulness)",
    description="ROC AUC of scores against binary labels (1 = faithful/consistent) per group, their unweighted "
    "mean (TRUE-style), bootstrap CIs (rows redrawn within each group), and the intra-system AUC when a system "
    "field is given (systems whose rows have one class only are skipped and counted).", epilog=EPILOG,
    inputs=(common.input_flag("--input", "scored rows (.jsonl/.csv/.parquet), or a folder with one such file per "
                              "corpus", metavar="PATH"),
            common.flag("--system-field", metavar="F", help="system field: adds intra-system AUC")),
    outputs=dict(json="per-group and mean AUCs with CIs, and the settings", markdown="the table as Markdown",
                 latex="the table as LaTeX (booktabs)", csv="the table as CSV",
                 plot="score densities by label, one panel per group titled with its AUC and class counts "
                 "(png/pdf/svg)",
                 roc_plot="ROC curves, one per group, AUC in the legend beside the axes (png/pdf/svg)"))


def run(args: argparse.Namespace, settings: AucCommand) -> int:
    from learned_metrics.meta_eval.auc import auc_by_group
    from learned_metrics.meta_eval.data import read_scored_corpora
    from learned_metrics.provenance import read_provenance
    from learned_metrics.render.figures import plot_roc_curves, plot_score_histograms, score_axis_label

    rows = next(iter(read_scored_corpora([args.input], score_fields=[settings.score_field], fmt=settings.format,
                                         label_field=settings.label_field, group_field=settings.group_field,
                                         system_field=args.system_field, on_missing=settings.on_missing).values()))
    report = auc_by_group(rows.scores, rows.labels, rows.groups, rows.systems, settings=settings.narrow(AucSettings))
    aucs = {g.group: g.auc.value for g in report.groups}
    label = score_axis_label(read_provenance(args.input) if Path(args.input).is_file() else None, settings.score_field)
    plots = {"plot": lambda path: plot_score_histograms(rows.scores, rows.labels, rows.groups, path, aucs,
                                                        score_label=label),
             "roc_plot": lambda path: plot_roc_curves(rows.scores, rows.labels, rows.groups, path, aucs)}
    return common.finish(args, report, notes=rows.notes, plots=plots)
