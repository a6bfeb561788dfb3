"""``learned-metrics``: one entry point with subcommands; thin, calls the package.

Each feature module exposes ``register(subparsers)`` that adds its
subcommand(s) and sets ``func`` on the parsed namespace. Every command runs
inside the error boundary (:func:`learned_metrics.boundary.run_command`):
user mistakes and OS errors are printed once, as a single line with a
non-zero exit code, and Ctrl-C/SIGTERM remove temporary files and exit 130/143.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from learned_metrics import __version__
from learned_metrics.boundary import EXIT_USER_ERROR, CommandParser, exit_on_stop_signals, run_command

# Modules that add subcommands; imported lazily so `--help` stays fast.
_COMMAND_MODULES = (
    "learned_metrics.scoring.cli",
    "learned_metrics.export",
    "learned_metrics.meta_eval.cli",
    "learned_metrics.runs",
)

def help_formatter(prog: str) -> argparse.HelpFormatter:
    """Subcommand help: keeps the line breaks of the examples in epilogs, with a wider option column."""
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="learned-metrics",
        description=(
            "Score texts with learned metrics (coherence, faithfulness), export trained checkpoints, "
            "and meta-evaluate any metric against human judgements. Training runs through "
            "`python train.py experiment=NAME`."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"learned-metrics {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in _COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the console script, not a call from Python code that owns its signal handling
        exit_on_stop_signals("learned-metrics")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USER_ERROR
    return run_command(f"learned-metrics {args.command}", lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
