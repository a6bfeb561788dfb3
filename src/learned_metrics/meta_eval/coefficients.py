"""Kendall tau-b, Pearson and Spearman for weighted items, batched over groups and resamples: a resample (or a
permutation's 0/1 choice) is an integer weight per item, so tau-b's concordance sum is a quadratic form ``w^T A w``
per group, exact in float32 below 2**24. :class:`FixedGroups` for fixed values, :func:`rowwise_correlation` for values
that change per resample; a correlation is undefined (NaN) when either side is constant among the weighted items."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

_FLOAT32_EXACT = 2**24
_CACHE_BYTES = 256 * 2**20  # sign matrices up to this size are built once and kept, larger ones in column blocks
_BLOCK_BYTES = 32 * 2**20
LARGE_GROUP = 3000  # items per group above which scipy's sort of the expanded resample beats m**2 signs (2 cores)
POINT_BY_SORT = 256  # a single weighting (a point estimate) of a larger group: one scipy sort beats m**2 signs
_ROWWISE_ENTRIES = 4_000_000


@dataclass(frozen=True)
class TieClasses:
    """Which items of each group share a value; classes of a group are numbered in increasing value order, so
    cumulative class weights give (weighted) mid-ranks and squared class weights the tau-b tie correction."""

    class_of_item: np.ndarray  # (G, m) global class index of each item ((n,) for ragged groups)
    group_starts: np.ndarray  # (G,) index of each group's first class
    class_group: np.ndarray  # (K,) group of each class
    indicator: sparse.csr_matrix  # (G*m, K) item -> class

    @classmethod
    def of(cls, values: np.ndarray) -> TieClasses:
        """Tie classes of each row of a (G, m) array of finite values."""
        n_groups, m = values.shape
        ties = cls.ragged(values.ravel(), np.repeat(np.arange(n_groups), m), n_groups)
        return replace(ties, class_of_item=ties.class_of_item.reshape(n_groups, m))

    @classmethod
    def ragged(cls, values: np.ndarray, group_ids: np.ndarray, n_groups: int) -> TieClasses:
        """Tie classes of finite ``values`` in ``n_groups`` groups of any size (``group_ids``: each item's group); a
        group without items gets an empty range of classes at the end."""
        order = np.lexsort((values, group_ids))
        g_sorted, v_sorted = group_ids[order], values[order]
        new_class = np.ones(len(order), dtype=bool)
        new_class[1:] = (g_sorted[1:] != g_sorted[:-1]) | (v_sorted[1:] != v_sorted[:-1])
        class_sorted = np.cumsum(new_class) - 1
        class_of_item = np.empty(len(order), dtype=np.int64)
        class_of_item[order] = class_sorted
        class_group = np.zeros(int(class_sorted[-1]) + 1 if len(order) else 0, dtype=np.int64)
        class_group[class_sorted] = g_sorted
        from scipy import sparse  # imported here, not at CLI start-up

        indicator = sparse.csr_matrix((np.ones(len(order)), (np.arange(len(order)), class_of_item)),
                                      shape=(len(order), len(class_group)))
        return cls(class_of_item, np.searchsorted(class_group, np.arange(n_groups)), class_group, indicator)

    def totals(self, weights: np.ndarray) -> np.ndarray:
        """Total weight of every class: (R, G, m) weights -> (R, K)."""
        return np.asarray(self.indicator.T @ weights.reshape(weights.shape[0], -1).T).T

    def untied_pairs(self, weights: np.ndarray) -> np.ndarray:
        """Ordered pairs of (expanded) items with different values, per resample and group: (R, G)."""
        within = np.add.reduceat(self.totals(weights) ** 2, self.group_starts, axis=1)
        return weights.sum(axis=-1) ** 2 - within

    def midranks(self, weights: np.ndarray) -> np.ndarray:
        """Average rank of every item in its group's expanded data, as scipy's ``rankdata`` gives: (R, G, m)."""
        class_weights = self.totals(weights)
        before_class = np.cumsum(class_weights, axis=1) - class_weights
        below = before_class - before_class[:, self.group_starts][:, self.class_group]
        return (below + (class_weights + 1) / 2)[:, self.class_of_item]


class SignProducts:
    """Quadratic forms ``sum_ij w_i w_j A_ij`` over fixed per-group sign matrices: ``A = sign(dx) * sign(dy)`` gives
    the tau-b numerator; ``strict=True`` takes ``|A|``, the pairs strictly ordered by both (pair accuracy)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, *, strict: bool = False):
        self.x, self.y, self.strict = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), strict
        n_groups, m = self.x.shape
        self._cached: dict[type, np.ndarray] = {}
        self._cacheable = n_groups * m * m * 4 <= _CACHE_BYTES
        self._block_cols = max(1, _BLOCK_BYTES // max(1, n_groups * m * 8))

    def _block(self, cols: slice, dtype: type) -> np.ndarray:
        x, y = self.x, self.y
        product = np.sign(x[:, :, None] - x[:, None, cols]) * np.sign(y[:, :, None] - y[:, None, cols])
        return (np.abs(product) if self.strict else product).astype(dtype)

    def _blocks(self, dtype: type) -> Iterator[tuple[slice, np.ndarray]]:
        m = self.x.shape[1]
        if self._cacheable:
            if dtype not in self._cached:
                self._cached[dtype] = self._block(slice(0, m), dtype)
            yield slice(0, m), self._cached[dtype]
            return
        for start in range(0, m, self._block_cols):
            cols = slice(start, min(m, start + self._block_cols))
            yield cols, self._block(cols, dtype)

    def quadratic(self, weights: np.ndarray) -> np.ndarray:
        """``sum_ij w_i w_j A_ij`` for (R, G, m) integer weights: (R, G), exact."""
        largest_total = float(weights.sum(axis=-1).max(initial=0.0))
        dtype = np.float32 if largest_total**2 < _FLOAT32_EXACT else np.float64
        by_group = np.ascontiguousarray(weights.transpose(1, 0, 2), dtype=dtype)  # (G, R, m)
        total = np.zeros(by_group.shape[:2])
        for cols, block in self._blocks(dtype):
            partial = np.matmul(by_group, block)  # (G, R, b)
            total += np.einsum("grb,grb->gr", partial, by_group[:, :, cols], dtype=np.float64)
        return total.T


def tau_b_from_sums(concordance: np.ndarray, untied_x: np.ndarray, untied_y: np.ndarray) -> np.ndarray:
    """tau-b = (C - D) / sqrt(untied_x * untied_y); NaN where a side is constant (undefined)."""
    denominator = untied_x * untied_y
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, np.clip(concordance / np.sqrt(denominator), -1.0, 1.0), np.nan)


