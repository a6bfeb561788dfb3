"""The five statistics straight from their definitions, with scipy per group: the tests' reference.

Deliberately plain (loops, scipy per group), the way a reader would check a number by hand.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats as scipy_stats

SCIPY = {"kendall": scipy_stats.kendalltau, "pearson": scipy_stats.pearsonr, "spearman": scipy_stats.spearmanr}


def direct_corr(x: np.ndarray, y: np.ndarray, coefficient: str) -> float:
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return np.nan
    return float(SCIPY[coefficient](x, y).statistic)


def reference(human: np.ndarray, metric: np.ndarray, coefficient: str = "kendall") -> dict[str, float]:
    """All five statistics straight from their definitions (docs/meta_eval.md)."""
    n_docs, n_systems = human.shape
    ok = ~(np.isnan(human) | np.isnan(metric))
    human_means = np.array([human[ok[:, s], s].mean() for s in range(n_systems)])
    metric_means = np.array([metric[ok[:, s], s].mean() for s in range(n_systems)])
    per_doc = [direct_corr(metric[d, ok[d]], human[d, ok[d]], coefficient) for d in range(n_docs)]
    per_system = [direct_corr(metric[ok[:, s], s], human[ok[:, s], s], coefficient) for s in range(n_systems)]
    agree = strict = 0
    for d in range(n_docs):
        for i, j in itertools.combinations(np.flatnonzero(ok[d]), 2):
            human_sign = np.sign(human[d, i] - human[d, j])
            if human_sign:
                strict += 1
                agree += int(np.sign(metric[d, i] - metric[d, j]) == human_sign)
    return {
        "tau_sys": direct_corr(metric_means, human_means, coefficient),
        "tau_sum": direct_corr(metric[ok], human[ok], coefficient),
        "tau_pair": np.nan if np.all(np.isnan(per_doc)) else float(np.nanmean(per_doc)),
        "acc_pair": agree / strict if strict else np.nan,
        "tau_intra": np.nan if np.all(np.isnan(per_system)) else float(np.nanmean(per_system)),
    }
