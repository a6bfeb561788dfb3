"""``learned-metrics meta-eval ...``: thin commands over the meta-evaluation API.

Each command checks every output path before any work (see
:mod:`learned_metrics.outputs`), reads its files (one-line errors naming file,
row and field), computes everything, prints a table, and only then writes its
``--json`` / ``--plot`` outputs as one staged set, so a failed run leaves no
partial file and no JSON without its plot.
"""

from __future__ import annotations

import argparse
from typing import Any

from learned_metrics.cli import help_formatter
from learned_metrics.cli.tables import console, fmt, fmt_ci, fmt_p
from learned_metrics.errors import UserError
from learned_metrics.formatting import format_ci
from learned_metrics.io import write_json
from learned_metrics.outputs import check_outputs, file_output, staged_files
from learned_metrics.validate import fraction_option, int_option

STATS_HELP = "tau_sys,tau_sum,tau_pair,acc_pair,tau_intra"

CORRELATIONS_EPILOG = """\
statistics (Kendall tau-b unless --coefficient says otherwise):
  tau_sys    per-system mean scores, correlated across systems
  tau_sum    all summaries pooled ("global")
  tau_pair   per document across its systems, mean over documents
             (what some papers call "summary-level")
  acc_pair   share of same-document summary pairs with a strict human order
             that the metric orders the same way (a metric tie counts wrong)
  tau_intra  per system across its documents, mean over systems
A per-group correlation that is undefined (constant scores) is left out of the
mean and counted under "skipped".

input files: .jsonl or .csv, one row per summary keyed by --doc-field and
--system-field. The human file may hold one row per annotator (averaged per
summary). --human-format summeval reads the SummEval release file
model_annotations.aligned.paired.jsonl (id, model_id, expert_annotations).

example:
  learned-metrics meta-eval correlations --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --json out/correlations.json
"""


def _add_grid_inputs(parser: argparse.ArgumentParser, *, many_metrics: bool = False,
                     human_required: bool = True) -> None:
    """Options shared by commands that align a human file with metric file(s)."""
    parser.add_argument("--human", required=human_required, metavar="FILE",
                        help="human judgements (.jsonl/.csv)" + ("" if human_required else "; not with --auc"))
    if many_metrics:
        parser.add_argument(
            "--metric",
            required=True,
            action="append",
            metavar="FILE",
            help="metric scores; give it once per metric (at least two)",
        )
        parser.add_argument(
            "--metric-field",
            action="append",
            metavar="F",
            help="score field of the metric files: once for all, or once per --metric (default: score)",
        )
        parser.add_argument("--names", metavar="A,B", help="comma-separated metric names (default: file stems)")
    else:
        parser.add_argument("--metric", required=True, metavar="FILE", help="metric scores (.jsonl/.csv)")
        parser.add_argument("--metric-field", default="score", metavar="F", help="metric score field (default: score)")
    parser.add_argument(
        "--human-field",
        default="score",
        metavar="F",
        help="human score field; with --human-format summeval one of coherence, consistency, fluency, relevance "
        "(default: score)",
    )
    parser.add_argument(
        "--human-format",
        choices=("rows", "summeval"),
        default="rows",
        help="rows: one row per summary or per annotation (default); summeval: the SummEval release file",
    )
    parser.add_argument("--doc-field", default="doc_id", metavar="F", help="document key field (default: doc_id)")
    parser.add_argument(
        "--system-field", default="system_id", metavar="F", help="system key field (default: system_id)"
    )
    parser.add_argument(
        "--on-missing",
        choices=("error", "drop"),
        default="error",
        help="keys in one file only, duplicate metric rows, NaN scores: stop with an error (default) "
        "or drop them and print how many",
    )


def _add_stat_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--coefficient",
        choices=("kendall", "pearson", "spearman"),
        default="kendall",
        help="correlation coefficient (default: kendall, i.e. tau-b)",
    )
    parser.add_argument(
        "--stats", default=STATS_HELP, metavar="LIST", help=f"statistics to report (default: {STATS_HELP})"
    )
    add_seed_option(parser)


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int_option(0), default=0, help="random seed of the resamples (default: 0)")


def add_resamples_option(parser: argparse.ArgumentParser, what: str = "0 = no CI") -> None:
    parser.add_argument("--resamples", type=int_option(0), default=1000,
                        help=f"bootstrap resamples; {what} (default: 1000)")


def add_resamples_and_seed(parser: argparse.ArgumentParser) -> None:
    add_resamples_option(parser)
    add_seed_option(parser)


def _add_resample_mode_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--resample", choices=("both", "systems", "documents"), default="both",
                        help=f"what {what} redraws with replacement (default: both, as Deutsch et al. 2021 "
                        "recommend)")


def _add_bootstrap_options(parser: argparse.ArgumentParser) -> None:
    add_resamples_option(parser)
    _add_resample_mode_option(parser, "the bootstrap")


def _add_confidence_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence", type=fraction_option, default=0.95,
                        help="level of every confidence interval (default: 0.95)")


def _add_ci_method_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ci-method", choices=("bootstrap", "fisher"), default="bootstrap",
                        help="bootstrap: percentile bootstrap (default); fisher: Fisher-z interval with Bonett & "
                        "Wright's constants per coefficient, n = items of one correlation (none for acc_pair)")


