"""A metric matrix whose shape differs from the human one is refused once, where the grids are read
(meta_eval/frames.py), with the same line naming the input for every matrix analysis."""

from __future__ import annotations

import numpy as np
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import bias_matrix, compare, correlations
from learned_metrics.meta_eval.system_level import realistic_system_level

HUMAN = np.random.default_rng(0).normal(size=(6, 4))

ANALYSES = {
    "correlations": lambda metric: correlations(HUMAN, metric, resamples=0),
    "bias_matrix": lambda metric: bias_matrix(HUMAN, metric),
    "system_level": lambda metric: realistic_system_level(HUMAN, metric, resamples=0),
    "compare": lambda metric: compare(HUMAN, {"ok": HUMAN + 1, "metric": metric}, resamples=0, permutations=2,
                                      workers=1),
}


@pytest.mark.parametrize("name", list(ANALYSES))
def test_a_metric_of_another_shape_is_refused_naming_the_input(name):
    with pytest.raises(UserError, match=r"^metric: shape \(6, 3\) differs from the human matrix \(6, 4\)$"):
        ANALYSES[name](HUMAN[:, :3])
    ANALYSES[name](HUMAN * 2 + 0.1 * np.arange(24).reshape(6, 4))  # control: the same shape is accepted