def rowwise_midranks(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mid-ranks of per-resample values: (R, m) -> (R, m)."""
    below = np.einsum("rj,rij->ri", weights, (x[:, None, :] < x[:, :, None]).astype(np.float64))
    equal = np.einsum("rj,rij->ri", weights, (x[:, None, :] == x[:, :, None]).astype(np.float64))
    return below + (equal + 1) / 2


def kendall_tau_b(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Kendall tau-b of two vectors (integer ``weights`` repeat items); NaN when undefined. One pair of vectors is
    ``scipy.stats.kendalltau``; the batched kernels above are for thousands of resamples at once."""
    from scipy.stats import kendalltau

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if weights is not None:
        counts = np.asarray(weights).astype(np.int64)
        x, y = np.repeat(x, counts), np.repeat(y, counts)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(kendalltau(x, y).statistic)


def weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson r over the last axis with frequency weights (two-pass, so no cancellation; each side's deviations
    divided by their largest magnitude, so squares of scores beyond 1e154 or below 1e-154 neither overflow nor
    underflow: r is scale-invariant)."""
    total = weights.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx, dy = (_unit_scale(v - ((weights * v).sum(axis=-1) / total)[..., None], weights) for v in (x, y))
        var_x, var_y = (weights * dx * dx).sum(axis=-1), (weights * dy * dy).sum(axis=-1)
        return np.clip((weights * dx * dy).sum(axis=-1) / np.sqrt(var_x * var_y), -1.0, 1.0)


def _unit_scale(deviations: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Deviations divided by the largest one among the weighted items (rows without one left as they are)."""
    largest = np.max(np.where(weights > 0, np.abs(deviations), 0.0), axis=-1, keepdims=True, initial=0.0)
    return deviations / np.where((largest > 0) & np.isfinite(largest), largest, 1.0)


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
        if self.coefficient == "kendall" and (self.large or (len(weights) == 1 and self.x.shape[1] > POINT_BY_SORT)):
            r = self._tau_b_by_expansion(weights)
        elif self.coefficient == "kendall":
            return tau_b_from_sums(self.signs.quadratic(weights), untied_x, untied_y)
        elif self.coefficient == "pearson":
            r = weighted_pearson(self.x_centered, self.y_centered, weights)
        else:
            r = weighted_pearson(self.ties_x.midranks(weights), self.ties_y.midranks(weights), weights)
        return np.where((untied_x > 0) & (untied_y > 0), r, np.nan)

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
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        snapped = np.round(values / quantum) * quantum
    return np.where(quantum > 0, snapped, values)  # below 1e-312 the quantum underflows: values as they are


def rowwise_correlation(x: np.ndarray, y: np.ndarray, weights: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlation per resample when values differ per resample: (R, m) each -> (R,), NaN where undefined."""
    rows = max(1, _ROWWISE_ENTRIES // max(1, x.shape[1] ** 2))  # pair arrays are rows * m**2: a few million entries
    parts = [_rowwise_block(x[i : i + rows], y[i : i + rows], weights[i : i + rows], coefficient)
             for i in range(0, x.shape[0], rows)]
    return np.concatenate(parts) if parts else np.empty(0)


def _rowwise_block(x: np.ndarray, y: np.ndarray, weights: np.ndarray, coefficient: str) -> np.ndarray:
    """Weighted ordered-pair sums of (R, m) values that change per resample (per-system means); cost R * m**2, fine
    for the few systems of a data set."""
    x, y = _snap(np.where(weights > 0, x, 0.0)), _snap(np.where(weights > 0, y, 0.0))
    sx, sy = np.sign(x[:, :, None] - x[:, None, :]), np.sign(y[:, :, None] - y[:, None, :])
    pair_weights = weights[:, :, None] * weights[:, None, :]
    untied_x, untied_y = (np.einsum("rij,rij->r", pair_weights, np.abs(signs)) for signs in (sx, sy))
    if coefficient == "kendall":
        return tau_b_from_sums(np.einsum("rij,rij->r", pair_weights, sx * sy), untied_x, untied_y)
    if coefficient == "spearman":  # Pearson's r of the weighted mid-ranks
        x, y = rowwise_midranks(x, weights), rowwise_midranks(y, weights)
    return np.where((untied_x > 0) & (untied_y > 0), weighted_pearson(x, y, weights), np.nan)
