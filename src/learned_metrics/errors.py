"""One error type for user mistakes (:class:`UserError`, printed as one line by :mod:`learned_metrics.boundary`),
and the exception a stop signal becomes."""

from __future__ import annotations

import signal


class UserError(ValueError):
    """A problem with the user's input or arguments, reported as one line (a ``ValueError``, as callers expect)."""

    def __init__(self, message: str, *, path: object = None, row: int | None = None, field: str | None = None):
        self.path = None if path is None else str(path)
        self.row, self.field, self.detail = row, field, message
        where = [self.path, None if row is None else f"row {row}", None if field is None else f"field '{field}'"]
        prefix = ", ".join(part for part in where if part is not None)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class CommandInterrupted(BaseException):
    """SIGINT or SIGTERM, unwinding like ``KeyboardInterrupt`` (temporaries removed) past ``except Exception``."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(signal.Signals(self.signum).name)


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first non-empty line of an exception's message (else its type name), shortened: library errors run long."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cause_among(exc: BaseException, kinds: type | tuple[type, ...], *, hidden: bool = False) -> BaseException | None:
    """The first of ``exc`` and its causes that is one of ``kinds``: our error a library wrapped into its own
    (``raise X from err``), or, with ``hidden``, one its clean-up replaced (a suppressed context too)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kinds):
            return current
        seen.add(id(current))
        current = current.__cause__ or (None if current.__suppress_context__ and not hidden else current.__context__)
    return None
