"""Build the coherence shuffle set (originals vs. distinct sentence shuffles): ``learned-metrics prep shuffle-set``.

``--help`` lists every option with examples; the work is in ``learned_metrics.data.shuffle_set``.
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_shuffle_set.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import shuffle_set_script

    sys.exit(shuffle_set_script())
