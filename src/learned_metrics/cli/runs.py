"""``learned-metrics runs list [DIR]``: the table of training runs (:mod:`learned_metrics.train.run_folders`)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from learned_metrics.outputs import input_path
from learned_metrics.render.terminal import console, literal
from learned_metrics.train.run_folders import RunRow


def render_table(rows: list[RunRow], title: str):
    """A rich table, names drawn literally; ``(csv)`` marks a best value read from the log of a run that has not
    exported."""
    from rich.table import Table

    table = Table(title=literal(title), show_header=True)
    for name, justify in (("experiment", "left"), ("run folder", "left"), ("date", "left"), ("commit", "left"),
                          ("seed", "right"), ("metric", "left"), ("best", "right"), ("best step", "right"),
                          ("export", "center")):
        table.add_column(name, justify=justify, overflow="fold", no_wrap=name != "run folder")
    for row in rows:
        short_run = row.run.removeprefix(f"{row.experiment}/")  # the previous column names the experiment folder
        metric = f"{row.metric} {({'max': '↑', 'min': '↓'}).get(row.mode, '')}".strip() if row.metric else "—"
        best = "—" if row.best is None else f"{row.best:.4f}" + ("" if row.best_source == "export" else " (csv)")
        table.add_row(*map(literal, (row.experiment, short_run, row.date or "—", (row.git_commit or "—")[:7],
                                     "—" if row.seed is None else row.seed, metric, best,
                                     "—" if row.best_step is None else row.best_step, "yes" if row.export else "no")))
    return table


def run_list(args: argparse.Namespace) -> int:
    from learned_metrics.io import write_json
    from learned_metrics.outputs import check_outputs, file_output, inputs_of
    from learned_metrics.train.run_folders import list_runs

    if args.json:
        check_outputs([file_output(args.json, "--json")], inputs=inputs_of(args))
    rows = list_runs(args.dir)
    console().print(render_table(rows, f"{len(rows)} run(s) under {args.dir}"))
    if args.json:
        write_json(args.json, [asdict(row) for row in rows])
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("runs", help="list training runs and their best validation metric",
                                   description="Inspect training run folders (checkpoints/<experiment>/<run>/).")
    commands = parser.add_subparsers(dest="runs_command", metavar="SUBCOMMAND", required=True)
    listing = commands.add_parser(
        "list", help="table of runs: experiment, folder, date, commit, monitored metric, best value, export",
        description="List every run folder under DIR (single runs, Hydra multiruns, wandb sweep runs) with its "
        "monitored metric and the best checkpoint's value from the export card (or, for a run that has not "
        "exported yet, the best value in csv/metrics.csv, marked (csv)).")
    listing.add_argument("dir", nargs="?", default=input_path("checkpoints"), type=input_path, metavar="DIR",
                         help="default: checkpoints/")
    listing.add_argument("--json", metavar="OUT", help="also write the rows as a JSON list")
    listing.set_defaults(func=run_list)
