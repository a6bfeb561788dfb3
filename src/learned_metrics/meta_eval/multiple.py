"""Multiple-comparison correction of p-values (Bonferroni, Holm step-down).

Comparing many metric (or system) pairs at one level alpha inflates the
family-wise error rate; Deutsch et al. (2021) correct their significance
figures with Bonferroni, and Holm's step-down is uniformly more powerful
with the same guarantee. ``None`` entries (undefined tests) are left out of
the family and stay ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from learned_metrics.meta_eval.options import check


def adjust_p_values(p_values: Sequence[float | None], method: str = "holm") -> list[float | None]:
    """Adjusted p-values, comparable with alpha directly: reject where adjusted p < alpha.

    Bonferroni multiplies by the family size m; Holm multiplies the i-th smallest by (m - i) and keeps the
    sequence monotone (equal to ``statsmodels.stats.multitest.multipletests(..., method="holm")``).
    """
    check(correction=method)
    defined = [i for i, p in enumerate(p_values) if p is not None and not np.isnan(p)]
    adjusted: list[float | None] = [None if p is None or np.isnan(p) else float(p) for p in p_values]
    m = len(defined)
    if method == "none" or m == 0:
        return adjusted
    values = np.array([p_values[i] for i in defined], dtype=np.float64)
    if method == "bonferroni":
        out = np.minimum(values * m, 1.0)
    else:
        order = np.argsort(values, kind="stable")
        stepped = np.maximum.accumulate(values[order] * (m - np.arange(m)))
        out = np.empty(m)
        out[order] = np.minimum(stepped, 1.0)
    for i, value in zip(defined, out, strict=True):
        adjusted[i] = float(value)
    return adjusted
