"""``learned-metrics meta-eval confounders``: does a metric (or the human label) follow length, overlap, "I think"?

Thin over :mod:`learned_metrics.meta_eval.confounders`: check every output,
read the scored rows (one-line errors naming file, row and field), compute,
print the tables, write ``--json/--markdown/--latex/--csv`` as one staged set.
"""

from __future__ import annotations

import argparse
from typing import Any

from learned_metrics.cli import help_formatter
from learned_metrics.cli.meta_eval import (
    add_correction_option,
    add_file_outputs,
    add_resamples_and_seed,
    check_command_outputs,
    print_notes,
    write_report,
)
from learned_metrics.cli.tables import console, fmt, fmt_p
from learned_metrics.formatting import format_ci

EPILOG = """\
proxies (from the --generation-field text, no model):
  chars         length in characters
  tokens        word tokens (letters/digits; don't and o'clock are one token)
  sentences     sentence count (pysbd, or one per line with --splitter newline)
  overlap       share of the generation's tokens found in the grounding
                (only with a grounding field; skipped with a note otherwise)
  first_person  count of I, me, my, mine, myself, we, us, our, ours, ourselves (--first-person all, the
                default), or of I only (--first-person i, as the faithfulness thesis counts it);
                case-insensitive, whole words (the I of I'm counts, so does a lowercase i)
--proxy-field F adds a numeric field as a proxy (e.g. the position of the
first error); rows where it is missing are left out of its correlations and
counted.

Each cell: Kendall tau-b of the score column with the proxy and its 95%
percentile bootstrap CI (rows redrawn). The human row is --human-field
(default: label). --by-label repeats the table within label 1 and label 0
rows, so a proxy that only predicts the label does not look like a confounder.
Williams (two or more metrics): one-sided p that metric A depends less on the
proxy than B, i.e. |tau(B, proxy)| > |tau(A, proxy)|, with tau(A, B) as the
third correlation (signs aligned with the two absolute values).

examples:
  learned-metrics meta-eval confounders --input examples/meta_eval/confounders.jsonl \\
      --metric-field score_nli --metric-field score_overlap --names nli,overlap \\
      --proxy-field first_error --by-label --markdown confounders.md
  learned-metrics meta-eval confounders --input scored_coherence.jsonl --generation-field text \\
      --human-field expert    # no grounding: overlap is not computed
"""


def register(commands: Any) -> None:
    """Add ``confounders`` to the ``meta-eval`` subcommands."""
    parser = commands.add_parser(
        "confounders",
        help="correlate metric scores and human labels with text proxies (length, overlap, first person, ...)",
        description="Why does a metric work? Kendall tau-b (with bootstrap CIs and p-values) of every metric and "
        "of the human label with simple text proxies, optionally within each label class, and Williams' tests "
        "for 'metric A depends less on the proxy than metric B'.",
        epilog=EPILOG,
        formatter_class=help_formatter,
    )
    _add_field_options(parser)
    _add_analysis_options(parser)
    add_file_outputs(parser, {"--json": "the result as JSON", "--markdown": "the tables as Markdown",
                              "--latex": "the tables as LaTeX (booktabs)",
                              "--csv": "the correlations as CSV (long format)"})
    parser.set_defaults(func=run_confounders)


