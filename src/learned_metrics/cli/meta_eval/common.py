"""What every ``meta-eval`` command shares: flags from its settings class, inputs declared by type, outputs checked
before any work and written as one staged set with the JSON's ``settings`` block. Nothing here knows an analysis."""

from __future__ import annotations

import argparse
import functools
import itertools
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from learned_metrics import validate
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.options import STATISTICS, OutputStyle, statistic_label
from learned_metrics.outputs import input_path, inputs_of

# Every file a meta-eval command can write: destination in ``args`` -> option.
OUTPUTS = {"json": "--json", "markdown": "--markdown", "latex": "--latex", "csv": "--csv",
           "pairs_csv": "--pairs-csv", "plot": "--plot", "roc_plot": "--roc-plot"}

TRUE_FORMAT_HELP = """\
--format true reads the TRUE benchmark files (Honovich et al. 2022) as published, once scored with
  learned-metrics score faithfulness --hypothesis-field generated_text ...
columns grounding, generated_text, label (1 = consistent) and the score column; the corpus is
the file name without a trailing _download, then without one trailing _valid/_dev/_test
(frank_valid_download.csv -> frank, summeval_download.csv -> summeval, qags_c.csv -> qags_c)."""


@dataclass(frozen=True)
class Flag:
    """An option beside the settings fields (an input file, a switch), as ``parser.add_argument`` takes it."""

    names: tuple[str, ...]
    options: dict[str, Any]
    group: str | None = None  # the title of the --help section it is listed in


def flag(*names: str, group: str | None = None, **options: Any) -> Flag:
    return Flag(names, options, group)


def input_flag(name: str, help: str, *, metavar: str = "FILE", many: bool = False, required: bool = True) -> Flag:
    """An input file or folder: its type declares it to the output policy (``inputs_of``)."""
    return flag(name, required=required, action="append" if many else None, type=input_path, metavar=metavar, help=help)


def grid_inputs(*, many_metrics: bool = False, human_required: bool = True) -> tuple[Flag, ...]:
    """The human file and metric file(s) of the commands that align them by (document, system)."""
    human = "human judgements (.jsonl/.csv/.parquet)" + ("" if human_required else "; not with --auc")
    metric = "metric scores; give it once per metric" if many_metrics else "metric scores (.jsonl/.csv/.parquet)"
    return input_flag("--human", human, required=human_required), input_flag("--metric", metric, many=many_metrics)


@dataclass(frozen=True)
class Command:
    """A subcommand declared as data in its module (``COMMAND``, beside ``SETTINGS`` and ``run``), so that one
    registration (:func:`add_command`) builds every parser the same way."""

    name: str
    help: str
    description: str
    inputs: tuple[Flag, ...]
    outputs: dict[str, str]  # destination of :data:`OUTPUTS` -> what that file holds ("write ..." in --help)
    epilog: str | None = None  # examples, line breaks kept


def add_command(commands: Any, module: Any) -> None:
    """The parser of a command module: its help and examples, one flag per field of ``module.SETTINGS`` and of the
    output style, its inputs and outputs, and ``module.run(args, settings)`` called by :func:`start`."""
    from learned_metrics.cli import help_formatter

    spec: Command = module.COMMAND
    parser = commands.add_parser(spec.name, help=spec.help, description=spec.description, epilog=spec.epilog,
                                 formatter_class=help_formatter)
    module.SETTINGS.add_arguments(parser)
    OutputStyle.add_arguments(parser)
    groups: dict[str | None, Any] = {None: parser}
    for option in spec.inputs:
        if option.group not in groups:
            groups[option.group] = parser.add_argument_group(option.group)
        groups[option.group].add_argument(*option.names, **option.options)
    for dest, description in spec.outputs.items():
        parser.add_argument(OUTPUTS[dest], dest=dest, metavar="OUT", help=f"write {description}")
    parser.set_defaults(settings_class=module.SETTINGS, command_flags=spec.inputs,
                        func=functools.partial(start, run=module.run))


def start(args: argparse.Namespace, run: Callable[[argparse.Namespace, Any], int]) -> int:
    """Every command's order: its settings parsed, every output checked against every input (so no error follows a
    long computation, no output lands on, in or around an input), then ``run`` reads, computes and :func:`finish`-es."""
    from learned_metrics.outputs import check_outputs, file_output
    from learned_metrics.render.figures import check_plot_path

    settings = args.settings_class.from_arguments(args)
    paths = {dest: getattr(args, dest) for dest in OUTPUTS if getattr(args, dest, None) is not None}
    check_outputs([file_output(check_plot_path(path) if dest in ("plot", "roc_plot") else path, OUTPUTS[dest])
                   for dest, path in paths.items()], inputs=inputs_of(args))
    return run(args, settings)


def metric_names(settings: Any) -> list[str] | None:
    """``--names a,b``: the metrics' display names, or None for the file stems."""
    return list(validate.ordered(settings.names, "--names")) if settings.names else None


def score_fields(settings: Any) -> list[str]:
    """``--metric-field``, given once per metric file or once for all (default: score)."""
    return list(settings.metric_field or ["score"])


def load_grid(args: argparse.Namespace, settings: Any):
    """The human file and the metric file(s) (``--metric`` once, or repeated) as one (documents x systems) grid, one
    line per problem."""
    from learned_metrics.meta_eval.data import KeyFields
    from learned_metrics.meta_eval.data import load_grid as load

    many = isinstance(args.metric, list)
    return load(args.human, args.metric if many else [args.metric], human_field=settings.human_field,
                metric_fields=score_fields(settings) if many else [settings.metric_field],
                keys=KeyFields(settings.doc_field, settings.system_field), human_format=settings.human_format,
                on_missing=settings.on_missing, names=metric_names(settings) if many else None)


