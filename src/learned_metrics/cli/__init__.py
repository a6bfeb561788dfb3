"""``learned-metrics``: one entry point, one module per command family (:data:`COMMAND_MODULES`), each with
``register(subparsers)``. Command modules only parse, call the package and render; the package never imports them.
Every command runs inside the error boundary (:func:`learned_metrics.boundary.run_command`).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from collections.abc import Sequence

from learned_metrics import __version__
from learned_metrics.boundary import EXIT_USER_ERROR, CommandParser, exit_on_stop_signals, run_command

# Imported when the parser is built; each imports torch and friends only inside its commands.
COMMAND_MODULES = ("score", "meta_eval", "export", "runs", "prep", "sweep")


# subcommand help: keeps the line breaks of the examples in epilogs, with a wider option column
help_formatter = functools.partial(argparse.RawDescriptionHelpFormatter, max_help_position=32)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The whole parser, or only the command family ``argv`` names first (``score``, ``meta-eval``, ...): a command
    needs no other family's flags, and building all of them costs more than the rest of start-up's parsing."""
    named = {name.replace("_", "-"): name for name in COMMAND_MODULES}.get(argv[0]) if argv else None
    parser = CommandParser(prog="learned-metrics", formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Score texts with learned metrics (coherence, faithfulness), export trained "
                           "checkpoints, build training sets, and meta-evaluate any metric against human "
                           "judgements. Training runs through `python train.py experiment=NAME`.")
    parser.add_argument("--version", action="version", version=f"learned-metrics {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [named] if named else COMMAND_MODULES:
        importlib.import_module(f"learned_metrics.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the console script, not a call from Python code that owns its signal handling
        exit_on_stop_signals("learned-metrics")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    line = list(sys.argv[1:] if argv is None else argv)  # the command line: outputs say how they were made
    parser = build_parser(line)
    args = parser.parse_args(line)
    args.argv = line
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USER_ERROR
    return run_command(f"learned-metrics {args.command}", lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
