"""``learned-metrics meta-eval compare``: is metric A significantly better than B?"""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import CompareCommand

SETTINGS = CompareCommand

DESCRIPTION = """\
For every ordered pair of metrics (A, B) and statistic: p-values for 'A correlates better with the humans than B'
(or 'A and B differ' with --alternative two-sided) and a CI of the difference.
  permutation test   both metrics standardized, delta = r(A,H) - r(B,H), scores swapped between A and B per
                     cell/system/document (--swap), p = (1 + #{delta* >= delta}) / (1 + k), k = --permutations
  paired bootstrap   the same documents/systems redrawn for A and B (--resample), p = (1 + #{delta* - delta >=
                     delta}) / (1 + k), k = --resamples (Berg-Kirkpatrick et al. 2012; Deutsch et al. 2021)
  Williams' test     the parametric alternative (n = items of one correlation; not defined for acc_pair)"""

COMMAND = common.Command(
    "compare", help="is metric A significantly better than B? (permutation, paired bootstrap and Williams tests)",
    description=DESCRIPTION, inputs=common.grid_inputs(many_metrics=True),
    epilog="example:\n  learned-metrics meta-eval compare --human examples/meta_eval/human.jsonl \\\n"
    "      --metric examples/meta_eval/metric_good.jsonl --metric examples/meta_eval/metric_weak.csv",
    outputs=dict(json="{statistic: [{metric_a, metric_b, p_permutation, ...}]} and the settings",
                 markdown="the tests as Markdown", latex="the tests as LaTeX (booktabs)", csv="the tests as CSV"))


def run(args: argparse.Namespace, settings: CompareCommand) -> int:
    from learned_metrics.meta_eval.significance import compare

    common.require(len(args.metric) >= 2, "compare needs at least two --metric files")
    grid = common.load_grid(args, settings)
    return common.finish(args, compare(grid.human, grid.metrics, settings=settings), notes=grid.notes)