def describe_inputs(args: argparse.Namespace, *, hashed: bool = True) -> list[dict[str, Any]]:
    """Path, size, SHA-256 (only when ``hashed``: only the JSON records it, and it reads the whole file) and scoring
    provenance of every input file (each file of a folder)."""
    from learned_metrics.meta_eval.data import scored_files
    from learned_metrics.provenance import input_record, read_provenance

    records = []
    for path in inputs_of(args):
        for file in scored_files(Path(path).expanduser()):
            record = input_record(file, hashed=hashed)
            if not isinstance(record, dict):  # standard input: nothing to hash afterwards
                records.append({"path": str(file)})
                continue
            provenance = read_provenance(file) if file.is_file() else None
            records.append({**record, "provenance": provenance} if provenance else record)
    return records


def settings_block(args: argparse.Namespace, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """What made this output: the command line, the version, every field of the command's settings, every input."""
    from learned_metrics import __version__

    argv = getattr(args, "argv", None)
    options = {**args.settings_class.from_arguments(args).to_json(), **OutputStyle.from_arguments(args).to_json(),
               **declared_flags(args)}
    if "coefficient" in options:  # what each statistic key measured: tau_sys is r_sys under Pearson
        options["labels"] = {name: statistic_label(name, options["coefficient"]) for name in STATISTICS}
    return {"command": shlex.join(["learned-metrics", *argv]) if argv is not None else None,
            "learned_metrics_version": __version__, **options, "inputs": inputs}


def declared_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The values of the flags a command declares beside its settings class (``auc --system-field``, ``confounders
    --no-human``/``--by-label``/``--proxy-field``, ``report --auc``, ...): they shape the result as much as a
    setting, so the settings block names them; input files are recorded under ``inputs`` instead."""
    values = {}
    for option in getattr(args, "command_flags", ()):
        if option.options.get("type") is input_path:
            continue
        dest = option.options.get("dest") or option.names[0].lstrip("-").replace("-", "_")
        value = getattr(args, dest, None)
        values[dest] = list(value) if isinstance(value, (list, tuple)) else value
    return values


def provenance_lines(inputs: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """What made each scored input (for the caption), and a warning where metric files compared against each other
    were scored with different settings that matter (MC passes, mode, granularity, ...)."""
    from learned_metrics.provenance import describe, differences

    scored = [(Path(r["path"]).name, r["provenance"]) for r in inputs if "provenance" in r]
    warnings = [f"warning: {name_a} and {name_b} were scored with different settings: {'; '.join(differ)}"
                for (name_a, a), (name_b, b) in itertools.pairwise(scored) if (differ := differences(a, b))]
    return " ".join(f"{name}: scored with {describe(record)}." for name, record in scored), warnings


def finish(args: argparse.Namespace, result: Any, *, payload: dict[str, Any] | None = None,
           notes: Sequence[str] = (), plots: dict[str, Callable[[Path], Any]] | None = None,
           csv: dict[str, str | None] | None = None, width: int | None = None, warnings: Sequence[str] = ()) -> int:
    """Print the notes, warnings and captioned tables, then write every requested file as one staged set: ``--json``
    (``payload``, default ``result.to_json()``, with the settings block), ``--markdown``, ``--latex``, ``--csv``
    (``csv`` maps a destination to a table key) and the plots; then say where each went."""
    from learned_metrics.outputs import staged_files
    from learned_metrics.render import in_percent, pick
    from learned_metrics.render.terminal import console, literal, print_tables
    from learned_metrics.render.text import csv_text, json_text, latex, markdown

    out = console(width=width)
    inputs = describe_inputs(args, hashed=bool(getattr(args, "json", None)))
    scored, differ = provenance_lines(inputs)
    for note in [*(f"note: {note}" for note in notes), *(f"warning: {w}" for w in warnings), *differ]:
        out.print(literal(note))
    styled = in_percent if OutputStyle.from_arguments(args).number_style == "percent" else (lambda table: table)
    tables = [styled(table) for table in result.tables()]
    if scored:  # the captions say which model and settings made the scores
        tables[0].caption = f"{tables[0].caption} {scored}".strip()
    print_tables(out, tables)
    writers: dict[str, Callable[[Path], Any]] = dict(plots or {})
    writers["json"] = lambda path: path.write_text(
        json_text(result.to_json() if payload is None else payload, settings_block(args, inputs)), encoding="utf-8")
    writers["markdown"] = lambda path: path.write_text(markdown(tables), encoding="utf-8")
    writers["latex"] = lambda path: path.write_text(latex(tables), encoding="utf-8")
    for dest, key in (csv or {"csv": None}).items():  # rendered only when that output is asked for
        writers[dest] = lambda path, key=key: path.write_bytes(
            csv_text(styled(pick(result.csv_tables(), key))).encode())
    wanted = [dest for dest in OUTPUTS if getattr(args, dest, None) and dest in writers]
    with staged_files() as stage:
        for dest in wanted:
            writers[dest](stage(getattr(args, dest)))
    for dest in wanted:
        out.print(literal(f"{OUTPUTS[dest].lstrip('-').replace('-', ' ')}: {getattr(args, dest)}"))
    return 0


def require(condition: bool, message: str) -> None:
    """A combination of options that cannot work together: one line, before any work."""
    if not condition:
        raise UserError(message)


def missing_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
