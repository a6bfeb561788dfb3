"""The length-gap bucket grid of the shuffle test: pure statistics (arrays in, arrays out), below the shuffle
test and its figure."""

from __future__ import annotations

import numpy as np

BUCKET_WIDTH = 20
BUCKET_LIMIT = 200
BUCKET_CENTRES = np.arange(-BUCKET_LIMIT, BUCKET_LIMIT + 1, BUCKET_WIDTH)


def gap_buckets(gaps: np.ndarray) -> np.ndarray:
    """Bucket centre of each length gap: multiples of 20, [c-10, c+10), clamped to +-200."""
    clamped = np.clip(gaps, -BUCKET_LIMIT, BUCKET_LIMIT)
    return (BUCKET_WIDTH * np.floor(clamped / BUCKET_WIDTH + 0.5)).astype(int)
