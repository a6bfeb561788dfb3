"""``learned-metrics meta-eval confounders``: does a metric (or the human label) follow length, overlap, "I think"?"""

from __future__ import annotations

import argparse

from learned_metrics import validate
from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import ConfoundersCommand, ConfounderSettings

SETTINGS = ConfoundersCommand

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
--proxy-field F adds a numeric field as a proxy (e.g. the position of the first error); rows where it is missing
are left out of its correlations and counted.

Each cell: Kendall tau-b of the score column with the proxy and its 95% percentile bootstrap CI (rows redrawn). The
human row is --human-field (default: label). --by-label repeats the table within label 1 and label 0 rows, so a
proxy that only predicts the label does not look like a confounder. Williams (two or more metrics): one-sided p
that metric A depends less on the proxy than B, i.e. |tau(B, proxy)| > |tau(A, proxy)|, with tau(A, B) as the third
correlation (signs aligned with the two absolute values).

examples:
  learned-metrics meta-eval confounders --input examples/meta_eval/confounders.jsonl \\
      --metric-field score_nli --metric-field score_overlap --names nli,overlap \\
      --proxy-field first_error --by-label --markdown confounders.md
  learned-metrics meta-eval confounders --input scored_coherence.jsonl --generation-field text \\
      --human-field expert    # no grounding: overlap is not computed
"""

COMMAND = common.Command(
    "confounders", help="correlate metric scores and human labels with text proxies (length, overlap, first "
    "person, ...)", description="Why does a metric work? Kendall tau-b (with bootstrap CIs and p-values) of every "
    "metric and of the human label with simple text proxies, optionally within each label class, and Williams' "
    "tests for 'metric A depends less on the proxy than metric B'.", epilog=EPILOG,
    inputs=(common.input_flag("--input", "scored rows (.jsonl/.csv/.parquet), e.g. the output of `learned-metrics "
                              "score`"),
            common.flag("--no-human", action="store_true", help="the rows have no human label/score"),
            common.flag("--proxy-field", action="append", default=[], metavar="F",
                        help="a numeric field used as a proxy, e.g. first_error (repeatable)"),
            common.flag("--by-label", action="store_true", help="also within label 1 and label 0 rows")),
    outputs=dict(json="the result and the settings as JSON", markdown="the tables as Markdown",
                 latex="the tables as LaTeX (booktabs)", csv="the correlations as CSV (long format)"))


def run(args: argparse.Namespace, s: ConfoundersCommand) -> int:
    from learned_metrics.meta_eval.confounders import ConfounderFields, analyse, check_proxy_names, read_confounder_rows

    generation = s.generation_field or ("generated_text" if s.format == "true" else "generation")
    args.generation_field = generation  # the --json settings block names the field read, not its default (None)
    fields = ConfounderFields(metrics=tuple(common.score_fields(s)), generation=generation,
                              names=validate.ordered(s.names, "--names") if s.names else None,
                              human=None if args.no_human else s.human_field, grounding=s.grounding_field or None,
                              proxy_fields=tuple(args.proxy_field), label=s.label_field)
    proxies = None if s.proxies is None else list(validate.ordered(s.proxies, "--proxies"))
    fields.metric_names()
    check_proxy_names(proxies, fields.proxy_fields)
    data = read_confounder_rows(args.input, fields, proxies=proxies, by_label=args.by_label, splitter=s.splitter,
                                first_person=s.first_person)
    report = analyse(data, settings=s.narrow(ConfounderSettings))
    return common.finish(args, report, notes=report.notes)
