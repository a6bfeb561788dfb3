"""``learned-metrics sweep check FILE ...`` (also ``python -m learned_metrics.sweeps FILE ...``).

Checks wandb sweep files offline (:func:`learned_metrics.sweeps.load_sweep`) and prints the commands the
agent would run for the first checked settings.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from typing import Any

from learned_metrics.cli import help_formatter, script_main

DESCRIPTION = ("Check wandb sweep files offline: method, metric, parameters, command macros, that every parameter "
               "is an override train.py composes, and that the sweep metric is the checkpoint monitor.")
EPILOG = "example:\n  learned-metrics sweep check conf/sweep/nli_seeds.yml conf/sweep/ccl_lr.yml"


def describe(sweep, shown: int = 3) -> list[str]:
    """A summary line and the commands the agent would start for the first checked settings."""
    from learned_metrics.sweeps import agent_command, representative_combinations

    size = sweep.grid_size()
    runs = f"{size} runs" if sweep.method == "grid" else f"run_cap {sweep.config.get('run_cap', 'unset')}"
    combos = representative_combinations(sweep)
    head = f"{sweep.path}: {sweep.method}, {sweep.metric} ({sweep.goal}), {runs}"
    lines = [f"{head}; {len(combos)} composition(s) checked; e.g."]
    lines += ["  " + shlex.join(agent_command(sweep, params)) for params in combos[:shown]]
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="wandb sweep files (conf/sweep/*.yml)")
    parser.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from learned_metrics.sweeps import load_sweep

    for path in args.files:
        print("\n".join(describe(load_sweep(path))))
    return 0


def register(subparsers: Any) -> None:
    sweep = subparsers.add_parser("sweep", help="check wandb sweep files offline",
                                  description="wandb sweeps over train.py (conf/sweep/).")
    commands = sweep.add_subparsers(dest="sweep_command", metavar="SUBCOMMAND", required=True)
    add_arguments(commands.add_parser("check", help="check sweep files and show the agent's commands",
                                      description=DESCRIPTION, epilog=EPILOG, formatter_class=help_formatter))


def sweep_check_script(argv: Sequence[str] | None = None) -> int:
    """``python -m learned_metrics.sweeps FILE ...``."""
    return script_main("sweep check", add_arguments, argv, description=DESCRIPTION, epilog=EPILOG)
