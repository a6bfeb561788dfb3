"""``learned-metrics meta-eval systems``: which system is better, and is the difference real?

Thin: reads the scored rows (:func:`learned_metrics.meta_eval.systems.read_system_scores`), runs
:func:`~learned_metrics.meta_eval.systems.compare_systems`, prints the ranking and the pairwise tests, and writes
the outputs through the staged writers the other ``meta-eval`` commands use.
"""

from __future__ import annotations

import argparse
from typing import Any

from learned_metrics.cli import help_formatter
from learned_metrics.cli.meta_eval import (
    add_alternative_option,
    add_correction_option,
    add_file_outputs,
    add_resamples_option,
    add_seed_option,
    check_command_outputs,
    print_notes,
    write_outputs,
)
from learned_metrics.cli.tables import console, fmt, fmt_ci, fmt_p
from learned_metrics.validate import fraction_option, int_option

EPILOG = """\
input: .jsonl, .csv or .parquet rows, one per (document, system), with a document key, a system key and a
score, e.g. {"doc_id": "d000", "system_id": "M00", "score": -0.93}. Several --input files are concatenated
(one scored file per system is fine); a (document, system) pair given twice is an error naming both rows.
Pairing needs a document key shared by the systems: the output of `learned-metrics score ...` keeps every
input field, so keep an id column in the file you score and name it with --doc-field; a file without one
is refused with one line (paired tests cannot be run without knowing which outputs belong together).

per system: mean over the documents it scored, 95%% percentile bootstrap CI (documents redrawn).
per pair A, B, on the documents both scored (fewer than 2: undefined): mean A - B with a paired bootstrap CI
(the same documents drawn for both), wins/ties/losses per document, and three p-values for "A better than B":
  p boot   paired bootstrap (Berg-Kirkpatrick et al. 2012; Deutsch et al. 2021, as meta-eval compare): the
           resampled differences shifted to the null, p = (1 + #{delta* - delta >= delta}) / (1 + resamples)
  p perm   paired permutation (approximate randomization): each document's A/B scores swapped at random,
           p = (1 + #{delta* >= delta}) / (1 + permutations)
  p t      scipy's paired t-test, for reference
--test picks the p that decides significance; --correction adjusts it for the number of tests (holm by default:
you compare many systems at once). Without --baseline every pair is tested, A being the system with the higher
mean on their shared documents, and the correction counts both directions of every pair; with --baseline each
system is tested against it. The ranking lists, by rank number, the systems each one beats significantly.

examples:
  learned-metrics meta-eval systems --input examples/meta_eval/metric_good.jsonl --markdown systems.md
  learned-metrics score faithfulness --model DIR --input outputs.jsonl --output scored.jsonl --system-field system
  learned-metrics meta-eval systems --input scored.jsonl --system-field system --doc-field id --baseline base
"""


def register(commands: Any) -> None:
    """Add ``meta-eval systems`` to the ``meta-eval`` subcommands."""
    parser = commands.add_parser(
        "systems",
        help="rank systems by a metric's scores; paired bootstrap/permutation/t tests between them",
        description="Compare systems scored on the same documents, with any metric: mean score per system with a "
        "bootstrap CI, and paired significance tests between systems (as comet-compare for MT).",
        epilog=EPILOG,
        formatter_class=help_formatter,
    )
    parser.add_argument("--input", required=True, action="append", metavar="FILE",
                        help="scored rows (.jsonl/.csv/.parquet); repeat to concatenate several files")
    parser.add_argument("--score-field", default="score", metavar="F", help="score field (default: score)")
    parser.add_argument("--system-field", default="system_id", metavar="F",
                        help="system key field (default: system_id)")
    parser.add_argument("--doc-field", default="doc_id", metavar="F",
                        help="document key field shared by the systems (default: doc_id)")
    parser.add_argument("--on-missing", choices=("error", "drop"), default="error",
                        help="duplicate (document, system) rows and NaN scores: stop with an error (default) or "
                        "drop them and print how many")
    parser.add_argument("--baseline", metavar="NAME", help="test every system against this one only")
    parser.add_argument("--test", choices=("permutation", "bootstrap", "t"), default="permutation",
                        help="the test whose p decides significance (default: permutation)")
    add_alternative_option(parser, " (the winner is the higher mean)")
    add_correction_option(parser, "over all tests", default="holm")
    parser.add_argument("--alpha", type=fraction_option, default=0.05,
                        help="significance level of the adjusted p-values (default: 0.05)")
    add_resamples_option(parser, "0 = no CIs and no p boot")
    parser.add_argument("--permutations", type=int_option(0), default=10000,
                        help="permutations per pair; 0 = no p perm. A p-value is at least 1/(k+1), which the "
                        "correction multiplies by the number of tests (default: 10000)")
    add_seed_option(parser)
    add_file_outputs(parser, {"--json": "everything as JSON", "--markdown": "both tables as Markdown",
                              "--latex": "both tables as LaTeX (booktabs)", "--csv": "the ranking as CSV",
                              "--pairs-csv": "the pairwise tests as CSV"})
    parser.set_defaults(func=run_systems)