def _add_workers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int_option(1), default=None, metavar="N",
                        help="processes for the metric pairs (and report columns) run side by side; results do not "
                        "depend on it (default: every core this process may use)")


def add_alternative_option(parser: argparse.ArgumentParser, note: str = "") -> None:
    parser.add_argument("--alternative", choices=("greater", "two-sided"), default="greater",
                        help=f"greater: one-sided, 'A better than B' (default); two-sided: 'A and B differ'{note}")


def add_correction_option(parser: argparse.ArgumentParser, over: str, default: str = "none") -> None:
    parser.add_argument("--correction", choices=("none", "bonferroni", "holm"), default=default,
                        help=f"multiple-comparison correction of the p-values {over} (default: {default})")


def _add_test_options(parser: argparse.ArgumentParser) -> None:
    """How significance is decided: sidedness, multiple-comparison correction and Williams' |r|."""
    add_alternative_option(parser)
    add_correction_option(parser, "over the pairs compared, per column/statistic")
    parser.add_argument("--williams", choices=("abs", "signed"), default="abs",
                        help="Williams' test on |r| of all three correlations as the WMT scripts and nlpstats "
                        "(default), or on signed r")


def add_file_outputs(parser: argparse.ArgumentParser, outputs: dict[str, str]) -> None:
    """``--json``/``--markdown``/``--latex``/``--csv`` and the like: option -> what it writes (checked before any
    work and written as one staged set by the commands, see OUTPUT_OPTIONS)."""
    for option, what in outputs.items():
        parser.add_argument(option, metavar="OUT", help=f"write {what}")


def _add_swap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--swap",
        choices=("cell", "system", "document"),
        default="cell",
        help="unit whose scores the two metrics trade in a permutation (default: cell)",
    )


def register(subparsers: Any) -> None:
    """Add ``meta-eval`` and its subcommands to the main parser."""
    meta = subparsers.add_parser(
        "meta-eval",
        help="judge metric scores against human judgements (correlations, tests, bias matrix, AUC, shuffle test, "
        "paper tables, confounders)",
        description="Meta-evaluation: how well do a metric's scores agree with human judgements?",
    )
    commands = meta.add_subparsers(dest="meta_command", metavar="COMMAND")
    meta.set_defaults(func=lambda args: _missing_subcommand(meta))
    _register_correlations(commands)
    _register_compare(commands)
    _register_bias(commands)
    _register_auc(commands)
    _register_shuffle(commands)
    _register_report(commands)
    _register_system_level(commands)
    from learned_metrics.cli.confounders import register as register_confounders  # imports this module

    register_confounders(commands)
    from learned_metrics.cli.systems import register as register_systems  # imports this module

    register_systems(commands)


def _missing_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _register_correlations(commands: Any) -> None:
    parser = commands.add_parser(
        "correlations",
        help="tau_sys, tau_sum, tau_pair, acc_pair, tau_intra with bootstrap 95%% CIs",
        description="Correlation of a metric with human judgements at five levels, with percentile bootstrap "
        "95% confidence intervals.",
        epilog=CORRELATIONS_EPILOG,
        formatter_class=help_formatter,
    )
    _add_grid_inputs(parser)
    _add_stat_options(parser)
    _add_bootstrap_options(parser)
    _add_confidence_option(parser)
    _add_ci_method_option(parser)
    parser.add_argument("--json", metavar="OUT", help="write {statistic: {value, ci, n, skipped, ...}} here")
    parser.set_defaults(func=run_correlations)


def _register_compare(commands: Any) -> None:
    parser = commands.add_parser(
        "compare",
        help="is metric A significantly better than B? (permutation, paired bootstrap and Williams tests)",
        description="For every ordered pair of metrics (A, B) and statistic: p-values for 'A correlates better "
        "with the humans than B' (or 'A and B differ' with --alternative two-sided) and a CI of the difference. "
        "Permutation test: both metrics standardized, delta = r(A,H) - r(B,H), scores swapped between A and B per "
        "cell/system/document, p = (1 + #{delta* >= delta}) / (1 + k). Paired bootstrap test: the same documents/"
        "systems redrawn for A and B, p = (1 + #{delta* - delta >= delta}) / (1 + k). Williams' test: the "
        "parametric alternative (n = items of one correlation; not defined for acc_pair).",
        epilog="example:\n  learned-metrics meta-eval compare --human examples/meta_eval/human.jsonl \\\n"
        "      --metric examples/meta_eval/metric_good.jsonl --metric examples/meta_eval/metric_weak.csv",
        formatter_class=help_formatter,
    )
    _add_grid_inputs(parser, many_metrics=True)
    _add_stat_options(parser)
    parser.add_argument(
        "--permutations",
        "--resamples",
        dest="permutations",
        type=int_option(1),
        default=1000,
        help="number of permutations (default: 1000)",
    )
    _add_swap_option(parser)
    parser.add_argument("--bootstrap-resamples", type=int_option(0), default=1000, metavar="N",
                        help="resamples of the paired bootstrap test and the CI of delta; 0 = skip it (default: 1000)")
    _add_resample_mode_option(parser, "the paired bootstrap")
    _add_test_options(parser)
    _add_confidence_option(parser)
    _add_workers_option(parser)
    parser.add_argument("--json", metavar="OUT", help="write {statistic: [{metric_a, metric_b, p_permutation, ...}]}")
    parser.set_defaults(func=run_compare)


