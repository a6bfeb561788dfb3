"""What a scored file says at a glance: the mean score, and per ``--system-field`` value its mean with a percentile
bootstrap CI (1,000 seeded resamples: the same file gives the same interval, drawn in blocks to bound memory)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.validate import key

RESAMPLES = 1000
CONFIDENCE = 0.95
_DRAWS_PER_BLOCK = 1 << 22  # resampled indices held at once


@dataclass
class GroupSummary:
    """Mean score of one system (or of all rows) with its bootstrap CI; the CI is None for fewer than 2 rows."""

    name: str
    rows: int
    mean: float
    ci_low: float | None
    ci_high: float | None

    ci = property(lambda self: None if self.ci_low is None else (self.ci_low, self.ci_high))

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "mean": self.mean, "ci": [self.ci_low, self.ci_high]}


@dataclass
class ScoreSummary:
    """The end-of-run summary written by ``--summary FILE``."""

    overall: GroupSummary
    systems: list[GroupSummary] = field(default_factory=list)
    system_field: str | None = None
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**self.overall.to_json(), "system_field": self.system_field,
                "systems": [{"system": s.name, **s.to_json()} for s in self.systems],
                "bootstrap": {"confidence": CONFIDENCE, "resamples": RESAMPLES, "seed": self.seed,
                              "method": "percentile"}}


def mean_ci(values: np.ndarray, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
            rng: np.random.Generator | None = None) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of the mean of ``values``; (None, None) when there are fewer than 2 values."""
    n = len(values)
    if n < 2:
        return None, None
    rng = rng if rng is not None else np.random.default_rng(0)
    block = max(1, _DRAWS_PER_BLOCK // n)
    means = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = 50.0 * (1.0 - confidence)
    low, high = np.percentile(means, (tail, 100.0 - tail))  # scores are finite: so is every mean
    return float(low), float(high)


class ScoreCollector:
    """Scores of a run as they are produced, grouped by system when a system field is named."""

    def __init__(self, system_field: str | None = None):
        self.system_field = system_field
        self.scores = array("d")
        self.by_system: dict[str, array] = {}

    def systems_of(self, chunk: Sequence[tuple[int, dict[str, Any]]], path: object) -> list[str] | None:
        """Every row's system id, checked before the chunk is scored (a bad row costs no model time)."""
        if self.system_field is None:
            return None
        systems = []
        for number, row in chunk:
            if self.system_field not in row:
                raise UserError(f"missing field '{self.system_field}' (--system-field; fields present: "
                                f"{', '.join(map(str, row))})", path=path, row=number)
            # the key rule of every reader: 1, 1.0 and "1" are one system (1.0 was a system of its own)
            systems.append(key(row[self.system_field], path=path, row=number, field=self.system_field))
        return systems

    def add(self, scores: Iterable[float], systems: Sequence[str] | None) -> None:
        scores = [float(s) for s in scores]
        self.scores.extend(scores)
        if systems is None:
            return
        for system, score in zip(systems, scores, strict=True):
            self.by_system.setdefault(system, array("d")).append(score)

    def summary(self, *, seed: int = 0) -> ScoreSummary:
        rng = np.random.default_rng(seed)
        overall = self._group("all", np.frombuffer(self.scores, dtype=np.float64), rng)
        systems = [self._group(name, np.frombuffer(values, dtype=np.float64), rng)
                   for name, values in self.by_system.items()]
        systems.sort(key=lambda s: (-s.mean if math.isfinite(s.mean) else math.inf, s.name))
        return ScoreSummary(overall, systems, self.system_field, seed=seed)

    @staticmethod
    def _group(name: str, values: np.ndarray, rng: np.random.Generator) -> GroupSummary:
        mean = float(values.mean()) if len(values) else math.nan
        low, high = mean_ci(values, rng=rng)
        return GroupSummary(name, len(values), mean, low, high)
