"""``learned-metrics meta-eval ...``: one module per subcommand (:data:`SUBCOMMANDS`), each with its ``SETTINGS``
class, its ``COMMAND`` declaration and ``run(args, settings)`` (docs/architecture.md: how to add one)."""

from __future__ import annotations

import importlib
from typing import Any

from learned_metrics.cli.meta_eval.common import add_command, missing_subcommand

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
        add_command(commands, importlib.import_module(f"{__name__}.{name}"))
