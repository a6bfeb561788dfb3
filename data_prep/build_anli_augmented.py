"""Build phrase-augmented ANLI for the faithfulness NLI metric: ``learned-metrics prep anli`` as a script.

``--help`` lists every option with examples; the work is in ``learned_metrics.data.anli`` (docs/nli_data.md).
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_anli_augmented.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import anli_script

    sys.exit(anli_script())
