"""``learned-metrics meta-eval systems``: which system is better, and is the difference real?"""

from __future__ import annotations

import argparse

from learned_metrics.cli.meta_eval import common
from learned_metrics.meta_eval.options import SystemsCommand, SystemsSettings

SETTINGS = SystemsCommand

EPILOG = """\
input: .jsonl, .csv or .parquet rows, one per (document, system), with a document key, a system key and a
score, e.g. {"doc_id": "d000", "system_id": "M00", "score": -0.93}. Several --input files are concatenated
(one scored file per system is fine); a (document, system) pair given twice is an error naming both rows.
Pairing needs a document key shared by the systems: the output of `learned-metrics score ...` keeps every
input field, so keep an id column in the file you score and name it with --doc-field; a file without one
is refused with one line (paired tests cannot be run without knowing which outputs belong together).

per system: mean over the documents it scored, 95% percentile bootstrap CI (documents redrawn).
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

COMMAND = common.Command(
    "systems", help="rank systems by a metric's scores; paired bootstrap/permutation/t tests between them",
    description="Compare systems scored on the same documents, with any metric: mean score per system with a "
    "bootstrap CI, and paired significance tests between systems (as comet-compare for MT).", epilog=EPILOG,
    inputs=(common.input_flag("--input", "scored rows (.jsonl/.csv/.parquet); repeat to concatenate several files",
                              many=True),),
    outputs=dict(json="everything as JSON, with the settings", markdown="both tables as Markdown",
                 latex="both tables as LaTeX (booktabs)", csv="the ranking as CSV",
                 pairs_csv="the pairwise tests as CSV"))


def run(args: argparse.Namespace, settings: SystemsCommand) -> int:
    from learned_metrics.meta_eval.data import KeyFields
    from learned_metrics.meta_eval.systems import compare_systems, read_system_scores

    scores = read_system_scores(args.input, settings.score_field, KeyFields(settings.doc_field, settings.system_field),
                                on_missing=settings.on_missing)
    result = compare_systems(scores, baseline=settings.baseline, settings=settings.narrow(SystemsSettings))
    return common.finish(args, result, notes=result.notes, csv={"csv": "systems", "pairs_csv": "pairs"})
