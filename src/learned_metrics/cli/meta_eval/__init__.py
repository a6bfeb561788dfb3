"""``learned-metrics meta-eval ...``: one module per subcommand, each with ``register(commands)``.

| module | subcommand |
|---|---|
| :mod:`.correlations` | ``correlations`` |
| :mod:`.compare` | ``compare`` |
| :mod:`.report` | ``report`` |
| :mod:`.system_level` | ``system-level`` |
| :mod:`.systems` | ``systems`` |
| :mod:`.confounders` | ``confounders`` |
| :mod:`.bias` | ``bias-matrix`` |
| :mod:`.auc` | ``auc`` |
| :mod:`.shuffle` | ``shuffle-test`` |
| :mod:`.benchmark` | ``benchmark`` |

Each command declares its options from :mod:`learned_metrics.meta_eval.options`, its inputs and outputs through
:mod:`.common`, calls one analysis of :mod:`learned_metrics.meta_eval` and hands the result (which says
``tables()``) to :func:`.common.finish`: notes, terminal tables with captions, then ``--json`` (with the settings
block), ``--markdown``, ``--latex``, ``--csv`` and the plots as one staged set.
"""

from __future__ import annotations

import importlib
from typing import Any

from learned_metrics.cli.meta_eval.common import missing_subcommand

SUBCOMMANDS = ("correlations", "compare", "bias", "auc", "shuffle", "report", "system_level", "confounders",
               "systems", "benchmark")


def register(subparsers: Any) -> None:
    """Add ``meta-eval`` and its subcommands to the main parser."""
    meta = subparsers.add_parser(
        "meta-eval", help="judge metric scores against human judgements (correlations, tests, bias matrix, AUC, "
        "shuffle test, paper tables, confounders, systems, faithfulness benchmarks)",
        description="Meta-evaluation: how well do a metric's scores agree with human judgements?")
    commands = meta.add_subparsers(dest="meta_command", metavar="COMMAND")
    meta.set_defaults(func=lambda args: missing_subcommand(meta))
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(commands)
