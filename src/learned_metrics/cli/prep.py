"""``learned-metrics prep shuffle-set|anli|nli`` and the ``data_prep/*.py`` scripts: one parser each, used by both;
the work is in :mod:`learned_metrics.data`, here are only the options, the call and the summary table."""

from __future__ import annotations

import argparse
import functools
from typing import Any

from learned_metrics.boundary import script_main
from learned_metrics.cli import help_formatter
from learned_metrics.labels import NLI_LABELS
from learned_metrics.render.terminal import console, table

SHUFFLE_SET_DESCRIPTION = ("Build the coherence shuffle task: originals (label coherent) and distinct sentence "
                           "shuffles (label incoherent), split by document before shuffling, seeded.")
SHUFFLE_SET_EPILOG = """examples:
  python data_prep/build_shuffle_set.py --source cnn_dailymail --output data/ccl_cnndm
  python data_prep/build_shuffle_set.py --source txtdir:~/wsj --output data/ccl_wsj --shuffles-per-doc 20
  python data_prep/build_shuffle_set.py --source jsonl:docs.jsonl --output data/mine --splitter pysbd
  python data_prep/build_shuffle_set.py --source news.csv --text-field body --id-field doc --output data/news
  python data_prep/build_shuffle_set.py --source hf:abisee/cnn_dailymail:3.0.0 --text-field highlights \
      --output data/ccl_cnndm_hf
  (the same with `learned-metrics prep shuffle-set ...`; splits come from train/dev/test in file, folder or Hub
  split names, or a seeded split by document when a source names none)"""
ANLI_DESCRIPTION = ("Build ANLI (R1-R3 merged into train/validation/test) plus one phrase-augmented copy of every "
                    "instance, saved as a datasets.DatasetDict with report.json, for the faithfulness NLI metric.")
ANLI_EPILOG = """examples:
  python data_prep/build_anli_augmented.py --source anli --output data/anli_aug
  python data_prep/build_anli_augmented.py --source jsonl:anli_v1.0 --output data/anli_aug
  python data_prep/build_anli_augmented.py --source anli --output data/anli_statements --phrases statements
  python data_prep/build_anli_augmented.py --source anli --output data/anli_subset5 --phrase-subset 5 --seed 1
  python data_prep/build_anli_augmented.py --source anli --output data/anli_only --no-augment
  (the same with `learned-metrics prep anli ...`)"""


def _add_build(parser: argparse.ArgumentParser, settings: Any, run: Any, source_help: str, output_help: str,
               **source: Any) -> None:
    """The arguments every build takes: ``--source``, ``--output`` and its settings, which ``run`` gets parsed."""
    parser.add_argument("--source", required=True, help=source_help, **source)
    parser.add_argument("--output", required=True, help=output_help)
    settings.add_arguments(parser)
    parser.set_defaults(func=lambda args: run(args, settings.from_arguments(args)))


def add_shuffle_set_arguments(parser: argparse.ArgumentParser) -> None:
    from learned_metrics.data.choices import SHUFFLE_SET_SOURCES, ShuffleSetSettings

    _add_build(parser, ShuffleSetSettings, run_shuffle_set, f"{SHUFFLE_SET_SOURCES}; rows hold 'sentences' (list) or "
               "'text', optional 'id' (other names: --sentences-field, --text-field, --id-field)",
               "new or empty folder for the DatasetDict (train/validation/test) and report.json; never the source or "
               "a folder holding it")


def run_shuffle_set(args: argparse.Namespace, settings: Any) -> int:
    from learned_metrics.data.shuffle_set import build_shuffle_set

    report = build_shuffle_set(args.source, args.output, settings=settings)
    rows = [(name, report["documents_per_split"][name], report["skipped_fewer_than_2_distinct_sentences"][name],
             counts["coherent"], counts["incoherent"], counts["total"]) for name, counts in report["rows"].items()]
    columns = ("split", "documents", "skipped (<2 distinct)", "coherent", "incoherent", "rows")
    console().print(table(f"shuffle set -> {args.output}", columns, rows, left=("split",)))
    return 0


def add_anli_arguments(parser: argparse.ArgumentParser) -> None:
    from learned_metrics.data.choices import ANLI_HUB_ID, AnliSettings

    _add_build(parser, AnliSettings, run_anli, f"'anli' for the Hugging Face dataset {ANLI_HUB_ID}, or "
               "'jsonl:DIR' for the official release layout (DIR/R1/train.jsonl, dev.jsonl, test.jsonl, R2, R3; "
               "fields uid, context, hypothesis, label e/n/c)",
               "new or empty output folder; never the source or a folder holding it")


