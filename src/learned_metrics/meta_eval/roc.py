"""ROC curve points: pure statistics (arrays in, arrays out), below the AUC analysis and the ROC figure."""

from __future__ import annotations

import numpy as np

from learned_metrics.errors import UserError


def roc_points(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ROC curve (false-positive rate, true-positive rate) from (0, 0) to (1, 1), one point per distinct score, as
    ``sklearn.metrics.roc_curve(..., drop_intermediate=False)``: tied scores move both rates at once (a diagonal
    step), so the area under these points is exactly the tie-aware AUC."""
    from sklearn.metrics import roc_curve

    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    if len(np.unique(labels)) < 2:
        raise UserError("a ROC curve needs both labels")
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    return fpr, tpr