def _register_bias(commands: Any) -> None:
    parser = commands.add_parser(
        "bias-matrix",
        help="tau+/tau- per pair of systems: where does the metric get the human order wrong?",
        description="Systems ordered by mean human score (best first). Cell (row a, column b): over same-document "
        "pairs where the humans prefer a to b, 2*acc-1 with acc the share the metric orders the same way (a tie "
        "counts wrong). Upper triangle: tau+ (humans agree with the overall order), lower: tau-. Empty when there "
        "are no such pairs.",
        formatter_class=help_formatter,
    )
    _add_grid_inputs(parser)
    parser.add_argument("--plot", metavar="OUT.png", help="circle plot: area = pair count, colour = tau (png/pdf/svg)")
    parser.add_argument("--json", metavar="OUT", help="write systems, mean human scores, tau and pair-count matrices")
    parser.set_defaults(func=run_bias_matrix)


TRUE_FORMAT_HELP = """\
--format true reads the TRUE benchmark files (Honovich et al. 2022) as published, once scored with
  learned-metrics score faithfulness --hypothesis-field generated_text ...
columns grounding, generated_text, label (1 = consistent) and the score column; the corpus is
the file name without a trailing _download, then without one trailing _valid/_dev/_test
(frank_valid_download.csv -> frank, summeval_download.csv -> summeval, qags_c.csv -> qags_c)."""


def _add_format_option(parser: Any) -> None:
    parser.add_argument("--format", choices=("rows", "true"), default="rows",
                        help="rows: any scored rows, the corpus from --group-field or the file name in a folder "
                        "(default); true: TRUE benchmark files, the corpus from the file name (see below)")


def _register_auc(commands: Any) -> None:
    parser = commands.add_parser(
        "auc",
        help="ROC AUC per corpus and their unweighted mean, with bootstrap CIs (faithfulness)",
        description="ROC AUC of scores against binary labels (1 = faithful/consistent) per group, their unweighted "
        "mean (TRUE-style), bootstrap CIs (rows redrawn within each group), and the intra-system AUC when a system "
        "field is given (systems whose rows have one class only are skipped and counted).",
        epilog="examples:\n  learned-metrics meta-eval auc --input examples/meta_eval/faithfulness.jsonl "
        "--group-field corpus --system-field system \\\n      --plot out/auc.png --roc-plot out/roc.png\n"
        "  learned-metrics meta-eval auc --format true --input examples/meta_eval/true_scored/nli_aug\n\n"
        f"{TRUE_FORMAT_HELP}",
        formatter_class=help_formatter,
    )
    parser.add_argument("--input", required=True, metavar="PATH",
                        help="scored rows (.jsonl/.csv/.parquet), or a folder with one such file per corpus")
    _add_format_option(parser)
    parser.add_argument("--score-field", default="score", metavar="F", help="score field (default: score)")
    parser.add_argument("--label-field", default="label", metavar="F", help="0/1 label field (default: label)")
    parser.add_argument("--group-field", metavar="F",
                        help="corpus/group field, e.g. corpus (default: the file name inside a folder, else one group)")
    parser.add_argument("--system-field", metavar="F", help="system field: adds intra-system AUC")
    add_resamples_and_seed(parser)
    parser.add_argument("--json", metavar="OUT", help="write per-group and mean AUCs with CIs")
    parser.add_argument("--plot", metavar="OUT.png",
                        help="score densities by label, one panel per group, class counts in the legend (png/pdf/svg)")
    parser.add_argument("--roc-plot", metavar="OUT.png",
                        help="ROC curves, one per group, AUC in the legend (png/pdf/svg)")
    parser.set_defaults(func=run_auc)


SHUFFLE_EPILOG = """\
input format: one row per scored text, for example the output of
`learned-metrics score coherence`:
  {"doc_id": "d1", "label": 1, "score": 0.93, "text": "..."}   original
  {"doc_id": "d1", "label": 0, "score": 0.41, "text": "..."}   its shuffle
Rows sharing --pair-field form one comparison set: exactly one original
(label 1) and one or more shuffled texts (label 0). Every (original,
shuffled) comparison counts; a tie counts 0.5. The CI redraws pair ids.

--length-gap: pair each original with the shuffled text of a *different*
document; accuracy is reported per bucket of the length difference
original - shuffled (characters from --length-field, else len(--text-field)),
buckets of 20 centred on multiples of 20 and clamped to +-200. Each bucket has
its own 95% CI from the same pair-id resamples; --plot draws them as bars
with the comparisons per bucket written under each point.
"""


