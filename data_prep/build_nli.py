"""Build an NLI training set (with phrase-augmented copies) from any NLI data, for the faithfulness metric.

Usage::

    python data_prep/build_nli.py --source my_nli.csv --output data/my_nli
    python data_prep/build_nli.py --source mine=data/nli --source anli=hf:facebook/anli --cap anli=20000 \\
        --output data/mix
    python data_prep/build_nli.py --source rte.jsonl --premise-field sentence1 --hypothesis-field sentence2 \\
        --label-order entailment,not_entailment --two-class neutral --output data/rte
    python data_prep/build_nli.py --source my_nli.csv --output data/my_nli_only --no-augment

The output folder holds a ``datasets.DatasetDict`` (train/validation, test when any) and ``report.json``; see
``learned_metrics.data.nli`` and docs/nli_data.md.
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_nli.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import nli_script

    sys.exit(nli_script())
