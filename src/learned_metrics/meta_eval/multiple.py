"""Multiple-comparison correction of p-values: Bonferroni (as Deutsch et al. 2021) and Holm's step-down, uniformly
more powerful with the same family-wise guarantee. ``None`` entries (undefined tests) stay out of the family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from learned_metrics.meta_eval.options import check
from learned_metrics.meta_eval.resampling import none_if_nan


def adjust_p_values(p_values: Sequence[float | None], method: str = "holm") -> list[float | None]:
    """Adjusted p-values, comparable with alpha directly: Bonferroni multiplies by the family size m; Holm the i-th
    smallest by (m - i), kept monotone (as ``statsmodels.stats.multitest.multipletests(..., method="holm")``)."""
    check(correction=method)
    adjusted = [none_if_nan(p) for p in p_values]
    defined = [i for i, p in enumerate(adjusted) if p is not None]
    m = len(defined)
    if method == "none" or m == 0:
        return adjusted
    values = np.array([p_values[i] for i in defined], dtype=np.float64)
    if method == "bonferroni":
        out = np.minimum(values * m, 1.0)
    else:
        order = np.argsort(values, kind="stable")
        out = np.empty(m)
        out[order] = np.minimum(np.maximum.accumulate(values[order] * (m - np.arange(m))), 1.0)
    for i, value in zip(defined, out, strict=True):
        adjusted[i] = float(value)
    return adjusted