def _register_shuffle(commands: Any) -> None:
    parser = commands.add_parser(
        "shuffle-test",
        help="accuracy that originals outscore their shuffled copies (coherence)",
        description="Shuffle test: how often a coherence measure scores an original text above a shuffled one.",
        epilog=SHUFFLE_EPILOG,
        formatter_class=help_formatter,
    )
    parser.add_argument("--input", required=True, metavar="FILE", help="scored rows (.jsonl/.csv)")
    parser.add_argument("--score-field", default="score", metavar="F", help="score field (default: score)")
    parser.add_argument(
        "--label-field", default="label", metavar="F", help="1 = original, 0 = shuffled (default: label)"
    )
    parser.add_argument("--pair-field", default="doc_id", metavar="F", help="comparison-set id field (default: doc_id)")
    parser.add_argument("--length-gap", action="store_true", help="add accuracy by length-gap bucket")
    parser.add_argument("--text-field", default="text", metavar="F", help="text whose length is used (default: text)")
    parser.add_argument("--length-field", metavar="F", help="numeric length field (characters), instead of the text")
    add_resamples_and_seed(parser)
    parser.add_argument("--json", metavar="OUT", help="write accuracy (and buckets) as JSON")
    parser.add_argument("--plot", metavar="OUT.png",
                        help="accuracy by length-gap bucket with CI bars and counts (needs --length-gap; png/pdf/svg)")
    parser.set_defaults(func=run_shuffle_test)


# --- helpers ---------------------------------------------------------------------------------


def _metric_names(args: argparse.Namespace) -> list[str] | None:
    """``--names a,b``: the metrics' display names, or None for the file stems."""
    return [n.strip() for n in args.names.split(",")] if args.names else None


