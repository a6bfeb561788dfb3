"""``learned-metrics meta-eval shuffle-test``: how often a coherence measure scores an original above its shuffle."""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import ShuffleTestCommand, ShuffleTestSettings

SETTINGS = ShuffleTestCommand

EPILOG = """\
input format: one row per scored text, for example the output of `learned-metrics score coherence`:
  {"doc_id": "d1", "label": 1, "score": 0.93, "text": "..."}   original
  {"doc_id": "d1", "label": 0, "score": 0.41, "text": "..."}   its shuffle
Rows sharing --pair-field form one comparison set: exactly one original (label 1) and one or more shuffled texts
(label 0). Every (original, shuffled) comparison counts; a tie counts 0.5. The CI redraws pair ids.

--length-gap: pair each original with the shuffled text of a *different* document; accuracy is reported per bucket
of the length difference original - shuffled (characters from --length-field, else len(--text-field)), buckets of
20 centred on multiples of 20 and clamped to +-200. A bucket with fewer than --min-bucket-pairs comparisons
(default 30) is merged with its smaller neighbour until every bucket has that many; the table, JSON and plot show
the merged ranges. Each bucket has its own 95% CI from the same pair-id resamples; --plot draws them as bars, the x
ticks naming each bucket's range and the comparisons per bucket written under each point.
"""

COMMAND = common.Command(
    "shuffle-test", help="accuracy that originals outscore their shuffled copies (coherence)",
    description="Shuffle test: how often a coherence measure scores an original text above a shuffled one.",
    epilog=EPILOG, inputs=(common.input_flag("--input", "scored rows (.jsonl/.csv/.parquet)"),
                           common.flag("--length-gap", action="store_true", help="add accuracy by length-gap bucket")),
    outputs=dict(json="accuracy (and buckets) as JSON, with the settings", markdown="the tables as Markdown",
                 latex="the tables as LaTeX (booktabs)", csv="the accuracy as CSV",
                 plot="accuracy by length-gap bucket with CI bars and counts (needs --length-gap; png/pdf/svg)"))


def run(args: argparse.Namespace, s: ShuffleTestCommand) -> int:
    from learned_metrics.meta_eval.data import read_shuffle_rows
    from learned_metrics.meta_eval.shuffle_test import pairs_from_rows, shuffle_test
    from learned_metrics.render.figures import plot_length_gap

    common.require(not args.plot or args.length_gap, "--plot draws accuracy by length gap; add --length-gap")
    rows = read_shuffle_rows(args.input, score_field=s.score_field, label_field=s.label_field, pair_field=s.pair_field,
                             text_field=s.text_field if args.length_gap and not s.length_field else None,
                             length_field=s.length_field if args.length_gap else None)
    pairs = pairs_from_rows(rows, args.input, pair_field=s.pair_field)
    report = shuffle_test(pairs.original, pairs.shuffled, pair_index=pairs.pair_index, length_gap=pairs.length_gap,
                          settings=s.narrow(ShuffleTestSettings))  # length_gap: None unless --length-gap read lengths
    return common.finish(args, report, plots={"plot": lambda path: plot_length_gap(report, path)})
