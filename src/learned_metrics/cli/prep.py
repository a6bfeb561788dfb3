"""``learned-metrics prep shuffle-set|anli`` and the ``data_prep/*.py`` scripts: one parser each, used by both.

The work is in :mod:`learned_metrics.data.shuffle_set` and :mod:`learned_metrics.data.anli`;
here are only the options, the call and the summary table.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from learned_metrics.boundary import script_main
from learned_metrics.cli import help_formatter
from learned_metrics.labels import NLI_LABELS
from learned_metrics.render.terminal import console, table
from learned_metrics.validate import fraction_option, int_option

SHUFFLE_SET_DESCRIPTION = ("Build the coherence shuffle task: originals (label coherent) and distinct sentence "
                           "shuffles (label incoherent), split by document before shuffling, seeded.")
SHUFFLE_SET_EPILOG = """examples:
  python data_prep/build_shuffle_set.py --source cnn_dailymail --output data/ccl_cnndm
  python data_prep/build_shuffle_set.py --source txtdir:~/wsj --output data/ccl_wsj --shuffles-per-doc 20
  python data_prep/build_shuffle_set.py --source jsonl:docs.jsonl --output data/mine --splitter pysbd
  (the same with `learned-metrics prep shuffle-set ...`)"""
ANLI_DESCRIPTION = ("Build ANLI (R1-R3 merged into train/validation/test) plus one phrase-augmented copy of every "
                    "instance, saved as a datasets.DatasetDict with report.json, for the faithfulness NLI metric.")
ANLI_EPILOG = """examples:
  python data_prep/build_anli_augmented.py --source anli --output data/anli_aug
  python data_prep/build_anli_augmented.py --source jsonl:anli_v1.0 --output data/anli_aug
  python data_prep/build_anli_augmented.py --source anli --output data/anli_statements --phrases statements
  python data_prep/build_anli_augmented.py --source anli --output data/anli_subset5 --phrase-subset 5 --seed 1
  python data_prep/build_anli_augmented.py --source anli --output data/anli_only --no-augment
  (the same with `learned-metrics prep anli ...`)"""


# --- shuffle set ---------------------------------------------------------------------------------


def add_shuffle_set_arguments(parser: argparse.ArgumentParser) -> None:
    from learned_metrics.data.choices import SHUFFLE_SET_SOURCES
    from learned_metrics.text.sentences import SPLITTERS

    parser.add_argument(
        "--source", required=True,
        help=f"{SHUFFLE_SET_SOURCES}; jsonl rows hold 'sentences' (list) or 'text', optional 'id'",
    )
    parser.add_argument(
        "--output", required=True, help="new or empty folder for the DatasetDict (train/validation/test) and "
        "report.json; never the source or a folder holding it"
    )
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier shuffle set in --output atomically (a folder holding anything else "
                        "is never touched)")
    parser.add_argument(
        "--shuffles-per-doc",
        type=int_option(1),
        default=1,
        help="distinct negatives per document (paper: 1 for CNN/DM, 20 for WSJ)",
    )
    parser.add_argument(
        "--seed", type=int_option(0), default=42, help="seed of the split and the shuffles (same seed, same data)"
    )
    parser.add_argument(
        "--val-fraction", type=fraction_option, default=0.1, help="share of documents for validation (local sources)"
    )
    parser.add_argument("--test-fraction", type=fraction_option, default=0.1,
                        help="share of documents for test (local sources; 0 = no test split)")
    parser.add_argument(
        "--splitter",
        choices=SPLITTERS,
        default="newline",
        help="how 'text' fields and .txt files are split into sentences",
    )
    parser.add_argument(
        "--joiner",
        default="\\n",
        help="string joining sentences into the model input: backslash escapes (\\n, \\t, \\u2014) or any text "
        "such as ' — ' (default newline, as in the paper); recorded in the model card",
    )
    parser.add_argument(
        "--max-docs-per-split", type=int_option(1), default=None,
        help="use only the first N documents of each split (quick runs)"
    )
    parser.add_argument("--num-proc", type=int_option(1), default=None, help="processes for datasets.map")
    parser.set_defaults(func=run_shuffle_set)


def run_shuffle_set(args: argparse.Namespace) -> int:
    from learned_metrics.data.shuffle_set import build_shuffle_set
    from learned_metrics.text.sentences import parse_joiner

    report = build_shuffle_set(
        args.source,
        args.output,
        shuffles_per_doc=args.shuffles_per_doc,
        seed=args.seed,
        val_fraction=args.val_fraction,
        test_fraction=args.test_fraction,
        splitter=args.splitter,
        joiner=parse_joiner(args.joiner),
        max_docs_per_split=args.max_docs_per_split,
        num_proc=args.num_proc,
        overwrite=args.overwrite,
    )
    rows = [(name, report["documents_per_split"][name], report["skipped_fewer_than_2_distinct_sentences"][name],
             counts["coherent"], counts["incoherent"], counts["total"]) for name, counts in report["rows"].items()]
    columns = ("split", "documents", "skipped (<2 distinct)", "coherent", "incoherent", "rows")
    console().print(table(f"shuffle set -> {args.output}", columns, rows, left=("split",)))
    return 0


# --- augmented ANLI ------------------------------------------------------------------------------


def add_anli_arguments(parser: argparse.ArgumentParser) -> None:
    from learned_metrics.data.choices import ANLI_HUB_ID, PHRASE_LISTS, POSITIONS

    parser.add_argument(
        "--source",
        required=True,
        help=f"'anli' for the Hugging Face dataset {ANLI_HUB_ID}, or 'jsonl:DIR' for the official release "
        "layout (DIR/R1/train.jsonl, dev.jsonl, test.jsonl, R2, R3; fields uid, context, hypothesis, label e/n/c)",
    )
    parser.add_argument("--output", required=True,
                        help="new or empty output folder; never the source or a folder holding it")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier build in --output atomically (a folder holding anything else is "
                        "never touched)")
    parser.add_argument(
        "--phrases",
        choices=list(PHRASE_LISTS),
        default="dialogue",
        help="phrase list: dialogue (paper: introductions, hedging, sentiment) or neutral statements (ablation)",
    )
    parser.add_argument(
        "--position",
        choices=list(POSITIONS),
        default="prepend",
        help="prepend (paper; hypothesis first letter lower-cased) or append (ablation; hypothesis unchanged)",
    )
    parser.add_argument(
        "--phrase-subset",
        type=int_option(1),
        metavar="K",
        default=None,
        help="draw from a seeded random subset of K phrases (paper ablation: 5); recorded in report.json",
    )
    parser.add_argument("--seed", type=int_option(0), default=42,
                        help="seed for the phrase draws and the subset (default 42)")
    parser.add_argument("--no-augment", action="store_true", help="write ANLI only (ablation without augmentation)")
    parser.set_defaults(func=run_anli)


def run_anli(args: argparse.Namespace) -> int:
    from learned_metrics.data.anli import build_anli_augmented

    report = build_anli_augmented(
        source=args.source,
        output=args.output,
        phrases=args.phrases,
        position=args.position,
        phrase_subset=args.phrase_subset,
        seed=args.seed,
        augment=not args.no_augment,
        overwrite=args.overwrite,
    )
    title = f"ANLI{' + augmented copies' if report['augmentation']['augment'] else ''} -> {args.output}"
    rows = [(split, counts["rows"], counts["augmented"], *(counts["per_label"][label] for label in NLI_LABELS))
            for split, counts in report["splits"].items()]
    console().print(table(title, ("split", "rows", "augmented", *NLI_LABELS), rows, left=("split",)))
    return 0


# --- entry points --------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    prep = subparsers.add_parser("prep", help="build training sets (coherence shuffle set, augmented ANLI)",
                                 description="Build the data sets training reads (the data_prep/ scripts run these).")
    commands = prep.add_subparsers(dest="prep_command", metavar="SET", required=True)
    add_shuffle_set_arguments(commands.add_parser(
        "shuffle-set", help="originals vs. sentence shuffles (coherence)", description=SHUFFLE_SET_DESCRIPTION,
        epilog=SHUFFLE_SET_EPILOG, formatter_class=help_formatter))
    add_anli_arguments(commands.add_parser(
        "anli", help="ANLI plus phrase-augmented copies (faithfulness)", description=ANLI_DESCRIPTION,
        epilog=ANLI_EPILOG, formatter_class=help_formatter))


def shuffle_set_script(argv: Sequence[str] | None = None) -> int:
    """``python data_prep/build_shuffle_set.py``."""
    return script_main("build_shuffle_set.py", add_shuffle_set_arguments, argv, description=SHUFFLE_SET_DESCRIPTION,
                       epilog=SHUFFLE_SET_EPILOG)


def anli_script(argv: Sequence[str] | None = None) -> int:
    """``python data_prep/build_anli_augmented.py``."""
    return script_main("build_anli_augmented.py", add_anli_arguments, argv, description=ANLI_DESCRIPTION,
                       epilog=ANLI_EPILOG)