def run_systems(args: argparse.Namespace) -> int:
    from learned_metrics.meta_eval.data import KeyFields
    from learned_metrics.meta_eval.multiple import check_alpha
    from learned_metrics.meta_eval.systems import compare_systems, read_system_scores

    check_alpha(args.alpha)
    check_command_outputs(args)
    scores = read_system_scores(args.input, args.score_field, KeyFields(args.doc_field, args.system_field),
                                on_missing=args.on_missing)
    result = compare_systems(scores, baseline=args.baseline, resamples=args.resamples,
                             permutations=args.permutations, test=args.test, alternative=args.alternative,
                             correction=args.correction, alpha=args.alpha, seed=args.seed)
    out = console()
    print_notes(out, result.notes)
    out.print(_ranking_table(result, f"{len(scores.systems)} systems x {len(scores.docs)} documents · "
                                     f"{args.resamples} bootstrap resamples, seed {args.seed}"))
    out.print(_pairs_table(result))
    out.print(result.caption)
    texts = {"markdown": result.to_markdown(), "latex": result.to_latex(), "csv": result.to_csv(),
             "pairs_csv": result.to_csv("pairs")}
    write_outputs(args, json_obj=result.to_json(), out=out, texts=texts)
    for attr in ("json", *texts):
        if getattr(args, attr, None):
            out.print(f"{attr.replace('_', ' ')}: {getattr(args, attr)}")
    return 0


def _ranking_table(result, title: str):
    from rich.table import Table

    table = Table(title=title)
    for column in ("rank", "system", "mean", "95% CI", "n", "better than"):
        table.add_column(column, justify="left" if column in ("system", "better than") else "right")
    for r in result.systems:
        table.add_row(str(r.rank), r.system, fmt(r.mean), fmt_ci(r.ci), str(r.n),
                      ",".join(str(result.rank_of(name)) for name in r.better_than))
    return table


def _pairs_table(result):
    from rich.table import Table

    s = result.settings
    against = f"against {s['baseline']}" if s["baseline"] else "all pairs"
    sided = "two-sided" if s["alternative"] == "two-sided" else "one-sided, A better than B"
    table = Table(title=f"{against} · {sided} · "
                        f"{s['test']} decides, {s['correction']} correction, alpha {s['alpha']}")
    for column in ("A", "B", "n", "A - B", "95% CI", "A>B/tie/A<B", "win rate", "p boot", "p perm", "p t",
                   "p adj"):
        table.add_column(column, justify="left" if column in ("A", "B") else "right")
    for p in result.pairs:
        record = "—" if p.wins is None else f"{p.wins}/{p.ties}/{p.losses}"
        adjusted = fmt_p(p.p_adjusted) + (" *" if p.significant else "")
        table.add_row(p.a, p.b, str(p.n), fmt(p.delta), fmt_ci(p.ci), record, fmt(p.win_rate, 3),
                      fmt_p(p.p_bootstrap), fmt_p(p.p_permutation), fmt_p(p.p_t), adjusted,
                      style="bold" if p.significant else None)
    return table