def _parse_stats(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


OUTPUT_OPTIONS = (("json", "--json"), ("plot", "--plot"), ("roc_plot", "--roc-plot"), ("markdown", "--markdown"),
                  ("latex", "--latex"), ("csv", "--csv"), ("pairs_csv", "--pairs-csv"))
PLOT_OPTIONS = ("plot", "roc_plot")
INPUT_OPTIONS = ("human", "metric", "input", "metric_full")


def check_command_outputs(args: argparse.Namespace) -> None:
    """Every output of the command, checked before any work, so an error never follows a long computation."""
    from learned_metrics.meta_eval.plots import check_plot_path

    outputs = []
    for attr, option in OUTPUT_OPTIONS:
        path = getattr(args, attr, None)
        if path is None:
            continue
        if attr in PLOT_OPTIONS:
            check_plot_path(path)
        outputs.append(file_output(path, option))
    inputs = []
    for attr in INPUT_OPTIONS:
        value = getattr(args, attr, None)
        inputs += value if isinstance(value, list) else [value]
    check_outputs(outputs, inputs=inputs)


def write_outputs(args: argparse.Namespace, *, json_obj: Any, plot: Any = None, roc_plot: Any = None,
                   out: Any = None, texts: dict[str, str] | None = None) -> None:
    """Write ``--json``, the plots and the text tables (``--markdown``, ``--latex``, ``--csv``) as one staged set:
    all of them or none."""
    writers = {"json": lambda path: write_json(path, json_obj), "plot": plot, "roc_plot": roc_plot}
    for attr, text in (texts or {}).items():
        writers[attr] = lambda path, text=text: path.write_text(text, encoding="utf-8")
    wanted = [(attr, option) for attr, option in OUTPUT_OPTIONS if getattr(args, attr, None) and writers.get(attr)]
    with staged_files() as stage:
        for attr, _ in wanted:
            writers[attr](stage(getattr(args, attr)))
    if out is not None:
        for attr, option in wanted:
            if attr in PLOT_OPTIONS:
                out.print(f"{option.lstrip('-').replace('-', ' ')}: {getattr(args, attr)}")


def print_notes(out: Any, notes: list[str]) -> None:
    for note in notes:
        out.print(f"note: {note}")


def _load(args: argparse.Namespace, metric_paths: list[str], metric_fields: list[str], names: list[str] | None = None):
    from learned_metrics.meta_eval.data import KeyFields, load_grid

    return load_grid(
        args.human,
        metric_paths,
        human_field=args.human_field,
        metric_fields=metric_fields,
        keys=KeyFields(args.doc_field, args.system_field),
        human_format=args.human_format,
        on_missing=args.on_missing,
        names=names,
    )


# --- commands --------------------------------------------------------------------------------


def run_correlations(args: argparse.Namespace) -> int:
    from rich.table import Table

    from learned_metrics.meta_eval.correlations import check_options, correlations

    stats = _parse_stats(args.stats)
    check_options(args.coefficient, stats, args.resample)
    check_command_outputs(args)
    grid = _load(args, [args.metric], [args.metric_field])
    metric = next(iter(grid.metrics.values()))
    report = correlations(
        grid.human,
        metric,
        coefficient=args.coefficient,
        stats=stats,
        resamples=args.resamples,
        resample=args.resample,
        seed=args.seed,
        confidence=args.confidence,
        ci_method=args.ci_method,
    )
    out = console()
    print_notes(out, grid.notes)
    intervals = ("Fisher-z CIs" if args.ci_method == "fisher"
                 else f"{args.resamples} bootstrap resamples ({args.resample}), seed {args.seed}")
    table = Table(title=f"{len(grid.systems)} systems x {len(grid.docs)} documents · {args.coefficient} · {intervals}")
    for column in ("statistic", "value", f"{args.confidence:.0%} CI", "n", "skipped"):
        table.add_column(column, justify="left" if column == "statistic" else "right")
    for name, result in report.stats.items():
        table.add_row(name, fmt(result.value), fmt_ci(result.ci), str(result.n), str(result.skipped))
    out.print(table)
    dropped = {name: r.nan_resamples for name, r in report.stats.items() if r.nan_resamples}
    if dropped:
        out.print("undefined resamples dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))
    write_outputs(args, json_obj=report.to_json())
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from learned_metrics.meta_eval.correlations import check_options
    from learned_metrics.meta_eval.significance import compare

    stats = _parse_stats(args.stats)
    check_options(args.coefficient, stats)
    if len(args.metric) < 2:
        raise UserError("compare needs at least two --metric files")
    if args.permutations < 1:
        raise UserError(f"--permutations must be >= 1, got {args.permutations}")
    check_command_outputs(args)
    names = _metric_names(args)
    grid = _load(args, args.metric, args.metric_field or ["score"], names)
    report = compare(
        grid.human,
        grid.metrics,
        coefficient=args.coefficient,
        stats=stats,
        permutations=args.permutations,
        swap=args.swap,
        resamples=args.bootstrap_resamples,
        resample=args.resample,
        alternative=args.alternative,
        correction=args.correction,
        confidence=args.confidence,
        williams=args.williams,
        seed=args.seed,
        workers=args.workers,
    )
    out = console()
    print_notes(out, grid.notes)
    out.print(_comparison_table(report, args))
    if args.correction != "none":
        out.print(f"p-values {args.correction}-corrected over the {'ordered' if args.alternative == 'greater' else ''}"
                  f" pairs of each statistic; uncorrected ones are in --json")
    write_outputs(args, json_obj=report.to_json())
    return 0


def _comparison_table(report: Any, args: argparse.Namespace):
    from rich.table import Table

    two_sided = report.alternative == "two-sided"
    hypothesis = "A and B differ" if two_sided else "A correlates better than B"
    boot = f", paired bootstrap {args.bootstrap_resamples} ({args.resample})" if args.bootstrap_resamples else ""
    table = Table(title=f"H1: {hypothesis} · {args.coefficient} · {args.permutations} permutations "
                  f"(swap per {args.swap}){boot}, seed {args.seed}")
    ci_head = f"{report.confidence:.0%} CI delta"
    for column in ("statistic", "A", "B", "r(A)", "r(B)", "delta", ci_head, "p perm", "p boot", "p Williams"):
        table.add_column(column, justify="left" if column in ("statistic", "A", "B") else "right", no_wrap=True)
    for statistic, items in report.comparisons.items():
        for c in items[::2] if two_sided else items:  # 3 decimals: the widest table still fits 120 columns
            table.add_row(statistic, c.metric_a, c.metric_b, fmt(c.value_a, 3), fmt(c.value_b, 3), fmt(c.delta, 3),
                          format_ci(c.delta_ci), fmt_p(c.p("permutation")), fmt_p(c.p("bootstrap")),
                          fmt_p(c.p("williams")))
    return table


def run_bias_matrix(args: argparse.Namespace) -> int:
    from rich.table import Table

    from learned_metrics.meta_eval.bias import bias_matrix
    from learned_metrics.meta_eval.plots import plot_bias_matrix

    check_command_outputs(args)
    grid = _load(args, [args.metric], [args.metric_field])
    matrix = bias_matrix(grid.human, next(iter(grid.metrics.values())), grid.systems)
    width = max(80, 14 + 8 * (len(matrix.systems) + 1))
    out = console(width=width)
    print_notes(out, grid.notes)
    table = Table(title="bias matrix: 2*acc-1 (pairs); row = system the humans prefer; upper tau+, lower tau-")
    table.add_column("system (mean H)")
    for k in range(len(matrix.systems)):
        table.add_column(str(k + 1), justify="right")
    for a, name in enumerate(matrix.systems):
        cells = []
        for b in range(len(matrix.systems)):
            value = matrix.tau[a, b]
            cells.append("" if value != value else f"{value:+.2f}\n({matrix.pairs[a, b]})")
        table.add_row(f"{a + 1} {name} ({matrix.mean_human[a]:.2f})", *cells)
    out.print(table)
    write_outputs(args, json_obj=matrix.to_json(), plot=lambda path: plot_bias_matrix(matrix, path), out=out)
    return 0


def run_auc(args: argparse.Namespace) -> int:
    from rich.table import Table

    from learned_metrics.meta_eval.auc import auc_by_group
    from learned_metrics.meta_eval.data import read_scored_corpora
    from learned_metrics.meta_eval.plots import plot_roc_curves, plot_score_histograms

    check_command_outputs(args)
    scored = read_scored_corpora([args.input], score_fields=[args.score_field], label_field=args.label_field,
                                 group_field=args.group_field, system_field=args.system_field, fmt=args.format)
    rows = next(iter(scored.values()))
    report = auc_by_group(rows.scores, rows.labels, rows.groups, rows.systems, resamples=args.resamples, seed=args.seed)
    out = console()
    table = Table(title=f"ROC AUC · {args.resamples} bootstrap resamples, seed {args.seed}")
    columns = ["group", "AUC", "95% CI", "rows", "pos", "neg"]
    if rows.systems is not None:
        columns += ["intra-system", "systems", "skipped"]
    for column in columns:
        table.add_column(column, justify="left" if column == "group" else "right")
    for g in report.groups:
        cells = [g.group, fmt(g.auc.value), fmt_ci(g.auc.ci), str(g.auc.n), str(g.positives), str(g.negatives)]
        if g.intra_system is not None:
            cells += [fmt(g.intra_system.value), str(g.intra_system.n), str(g.intra_system.skipped)]
        table.add_row(*cells)
    mean_cells = ["mean (unweighted)", fmt(report.mean.value), fmt_ci(report.mean.ci), "", "", ""]
    if report.intra_system_mean is not None:
        mean_cells += [fmt(report.intra_system_mean.value), "", ""]
    table.add_row(*mean_cells, end_section=True)
    out.print(table)
    if report.mean.skipped:
        out.print(f"note: {report.mean.skipped} group(s) with a single class skipped (AUC undefined)")
    aucs = {g.group: g.auc.value for g in report.groups}
    write_outputs(
        args,
        json_obj=report.to_json(),
        plot=lambda path: plot_score_histograms(rows.scores, rows.labels, rows.groups, path, aucs),
        roc_plot=lambda path: plot_roc_curves(rows.scores, rows.labels, rows.groups, path, aucs),
        out=out,
    )
    return 0


def run_shuffle_test(args: argparse.Namespace) -> int:
    from rich.table import Table

    from learned_metrics.meta_eval.data import read_shuffle_rows
    from learned_metrics.meta_eval.plots import plot_length_gap
    from learned_metrics.meta_eval.shuffle_test import pairs_from_rows, shuffle_test

    if args.plot and not args.length_gap:
        raise UserError("--plot draws accuracy by length gap; add --length-gap")
    check_command_outputs(args)
    rows = read_shuffle_rows(
        args.input,
        score_field=args.score_field,
        label_field=args.label_field,
        pair_field=args.pair_field,
        text_field=args.text_field if args.length_gap and not args.length_field else None,
        length_field=args.length_field if args.length_gap else None,
    )
    pairs = pairs_from_rows(rows, args.input, pair_field=args.pair_field)
    report = shuffle_test(
        pairs.original,
        pairs.shuffled,
        pair_index=pairs.pair_index,
        length_gap=pairs.length_gap if args.length_gap else None,
        resamples=args.resamples,
        seed=args.seed,
    )
    out = console()
    table = Table(title=f"shuffle test · {args.resamples} bootstrap resamples of pair ids, seed {args.seed}")
    for column in ("accuracy", "95% CI", "comparisons", "ties", "pair ids"):
        table.add_column(column, justify="right")
    acc = report.accuracy
    table.add_row(fmt(acc.value), fmt_ci(acc.ci), str(acc.n), str(report.ties), str(report.pair_ids))
    out.print(table)
    if report.buckets is not None:
        buckets = Table(title="accuracy by length gap (original - shuffled, characters)")
        for column in ("gap", "range", "comparisons", "accuracy", "95% CI"):
            buckets.add_column(column, justify="right")
        for b in report.buckets:
            if b.pairs:
                low = "-inf" if b.low is None else str(b.low)
                high = "+inf" if b.high is None else str(b.high)
                ci = "—" if b.ci is None else f"[{b.ci[0]:.3f}, {b.ci[1]:.3f}]"
                buckets.add_row(f"{b.gap:+d}", f"[{low}, {high})", str(b.pairs), fmt(b.accuracy, 3), ci)
        out.print(buckets)
    write_outputs(args, json_obj=report.to_json(), plot=lambda path: plot_length_gap(report, path), out=out)
    return 0


REPORT_EPILOG = """example (the coherence paper's Table 4.3 layout: five metrics x five statistics):
  learned-metrics meta-eval report --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --metric examples/meta_eval/metric_weak.csv \\
      --names good,weak --latex table.tex --markdown table.md

A cell shows the value, its 95% bootstrap CI and, as superscript numbers, the metrics (by row number)
this one is significantly better than (one-sided permutation test as in compare, p < --alpha).

example (TRUE-style AUC table, one folder of scored TRUE files per metric):
  learned-metrics meta-eval report --auc --format true --metric examples/meta_eval/true_scored/nli_aug \\
      --metric examples/meta_eval/true_scored/nli_base --baseline nli_base --latex true_table.tex

""" + TRUE_FORMAT_HELP


def _register_report(commands: Any) -> None:
    parser = commands.add_parser(
        "report",
        help="the paper table: many metrics x statistics, CIs, best in bold, significance markers",
        description="One table for a paper: rows are metrics, columns the statistics, each cell the value with "
        "its bootstrap CI; the best per column in bold; per cell the metrics it beats significantly. Written to "
        "the terminal and, if asked, as Markdown, LaTeX (booktabs), CSV and JSON.",
        epilog=REPORT_EPILOG,
        formatter_class=help_formatter,
    )
    _add_grid_inputs(parser, many_metrics=True, human_required=False)
    _add_stat_options(parser)
    auc = parser.add_argument_group("AUC mode (TRUE-style: corpora as columns, no human file)")
    auc.add_argument("--auc", action="store_true",
                     help="rows = metrics, columns = corpora + their unweighted mean, ROC AUC against --label-field; "
                     "a --metric may be a folder of scored corpora (the corpus is the file name)")
    auc.add_argument("--label-field", default="label", metavar="F", help="0/1 label field (default: label)")
    auc.add_argument("--group-field", default=None, metavar="F",
                     help="corpus field (default: the file name inside a folder, else one group 'all')")
    _add_format_option(auc)
    auc.add_argument("--baseline", action="append", metavar="NAME",
                     help="mark significant improvements over this metric (repeatable; default: every other metric)")
    _add_bootstrap_options(parser)
    parser.add_argument("--permutations", type=int_option(1), default=1000,
                        help="permutations per pair of metrics (default: 1000)")
    _add_swap_option(parser)
    parser.add_argument("--alpha", type=fraction_option, default=0.05,
                        help="significance level of the markers (default: 0.05)")
    parser.add_argument("--test", choices=("permutation", "bootstrap", "williams"), default="permutation",
                        help="correlation table: the test behind the markers (default: permutation; the AUC table "
                        "always uses approximate randomization)")
    _add_test_options(parser)
    _add_confidence_option(parser)
    _add_ci_method_option(parser)
    _add_workers_option(parser)
    add_file_outputs(parser, {"--markdown": "the table as Markdown", "--latex": "the table as LaTeX (booktabs)",
                              "--csv": "the table as CSV", "--json": "the table and the tests as JSON"})
    parser.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from learned_metrics.meta_eval.correlations import check_options
    from learned_metrics.meta_eval.multiple import check_alpha
    from learned_metrics.meta_eval.report import correlation_report

    if args.auc:
        return _run_auc_report(args)
    if args.format != "rows":
        raise UserError(f"--format {args.format} reads labelled score files for the AUC table; add --auc")
    if not args.human:
        raise UserError("give --human FILE (or --auc for a table of ROC AUC per corpus)")
    stats = _parse_stats(args.stats)
    check_options(args.coefficient, stats, args.resample)
    check_alpha(args.alpha)
    check_command_outputs(args)
    names = _metric_names(args)
    grid = _load(args, args.metric, args.metric_field or ["score"], names)
    table = correlation_report(grid.human, grid.metrics, coefficient=args.coefficient, stats=stats,
                               resamples=args.resamples, resample=args.resample, permutations=args.permutations,
                               swap=args.swap, alpha=args.alpha, test=args.test, alternative=args.alternative,
                               correction=args.correction, confidence=args.confidence, ci_method=args.ci_method,
                               williams=args.williams, seed=args.seed, workers=args.workers)
    out = console()
    print_notes(out, grid.notes)
    out.print(_rich_report(table, f"{len(grid.systems)} systems x {len(grid.docs)} documents"))
    out.print(table.caption)
    write_report(args, out, table, table.to_json())
    return 0


def write_report(args: argparse.Namespace, out: Any, table, json_obj: dict) -> None:
    write_outputs(args, json_obj=json_obj, out=out,
                   texts={"markdown": table.to_markdown(), "latex": table.to_latex(), "csv": table.to_csv()})
    for attr in ("markdown", "latex", "csv", "json"):
        if getattr(args, attr, None):
            out.print(f"{attr}: {getattr(args, attr)}")


def _run_auc_report(args: argparse.Namespace) -> int:
    from learned_metrics.meta_eval.report import auc_report

    if args.human:
        raise UserError("--auc reads labelled score files; --human is for the correlation table")
    check_command_outputs(args)
    from learned_metrics.meta_eval.data import read_scored_corpora

    names = _metric_names(args)
    scored = read_scored_corpora(args.metric, names, score_fields=args.metric_field or ["score"],
                                 label_field=args.label_field, group_field=args.group_field, fmt=args.format)
    if args.test != "permutation" or args.ci_method != "bootstrap":
        raise UserError("the AUC table uses bootstrap CIs and approximate randomization; --test and --ci-method are "
                        "for the correlation table")
    table, tests = auc_report(scored, baselines=args.baseline, resamples=args.resamples,
                              permutations=args.permutations, alpha=args.alpha, alternative=args.alternative,
                              correction=args.correction, confidence=args.confidence, seed=args.seed)
    out = console()
    rows = len(next(iter(scored.values())).scores)
    out.print(_rich_report(table, f"ROC AUC · {rows:,} rows in {len(table.columns) - 1} corpora"))
    out.print(table.caption)
    write_report(args, out, table, {**table.to_json(), "tests": [t.to_json() for t in tests]})
    return 0


def _rich_report(table, title: str):
    from rich.table import Table
    from rich.text import Text

    rendered = Table(title=title, show_header=True)
    rendered.add_column("#", justify="right")
    rendered.add_column("metric")
    for column in table.columns:
        rendered.add_column(column, justify="right")
    for number, metric in enumerate(table.metrics, start=1):
        cells = []
        for column in table.columns:
            c = table.cell(metric, column)
            text = Text(fmt(c.value, 3), style="bold" if c.best else "")
            if c.beats:
                text.append("^" + ",".join(map(str, c.beats)), style="dim")
            if c.ci is not None:
                text.append(f"\n[{c.ci[0]:.3f}, {c.ci[1]:.3f}]", style="dim")
            cells.append(text)
        rendered.add_row(str(number), metric, *cells)
    return rendered


SYSTEM_LEVEL_EPILOG = """\
Why (Deutsch, Dror & Roth 2022): a metric scores the whole test set, not only the ~100 judged documents, and
the systems compared in practice are close. --metric-full gives the metric's system scores over every test
document (tau_sys_full; humans stay on the judged subset). Each --delta-band LO HI keeps the system pairs whose
metric system scores differ by LO <= |delta| < HI (metric units; from --metric-full when given; HI may be
inf) and reports their count, the agreement (share of pairs with a strict human order the metric orders the
same way) and tau, Kendall's tau-b over those pairs: (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)), P/Q the
concordant/discordant pairs, T_x/T_y the pairs tied in the metric only/in the humans only. CIs: bootstrap
over judged documents, full-set documents and systems (bands: the pairs stay fixed, documents are redrawn).

example:
  learned-metrics meta-eval system-level --human examples/meta_eval/human.jsonl \\
      --metric examples/meta_eval/metric_good.jsonl --metric-full examples/meta_eval/metric_good_full.jsonl \\
      --delta-band 0 0.1 --delta-band 0.1 0.3 --delta-band 0.3 inf
"""


def _register_system_level(commands: Any) -> None:
    parser = commands.add_parser(
        "system-level",
        help="realistic system-level correlation: metric over the full test set, pairs of close systems",
        description="System-level correlation as it is used in practice: the metric's system scores over the whole "
        "test set, and agreement with the humans on pairs of systems whose metric scores are close.",
        epilog=SYSTEM_LEVEL_EPILOG,
        formatter_class=help_formatter,
    )
    _add_grid_inputs(parser)
    parser.add_argument("--metric-full", metavar="FILE",
                        help="the metric's scores on every test document (same keys and --metric-field)")
    parser.add_argument("--delta-band", nargs=2, action="append", metavar=("LO", "HI"), type=float,
                        help="a band of |metric system-score difference|, LO <= |delta| < HI (repeatable)")
    parser.add_argument("--coefficient", choices=("kendall", "pearson", "spearman"), default="kendall",
                        help="correlation coefficient of tau_sys (default: kendall)")
    add_resamples_and_seed(parser)
    _add_confidence_option(parser)
    parser.add_argument("--json", metavar="OUT", help="write tau_sys, tau_sys_full and the bands as JSON")
    parser.add_argument("--markdown", metavar="OUT", help="also write the tables as Markdown")
    parser.set_defaults(func=run_system_level)


def run_system_level(args: argparse.Namespace) -> int:
    from rich.table import Table

    from learned_metrics.meta_eval.data import KeyFields, read_metric_scores
    from learned_metrics.meta_eval.system_level import check_bands, full_set_grid, realistic_system_level

    bands = check_bands(args.delta_band or [])
    check_command_outputs(args)
    grid = _load(args, [args.metric], [args.metric_field])
    notes = list(grid.notes)
    full = None
    if args.metric_full:
        cells = read_metric_scores(args.metric_full, args.metric_field, KeyFields(args.doc_field, args.system_field),
                                   on_missing=args.on_missing)
        full, full_notes = full_set_grid(cells, grid.systems)
        notes += cells.notes + full_notes
    report = realistic_system_level(grid.human, next(iter(grid.metrics.values())), full, bands=bands,
                                    coefficient=args.coefficient, resamples=args.resamples,
                                    confidence=args.confidence, seed=args.seed)
    out = console()
    print_notes(out, notes)
    level = f"{args.confidence:.0%} CI"
    docs = f"{report.judged_docs} judged" + (f", {report.full_docs} full-set" if report.full_docs else "")
    table = Table(title=f"{report.systems} systems · {docs} documents · {args.coefficient} · {args.resamples} "
                  f"resamples, seed {args.seed}")
    for column in ("statistic", "value", level, "n"):
        table.add_column(column, justify="left" if column == "statistic" else "right")
    table.add_row("tau_sys (judged subset)", fmt(report.tau_sys.value), fmt_ci(report.tau_sys.ci),
                  str(report.tau_sys.n))
    if report.tau_sys_full is not None:
        table.add_row("tau_sys_full (metric on full set)", fmt(report.tau_sys_full.value),
                      fmt_ci(report.tau_sys_full.ci), str(report.tau_sys_full.n))
    out.print(table)
    if report.bands:
        bands_table = Table(title="system pairs by |delta metric|")
        for column in ("|delta|", "pairs", "human ties", "agreement", level, "tau", level):
            bands_table.add_column(column, justify="right")
        for band in report.bands:
            bands_table.add_row(band.label(), str(band.pairs), str(band.human_ties), fmt(band.agreement.value),
                                fmt_ci(band.agreement.ci), fmt(band.tau.value), fmt_ci(band.tau.ci))
        out.print(bands_table)
    write_outputs(args, json_obj=report.to_json(), texts={"markdown": report.to_markdown()})
    for attr in ("markdown", "json"):
        if getattr(args, attr, None):
            out.print(f"{attr}: {getattr(args, attr)}")
    return 0
