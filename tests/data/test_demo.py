"""Rule: the demo builders refuse a user's mistake as a UserError (one line naming the option and what it accepts).

``build_nli_demo_set`` is what ``experiment=nli_demo`` runs through its ``data.builder`` config, so a wrong
``data.builder.source`` is a user's mistake like any other option; before, it was a ValueError (a traceback).
Control: the accepted value builds the set.
"""

from __future__ import annotations

import pytest

from learned_metrics.data.demo import build_nli_demo_set
from learned_metrics.errors import UserError

SIZES = {"train": 4, "dev": 2, "test": 2}


def test_an_unknown_demo_source_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match=r"source.*'hub'.*generated") as caught:
        build_nli_demo_set(tmp_path / "out", sizes=SIZES, source="hub")
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()


def test_control_the_generated_source_builds(tmp_path):
    report = build_nli_demo_set(tmp_path / "out", sizes=SIZES, source="generated")
    assert report["splits"]["train"]["original"] == 3 * SIZES["train"]
