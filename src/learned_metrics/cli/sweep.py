"""``learned-metrics sweep check FILE ...``: the options and the check live in :mod:`learned_metrics.sweeps`, so
its own script (``python -m learned_metrics.sweeps``) needs nothing from here."""

from __future__ import annotations

from typing import Any

from learned_metrics.cli import help_formatter
from learned_metrics.sweeps import CHECK_DESCRIPTION, CHECK_EPILOG, add_check_arguments


def register(subparsers: Any) -> None:
    sweep = subparsers.add_parser("sweep", help="check wandb sweep files offline",
                                  description="wandb sweeps over train.py (conf/sweep/).")
    commands = sweep.add_subparsers(dest="sweep_command", metavar="SUBCOMMAND", required=True)
    add_check_arguments(commands.add_parser("check", help="check sweep files and show the agent's commands",
                                            description=CHECK_DESCRIPTION, epilog=CHECK_EPILOG,
                                            formatter_class=help_formatter))