def _add_field_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", required=True, metavar="FILE",
                        help="scored rows (.jsonl/.csv/.parquet), e.g. the output of `learned-metrics score`")
    parser.add_argument("--metric-field", action="append", metavar="F",
                        help="a metric's score field; repeat for several metrics (default: score)")
    parser.add_argument("--names", metavar="A,B", help="comma-separated metric names (default: the field names)")
    parser.add_argument("--human-field", default="label", metavar="F",
                        help="human label/score, reported as the row 'human' (default: label)")
    parser.add_argument("--no-human", action="store_true", help="the rows have no human label/score")
    parser.add_argument("--generation-field", default=None, metavar="F",
                        help="the scored text (default: generation; with --format true: generated_text; coherence "
                        "files: text)")
    parser.add_argument("--format", choices=("rows", "true"), default="rows",
                        help="true: a TRUE benchmark file (grounding, generated_text, label), so the generation "
                        "field defaults to generated_text (default: rows)")
    parser.add_argument("--grounding-field", default="grounding", metavar="F",
                        help="the source text, for the overlap proxy (default: grounding)")
    parser.add_argument("--label-field", default="label", metavar="F",
                        help="0/1 label for --by-label (default: label)")


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--proxies", metavar="LIST",
                        help="built-in proxies (default: chars,tokens,sentences,overlap,first_person; overlap only "
                        "when the rows have the grounding field); '' for none")
    parser.add_argument("--proxy-field", action="append", default=[], metavar="F",
                        help="a numeric field used as a proxy, e.g. first_error (repeatable)")
    parser.add_argument("--first-person", choices=("all", "i"), default="all",
                        help="forms the first_person proxy counts: all = I, me, my, mine, myself, we, us, our, "
                        "ours, ourselves; i = the word I only, as the paper counts it (case-insensitive, whole "
                        "words; default: all)")
    parser.add_argument("--splitter", choices=("pysbd", "newline"), default="pysbd",
                        help="sentence splitter of the sentences proxy (default: pysbd)")
    parser.add_argument("--by-label", action="store_true", help="also within label 1 and label 0 rows")
    add_resamples_and_seed(parser)
    add_correction_option(parser, "over all Williams tests")


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def run_confounders(args: argparse.Namespace) -> int:
    from learned_metrics.meta_eval.confounders import (
        ConfounderFields,
        analyse,
        check_proxy_names,
        read_confounder_rows,
    )

    fields = ConfounderFields(
        metrics=tuple(args.metric_field or ["score"]),
        names=tuple(_split(args.names)) if args.names else None,
        human=None if args.no_human else args.human_field,
        generation=args.generation_field or ("generated_text" if args.format == "true" else "generation"),
        grounding=args.grounding_field or None,
        proxy_fields=tuple(args.proxy_field),
        label=args.label_field,
    )
    proxies = _split(args.proxies)
    fields.metric_names()
    check_proxy_names(proxies, fields.proxy_fields)
    check_command_outputs(args)
    data = read_confounder_rows(args.input, fields, proxies=proxies, by_label=args.by_label, splitter=args.splitter,
                                first_person=args.first_person)
    report = analyse(data, resamples=args.resamples, seed=args.seed, correction=args.correction)
    out = console()
    print_notes(out, report.notes)
    for scope in report.scopes:
        out.print(_rich_scope(report, scope))
    if report.tests:
        out.print(_rich_tests(report))
    write_report(args, out, report, report.to_json())
    return 0


def _rich_scope(report, scope: str):
    from rich.table import Table

    from learned_metrics.meta_eval.confounders import SCOPE_TITLES

    resamples = report.settings["resamples"]
    title = (f"Kendall tau-b with proxies · {SCOPE_TITLES[scope]} ({report.rows[scope]}) · "
             + (f"95% CI from {resamples} bootstrap resamples, seed {report.settings['seed']}" if resamples
                else "no CI"))
    table = Table(title=title)
    table.add_column("score")
    for proxy in report.proxies:
        table.add_column(proxy, justify="right")
    for column in report.columns_of(scope):
        cells = []
        for proxy in report.proxies:
            tau = report.correlation(scope, column, proxy).tau
            # 2-decimal CIs keep a row of six proxies within 120 columns; the files have full precision
            cells.append(fmt(tau.value, 3) + ("" if tau.ci is None else f"\n{format_ci(tau.ci, 2)}"))
        table.add_row(column, *cells)
    return table


def _rich_tests(report):
    from rich.table import Table

    correction = report.settings["correction"]
    table = Table(title="Williams: H1 = A depends less on the proxy than B (|tau(B)| > |tau(A)|), one-sided")
    columns = ["scope", "proxy", "A", "B", "tau(A)", "tau(B)", "tau(A,B)", "n", "p"]
    if correction != "none":
        columns.append(f"p {correction}")
    if report.scopes == ["all"]:
        columns.remove("scope")
    for column in columns:
        table.add_column(column, justify="left" if column in ("scope", "proxy", "A", "B") else "right")
    for t in report.tests:
        cells = [t.scope, t.proxy, t.metric_a, t.metric_b, fmt(t.tau_a), fmt(t.tau_b), fmt(t.tau_ab), str(t.n),
                 fmt_p(t.p)]
        if correction != "none":
            cells.append(fmt_p(t.p_adjusted))
        table.add_row(*(cells[1:] if "scope" not in columns else cells))
    return table
