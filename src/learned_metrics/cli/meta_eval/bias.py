"""``learned-metrics meta-eval bias-matrix``: for which system pairs does the metric get the human order wrong?"""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import BiasMatrixCommand

SETTINGS = BiasMatrixCommand

COMMAND = common.Command(
    "bias-matrix", help="tau+/tau- per pair of systems: where does the metric get the human order wrong?",
    description="Systems ordered by mean human score (best first). Cell (row a, column b): over same-document "
    "pairs where the humans prefer a to b, 2*acc-1 with acc the share the metric orders the same way (a tie "
    "counts wrong). Upper triangle: tau+ (humans agree with the overall order), lower: tau-. Empty when there "
    "are no such pairs.", inputs=common.grid_inputs(),
    outputs=dict(plot="a circle plot: area = pair count, colour = tau (png/pdf/svg)",
                 json="systems, mean human scores, tau and pair-count matrices, and the settings",
                 markdown="the matrix as Markdown", latex="the matrix as LaTeX (booktabs)", csv="the matrix as CSV"))


def run(args: argparse.Namespace, settings: BiasMatrixCommand) -> int:
    from learned_metrics.meta_eval.bias import bias_matrix
    from learned_metrics.render.figures import plot_bias_matrix

    grid = common.load_grid(args, settings)
    matrix = bias_matrix(grid.human, next(iter(grid.metrics.values())), grid.systems)
    return common.finish(args, matrix, notes=grid.notes, plots={"plot": lambda path: plot_bias_matrix(matrix, path)},
                  width=max(80, 14 + 8 * (len(matrix.systems) + 1)))
