"""Kendall tau-b, Pearson and Spearman for weighted items, batched over groups and resamples: :class:`FixedGroups`
when the values are fixed and the weights vary, :func:`rowwise_correlation` when the values change per resample.
A correlation is undefined (NaN) when either side is constant among the items with weight."""

from __future__ import annotations

import numpy as np

from learned_metrics.meta_eval.kendall import (
    SignProducts,
    TieClasses,
    rowwise_midranks,
    rowwise_sign_sums,
    tau_b_from_sums,
)

# Above this many items per group, tau-b's m**2 sign products cost more than scipy's O(m log m)
# merge sort on the expanded resample (measured crossover near 3,000 items on 2 cores).
LARGE_GROUP = 3000
# A single weighting (a point estimate) of a group above this size: one scipy sort beats building m**2 signs.
POINT_BY_SORT = 256
_ROWWISE_ENTRIES = 4_000_000


def weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson r over the last axis with frequency weights (two-pass, so no cancellation)."""
    total = weights.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx, dy = (v - ((weights * v).sum(axis=-1) / total)[..., None] for v in (x, y))
        var_x, var_y = (weights * dx * dx).sum(axis=-1), (weights * dy * dy).sum(axis=-1)
        r = (weights * dx * dy).sum(axis=-1) / np.sqrt(var_x * var_y)
    return np.clip(r, -1.0, 1.0)


class FixedGroups:
    """One grouping of cells (per document, per system, or all pooled) with fixed (G, m) values ``x`` (metric) and
    ``y`` (human); absent items carry weight 0. What depends only on the values is computed once, here."""

    def __init__(self, x: np.ndarray, y: np.ndarray, coefficient: str, *, correlation: bool = True,
                 accuracy: bool = False):
        self.x, self.y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        self.coefficient = coefficient
        self.ties_x, self.ties_y = TieClasses.of(self.x), TieClasses.of(self.y)
        self.large = self.x.shape[1] > LARGE_GROUP
        needs_signs = accuracy or (correlation and coefficient == "kendall" and not self.large)
        self.signs = SignProducts(self.x, self.y) if needs_signs else None
        self.strict_signs = SignProducts(self.x, self.y, strict=True) if accuracy else None
        # Centering once keeps the Pearson moments accurate; r is shift-invariant.
        self.x_centered = self.x - self.x.mean(axis=1, keepdims=True)
        self.y_centered = self.y - self.y.mean(axis=1, keepdims=True)

    def correlation(self, weights: np.ndarray) -> np.ndarray:
        """Per-group correlation for (R, G, m) weights: (R, G), NaN where undefined."""
        untied_x, untied_y = self.ties_x.untied_pairs(weights), self.ties_y.untied_pairs(weights)
        defined = (untied_x > 0) & (untied_y > 0)
        if self.coefficient == "kendall" and (self.large or (len(weights) == 1 and self.x.shape[1] > POINT_BY_SORT)):
            r = self._tau_b_by_expansion(weights)
        elif self.coefficient == "kendall":
            return tau_b_from_sums(self.signs.quadratic(weights), untied_x, untied_y)
        elif self.coefficient == "pearson":
            r = weighted_pearson(self.x_centered, self.y_centered, weights)
        else:
            r = weighted_pearson(self.ties_x.midranks(weights), self.ties_y.midranks(weights), weights)
        return np.where(defined, r, np.nan)

    def _tau_b_by_expansion(self, weights: np.ndarray) -> np.ndarray:
        """Large groups: repeat each item by its weight and let scipy's O(m log m) tau-b count."""
        from scipy import stats as scipy_stats  # imported here: scipy.stats costs ~1 s at CLI start-up

        # scipy's tau-b without its NaN/axis-policy wrapper, which doubles the O(m log m) count (no NaN here)
        kendalltau = getattr(scipy_stats.kendalltau, "__wrapped__", scipy_stats.kendalltau)
        out = np.full(weights.shape[:2], np.nan)
        counts = weights.astype(np.int64)
        for r, g in np.ndindex(*out.shape):
            x = np.repeat(self.x[g], counts[r, g])
            if x.size > 1:
                out[r, g] = kendalltau(x, np.repeat(self.y[g], counts[r, g])).statistic
        return out

    def pair_agreement(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group: (pairs ordered like the human, pairs with a strict human order, all pairs), unordered pairs of
        distinct (expanded) items; a metric tie on a strictly ordered human pair counts as wrong."""
        total = weights.sum(axis=-1)
        # Ordered pairs agreeing: sign product +1, i.e. (product + |product|) / 2.
        agreeing = (self.signs.quadratic(weights) + self.strict_signs.quadratic(weights)) / 2
        return agreeing / 2, self.ties_y.untied_pairs(weights) / 2, total * (total - 1) / 2


def _snap(values: np.ndarray) -> np.ndarray:
    """Round per-resample values to 12 significant digits of the row's largest magnitude: means equal in exact
    arithmetic can differ in the last bit by summation order; rounding keeps them tied, as a direct computation."""
    scale = np.nanmax(np.abs(values), axis=-1, keepdims=True, initial=0.0)
    scale = np.where(scale > 0, scale, 1.0)
    quantum = 10.0 ** (np.floor(np.log10(scale)) - 11)
    return np.round(values / quantum) * quantum


def rowwise_correlation(x: np.ndarray, y: np.ndarray, weights: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlation per resample when values differ per resample: (R, m) each -> (R,), NaN where undefined."""
    rows = max(1, _ROWWISE_ENTRIES // max(1, x.shape[1] ** 2))  # pair arrays are rows * m**2: a few million entries
    parts = [_rowwise_block(x[i : i + rows], y[i : i + rows], weights[i : i + rows], coefficient)
             for i in range(0, x.shape[0], rows)]
    return np.concatenate(parts) if parts else np.empty(0)


def _rowwise_block(x: np.ndarray, y: np.ndarray, weights: np.ndarray, coefficient: str) -> np.ndarray:
    x, y = _snap(np.where(weights > 0, x, 0.0)), _snap(np.where(weights > 0, y, 0.0))
    sums = rowwise_sign_sums(x, y, weights)
    defined = (sums["untied_x"] > 0) & (sums["untied_y"] > 0)
    if coefficient == "kendall":
        return tau_b_from_sums(sums["concordance"], sums["untied_x"], sums["untied_y"])
    if coefficient == "pearson":
        r = weighted_pearson(x, y, weights)
    else:
        r = weighted_pearson(rowwise_midranks(x, weights), rowwise_midranks(y, weights), weights)
    return np.where(defined, r, np.nan)
