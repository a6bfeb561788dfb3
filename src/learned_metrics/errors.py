"""One error type for user mistakes.

Everything a user can fix (a missing field, an empty file, an unknown source)
raises :class:`UserError`. The CLI catches it once and prints a single line, so
users see what to fix instead of a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input or arguments, reported as one line."""

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
