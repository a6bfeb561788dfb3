"""One error type for user mistakes, and the exception a stop signal becomes.

Everything a user can fix (a missing field, an empty file, an unknown source)
raises :class:`UserError`. The error boundary (:mod:`learned_metrics.boundary`)
catches it once per command and prints a single line, so users see what to fix
instead of a traceback.
"""

from __future__ import annotations

import signal


class UserError(ValueError):
    """A problem with the user's input or arguments, reported as one line.

    A ``ValueError`` subclass: the Python API raises it with the message the CLI prints, and code that catches
    ``ValueError`` around our functions keeps working.
    """

    def __init__(self, message: str, *, path: object = None, row: int | None = None, field: str | None = None):
        self.path = None if path is None else str(path)
        self.row = row
        self.field = field
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail


class CommandInterrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds like ``KeyboardInterrupt`` so every ``finally`` removes its temp files.

    A ``BaseException`` (not ``Exception``) so that libraries' ``except Exception`` blocks
    (``datasets`` wraps generator errors, Lightning re-raises) let it through.
    """

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(signal.Signals(self.signum).name)

    @property
    def exit_code(self) -> int:
        """The shell convention: 128 + signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first non-empty line of an exception message (its type name when there is none), shortened.

    Library errors are often many lines long, or empty; a one-line report needs one line that says something.
    """
    for line in str(exc).splitlines():
        if line.strip():
            text = line.strip()
            return text if len(text) <= limit else text[: limit - 3] + "..."
    return type(exc).__name__
