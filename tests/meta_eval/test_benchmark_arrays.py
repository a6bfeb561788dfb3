"""benchmark()'s array inputs: labels that are not a non-empty 1-D 0/1 array are one UserError, never a TypeError."""

import numpy as np
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.benchmark import benchmark


@pytest.mark.parametrize("labels", [np.int64(1), np.array(1), 1, np.zeros((2, 2)), [], [0, 2]])
def test_labels_that_are_not_a_1d_0_1_array_are_refused_in_one_line(labels):
    with pytest.raises(UserError, match="labels must be a non-empty 1-D array of 0/1"):
        benchmark({"m": [0.2, 0.8]}, labels, ["d", "d"], threshold_protocol="fixed", resamples=0)


def test_control_a_1d_0_1_array_is_judged():
    report = benchmark({"m": [0.2, 0.8]}, np.array([0, 1]), ["d", "d"], threshold_protocol="fixed", resamples=0)
    assert report.results["m"].datasets[0].stats["bacc"].value == 1.0
