"""Rule: a ``--seed`` the scorer accepts names its own stream of MC dropout masks on every mask source, and a seed no
source can take is refused in one line before anything is scored.

torch's CPU generator keeps only the low 32 bits of a seed (``manual_seed(0)`` and ``manual_seed(2**32)`` draw the
same numbers) and raises a ValueError past 2**64 - 1. So under ``--mc-masks torch`` seed 4294967296 gave exactly the
scores of seed 0 (two "independent" seeds, the same masks, exit 0, provenance naming different seeds), and seed
2**64 was a traceback after the model had loaded. Seeds are 0 .. 2**32 - 1 wherever one is given (the option, a
per-call ``score(seed=)``); the controls: the largest accepted seed scores, and differs from seed 0.
"""

from __future__ import annotations

import numpy as np
import pytest

import learned_metrics
from hostile.hostile_tools import PAIRS, assert_refused, cli
from learned_metrics.errors import UserError

LARGEST = 2**32 - 1
GROUNDINGS = [row["grounding"] for row in PAIRS]
GENERATIONS = [row["generation"] for row in PAIRS]


def _scores(model, seed, masks="torch"):
    scorer = learned_metrics.load_scorer(model, mc_samples=3, mc_masks=masks, seed=seed)
    return scorer.score(GROUNDINGS, GENERATIONS).scores


@pytest.mark.parametrize("seed", [2**32, 2**64 - 1, 2**64, 10**30])
def test_a_seed_past_the_range_is_refused_by_load_scorer(tiny_deberta_nli, seed):
    with pytest.raises(UserError, match=r"seed") as caught:
        _scores(tiny_deberta_nli, seed)
    assert "\n" not in str(caught.value) and str(LARGEST) in str(caught.value)


@pytest.mark.parametrize("seed", [2**32, 2**64])
def test_a_per_call_seed_past_the_range_is_refused(tiny_deberta_nli, seed):
    scorer = learned_metrics.load_scorer(tiny_deberta_nli, mc_samples=3, mc_masks="torch")
    with pytest.raises(UserError, match=r"seed") as caught:
        scorer.score(GROUNDINGS, GENERATIONS, seed=seed)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("seed", [str(2**32), str(2**64)])
def test_the_command_refuses_a_seed_past_the_range_in_one_line(tiny_deberta_nli, pairs_file, tmp_path, capsys, seed):
    output = tmp_path / "scored.jsonl"
    result = cli(capsys, "score", "faithfulness", "--model", tiny_deberta_nli, "--input", pairs_file, "--output",
                 output, "--mc-samples", "2", "--mc-masks", "torch", "--seed", seed, "--no-progress")
    assert_refused(result, "--seed", str(LARGEST))
    assert not output.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_control_the_largest_seed_scores_with_its_own_masks(tiny_deberta_nli):
    for masks in ("torch", "per-row"):
        zero, largest = _scores(tiny_deberta_nli, 0, masks), _scores(tiny_deberta_nli, LARGEST, masks)
        assert np.isfinite(largest).all() and not np.array_equal(zero, largest), masks


def test_control_the_command_takes_the_largest_seed(tiny_deberta_nli, pairs_file, tmp_path, capsys):
    output = tmp_path / "scored.jsonl"
    result = cli(capsys, "score", "faithfulness", "--model", tiny_deberta_nli, "--input", pairs_file, "--output",
                 output, "--mc-samples", "2", "--mc-masks", "torch", "--seed", str(LARGEST), "--no-progress")
    assert result.code == 0, result.err[-2000:]
    assert output.exists()
