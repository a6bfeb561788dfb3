"""``learned-metrics meta-eval system-level``: system-level correlation as it is used in practice."""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import SystemLevelCommand, SystemLevelSettings

SETTINGS = SystemLevelCommand

EPILOG = """\
Why (Deutsch, Dror & Roth 2022): a metric scores the whole test set, not only the ~100 judged documents, and the
systems compared in practice are close. --metric-full gives the metric's system scores over every test document
(tau_sys_full; humans stay on the judged subset). Each --delta-band LO HI keeps the system pairs whose metric
system scores differ by LO <= |delta| < HI (metric units, edges compared with a 1e-12 tolerance; from --metric-full
when given; HI may be inf) and reports their count, the agreement (share of pairs with a strict human order the
metric orders the same way) and tau, Kendall's tau-b over those pairs: (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)),
P/Q the concordant/discordant pairs, T_x/T_y the pairs tied in the metric only/in the humans only. CIs: bootstrap
over judged documents, full-set documents and systems (bands: the pairs stay fixed, documents are redrawn).

example:
  learned-metrics meta-eval system-level --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --metric-full examples/meta_eval/metric_good_full.jsonl \\
      --delta-band 0 0.1 --delta-band 0.1 0.3 --delta-band 0.3 inf
"""

COMMAND = common.Command(
    "system-level", help="realistic system-level correlation: metric over the full test set, pairs of close "
    "systems", description="System-level correlation as it is used in practice: the metric's system scores "
    "over the whole test set, and agreement with the humans on pairs of systems whose metric scores are close.",
    epilog=EPILOG, inputs=(*common.grid_inputs(), common.input_flag(
        "--metric-full", "the metric's scores on every test document (same keys and --metric-field)", required=False)),
    outputs=dict(json="tau_sys, tau_sys_full and the bands as JSON, with the settings",
                 markdown="the tables as Markdown", latex="the tables as LaTeX (booktabs)", csv="the bands as CSV"))


def run(args: argparse.Namespace, settings: SystemLevelCommand) -> int:
    from learned_metrics.meta_eval.data import KeyFields, read_metric_scores
    from learned_metrics.meta_eval.system_level import full_set_grid, realistic_system_level

    grid = common.load_grid(args, settings)
    notes = list(grid.notes)
    full = None
    if args.metric_full:
        cells = read_metric_scores(args.metric_full, settings.metric_field,
                                   KeyFields(settings.doc_field, settings.system_field), on_missing=settings.on_missing)
        full, full_notes = full_set_grid(cells, grid.systems)
        notes += cells.notes + full_notes
    report = realistic_system_level(grid.human, next(iter(grid.metrics.values())), full,
                                    bands=settings.delta_band or (), settings=settings.narrow(SystemLevelSettings))
    return common.finish(args, report, notes=notes, csv={"csv": "bands"} if report.bands else None)
