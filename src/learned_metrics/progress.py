"""Progress for long work that suits where it is written: a bar in a terminal, plain lines in a log (SLURM,
``nohup``) every ``every_seconds``; rates in units read at a glance (``12.5 rows/min``, never ``0.0 rows/s``)."""

from __future__ import annotations

import sys
import time
from typing import IO


class StartUp:
    """Seconds of each phase before the first row is scored or the first optimizer step: one line, so a slow start
    is seen before anyone profiles. Light to import: ``train.py`` starts the clock before Hydra and Lightning."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._last = time.perf_counter()
        self.reported = False

    def lap(self, phase: str) -> None:
        """End ``phase`` now (a phase lapped twice adds up)."""
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now

    def line(self, note: str = "") -> str:
        parts = ", ".join(f"{name} {human_duration(seconds)}" for name, seconds in self.phases.items())
        return f"start-up {human_duration(sum(self.phases.values()))} ({parts}){note}"


def human_duration(seconds: float) -> str:
    """``4.2 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def human_rate(count: float, seconds: float, unit: str = "rows") -> str:
    """``count / seconds`` per second, minute, hour or day, the first that shows at least 1 (never ``0.0 rows/s``)."""
    per_second = count / max(seconds, 1e-9)
    for factor, per, digits in ((1, "s", 1), (60, "min", 1), (3600, "h", 2)):
        if per_second * factor >= 1 or count == 0:
            return f"{per_second * factor:,.{digits}f} {unit}/{per}"
    return f"{per_second * 86400:,.2f} {unit}/day"


class RowProgress:
    """Rows done out of ``total`` (None: unknown), a rich bar on a terminal or plain lines elsewhere; ``done`` rows
    of a resumed run count towards percent, not the rate or the ETA. A context manager; a disabled one is silent."""

    def __init__(self, total: int | None, *, label: str = "scoring", done: int = 0, enabled: bool = True,
                 every_seconds: float = 30.0, stream: IO[str] | None = None):
        self.total, self.label, self.enabled, self.every_seconds = total, label, enabled, every_seconds
        self.stream = stream if stream is not None else sys.stderr
        self.skip(done)
        self._started = self._last = 0.0
        self._bar = self._task = None

    def __enter__(self) -> RowProgress:
        self._started = self._last = time.monotonic()
        if self.enabled and getattr(self.stream, "isatty", lambda: False)():
            self._start_bar()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def skip(self, rows: int) -> None:
        """Rows an earlier, interrupted run finished: they count towards percent, not towards the rate."""
        self.resumed = rows
        self.done = float(rows)

    def advance(self, rows: float) -> None:
        self.done += rows
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            return
        now = time.monotonic()
        if now - self._last >= self.every_seconds:
            self._last = now
            print(self.line(now), file=self.stream, flush=True)

    def line(self, now: float | None = None) -> str:
        """``scoring: 1,200 / 5,000 rows (24%) · 40.1 rows/s · ETA 1 min 35 s · elapsed 30.0 s``."""
        elapsed = (now or time.monotonic()) - self._started
        total, done = self.total, self.done
        new = done - self.resumed
        shown = f" / {total:,} rows ({100 * min(done, total) / total:.0f}%)" if total else " rows"
        parts = [f"{self.label}: {done:,.0f}{shown}", human_rate(new, elapsed)]
        if total and new > 0:
            parts.append(f"ETA {human_duration(elapsed * max(0.0, total - done) / new)}")
        parts.append(f"elapsed {human_duration(elapsed)}")
        return " · ".join(parts)

    def _start_bar(self) -> None:
        from rich import progress as bars
        from rich.console import Console
        from rich.text import Text

        resumed = self.resumed

        class Rate(bars.ProgressColumn):
            """Rows per second (or minute, hour) over this process's own rows."""

            def render(self, task) -> Text:
                elapsed = task.elapsed or 0.0
                return Text(human_rate(task.completed - resumed, elapsed) if elapsed else "-",
                            style="progress.data.speed")

        columns = [bars.SpinnerColumn(), bars.TextColumn(self.label)]
        if self.total:
            columns += [bars.BarColumn(), bars.TaskProgressColumn(), bars.MofNCompleteColumn(), Rate(),
                        bars.TextColumn("ETA"), bars.TimeRemainingColumn()]
        else:
            columns += [bars.TextColumn("{task.completed:,.0f} rows"), Rate()]
        columns.append(bars.TimeElapsedColumn())
        self._bar = bars.Progress(*columns, console=Console(file=self.stream), transient=True)
        self._task = self._bar.add_task(self.label, total=self.total, completed=self.done)
        self._bar.start()