def run_anli(args: argparse.Namespace, settings: Any) -> int:
    from learned_metrics.data.anli import build_anli_augmented

    return print_nli_report("ANLI", build_anli_augmented(args.source, args.output, settings=settings), args.output)


def print_nli_report(name: str, report: dict[str, Any], output: str) -> int:
    """The per-split table of ``prep anli`` and ``prep nli`` (the latter adds sources and dropped shared pairs)."""
    title = f"{name}{' + augmented copies' if report['augmentation']['augment'] else ''} -> {output}"
    mixed = "dropped_shared_pairs" in report
    rows = [(split, counts["rows"], counts["augmented"], *(counts["per_label"][label] for label in NLI_LABELS),
             *((", ".join(f"{source} {n}" for source, n in counts["per_source"].items()),
                report["dropped_shared_pairs"].get(split, 0)) if mixed else ()))
            for split, counts in report["splits"].items()]
    columns = ("split", "rows", "augmented", *NLI_LABELS, *(("per source", "shared pairs dropped") if mixed else ()))
    console().print(table(title, columns, rows, left=("split", "per source")))
    return 0


NLI_DESCRIPTION = ("Build an NLI training set from your own files, folders or Hugging Face datasets (several sources "
                   "mixed, each with a cap or weight), plus one phrase-augmented copy of every row as `prep anli` "
                   "does, saved as a datasets.DatasetDict with report.json.")
NLI_EPILOG = """examples:
  python data_prep/build_nli.py --source my_nli.csv --output data/my_nli
  python data_prep/build_nli.py --source mine=data/nli_folder --source anli=hf:facebook/anli --cap anli=20000 \\
      --output data/mix
  python data_prep/build_nli.py --source rte.jsonl --premise-field sentence1 --hypothesis-field sentence2 \\
      --label-order entailment,not_entailment --two-class neutral --output data/rte
  python data_prep/build_nli.py --source anli_v1.0 --premise-field context --output data/anli_aug
  (the same with `learned-metrics prep nli ...`; splits come from train/dev/test in file or folder names,
  --split-field, or a seeded split by premise when a source names none)"""


def add_nli_arguments(parser: argparse.ArgumentParser) -> None:
    from learned_metrics.data.choices import NLI_SOURCES, NliSettings

    _add_build(parser, NliSettings, run_nli, f"repeat for a mix: {NLI_SOURCES}", "new or empty output folder; never "
               "a source or a folder holding one", action="append", metavar="[NAME=]SOURCE")


def run_nli(args: argparse.Namespace, settings: Any) -> int:
    from learned_metrics.data.nli import build_nli

    return print_nli_report("NLI", build_nli(args.source, args.output, settings=settings), args.output)


def register(subparsers: Any) -> None:
    prep = subparsers.add_parser("prep", help="build training sets (coherence shuffle set, augmented ANLI or any NLI)",
                                 description="Build the data sets training reads (the data_prep/ scripts run these).")
    commands = prep.add_subparsers(dest="prep_command", metavar="SET", required=True)
    add_shuffle_set_arguments(commands.add_parser(
        "shuffle-set", help="originals vs. sentence shuffles (coherence)", description=SHUFFLE_SET_DESCRIPTION,
        epilog=SHUFFLE_SET_EPILOG, formatter_class=help_formatter))
    add_anli_arguments(commands.add_parser(
        "anli", help="ANLI plus phrase-augmented copies (faithfulness)", description=ANLI_DESCRIPTION,
        epilog=ANLI_EPILOG, formatter_class=help_formatter))
    add_nli_arguments(commands.add_parser(
        "nli", help="any NLI files/folders/Hub sets, mixed, plus phrase-augmented copies (faithfulness)",
        description=NLI_DESCRIPTION, epilog=NLI_EPILOG, formatter_class=help_formatter))


# ``python data_prep/build_*.py [ARGV]``: the same parser and boundary under the script's own name
shuffle_set_script = functools.partial(script_main, "build_shuffle_set.py", add_shuffle_set_arguments,
                                       description=SHUFFLE_SET_DESCRIPTION, epilog=SHUFFLE_SET_EPILOG)
anli_script = functools.partial(script_main, "build_anli_augmented.py", add_anli_arguments,
                                description=ANLI_DESCRIPTION, epilog=ANLI_EPILOG)
nli_script = functools.partial(script_main, "build_nli.py", add_nli_arguments, description=NLI_DESCRIPTION,
                               epilog=NLI_EPILOG)
