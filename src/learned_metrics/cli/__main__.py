"""``python -m learned_metrics.cli`` (what ``accelerate launch -m learned_metrics.cli score ...`` runs)."""

import sys

from learned_metrics.cli import main

sys.exit(main())
