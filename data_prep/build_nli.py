"""Build an NLI training set (with phrase-augmented copies) from any NLI data: ``learned-metrics prep nli`` as a script.

``--help`` lists every option with examples; the work is in ``learned_metrics.data.nli`` (docs/nli_data.md).
"""

import sys

from learned_metrics.boundary import exit_on_stop_signals

if __name__ == "__main__":
    exit_on_stop_signals("build_nli.py")  # first: Ctrl-C while importing is one line
    from learned_metrics.cli.prep import nli_script

    sys.exit(nli_script())
