"""Where a training run's start-up goes: one line after the first optimizer step, as ``learned-metrics score``
prints its own, so a slow start is seen (and which part of it) before anyone profiles.

Kept free of heavy imports: ``train.py`` starts the clock before Hydra and Lightning are imported.
"""

from __future__ import annotations

import time


class StartUp:
    """Seconds of each phase before the first optimizer step, in the order they ended."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._last = time.perf_counter()
        self.reported = False

    def lap(self, phase: str) -> None:
        """End ``phase`` now (a phase lapped twice adds up)."""
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now

    def line(self) -> str:
        from learned_metrics.progress import human_duration

        parts = ", ".join(f"{name} {human_duration(seconds)}" for name, seconds in self.phases.items())
        return f"start-up {human_duration(sum(self.phases.values()))} ({parts})"
