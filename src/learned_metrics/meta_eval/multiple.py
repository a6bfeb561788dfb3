"""Multiple-comparison correction of p-values: Bonferroni (as Deutsch et al. 2021) and Holm's step-down, uniformly
more powerful with the same family-wise guarantee. ``None`` entries (undefined tests) stay out of the family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from learned_metrics.meta_eval.options import check
from learned_metrics.meta_eval.resampling import none_if_nan


def resolution_note(family: int, permutations: int, correction: str, alpha: float) -> str:
    """Say so when no test can be significant ('' otherwise): a permutation p is at least 1/(k+1), and Bonferroni
    and Holm multiply the smallest p by the family size m, so k must exceed m/alpha."""
    m = 1 if correction == "none" else family
    if family == 0 or m / (1 + permutations) < alpha:
        return ""
    needed = int(np.ceil(10 * m / alpha / 1000)) * 1000
    return (f"no pair can be significant: with {permutations} permutations a p-value is at least "
            f"{1 / (1 + permutations):.1e}, and the {correction} correction over {m} tests needs p < "
            f"{alpha / m:.1e}; rerun with --permutations {needed} or more")


def resolution_sentence(family: int, permutations: int, correction: str, alpha: float, label: str = "Note") -> str:
    """:func:`resolution_note` as a caption's closing sentence (' Note: ....'), '' when a marker can appear."""
    note = resolution_note(family, permutations, correction, alpha)
    return f" {label}: {note}." if note else ""


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
        stepped = np.maximum.accumulate(values[order] * (m - np.arange(m)))
        out = np.empty(m)
        out[order] = np.minimum(stepped, 1.0)
    for i, value in zip(defined, out, strict=True):
        adjusted[i] = float(value)
    return adjusted
