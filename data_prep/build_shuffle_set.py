"""Build the coherence shuffle set (originals vs. distinct sentence shuffles).

    python data_prep/build_shuffle_set.py --source cnn_dailymail --output data/ccl_cnndm
    python data_prep/build_shuffle_set.py --source txtdir:/path/to/wsj --output data/ccl_wsj --shuffles-per-doc 20

See ``--help`` for every option; the logic lives in ``learned_metrics.data.shuffle_set``.
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_shuffle_set.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import shuffle_set_script

    sys.exit(shuffle_set_script())
