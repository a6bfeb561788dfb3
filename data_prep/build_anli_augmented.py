"""Build phrase-augmented ANLI for the faithfulness NLI metric.

Usage::

    python data_prep/build_anli_augmented.py --source anli --output data/anli_aug
    python data_prep/build_anli_augmented.py --source jsonl:anli_v1.0 --output data/anli_aug
    python data_prep/build_anli_augmented.py --source anli --output data/anli_statements --phrases statements
    python data_prep/build_anli_augmented.py --source anli --output data/anli_append --position append
    python data_prep/build_anli_augmented.py --source anli --output data/anli_subset5 --phrase-subset 5 --seed 1
    python data_prep/build_anli_augmented.py --source anli --output data/anli_only --no-augment

The output folder holds a ``datasets.DatasetDict`` (train/validation/test) and
``report.json``; see ``learned_metrics.data.anli`` and docs/nli_data.md.
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_anli_augmented.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import anli_script

    sys.exit(anli_script())
