"""The one error type the decoder and validators raise."""

from __future__ import annotations


class EventValidationError(ValueError):
    """An event (or a field of one) is not valid.

    ``code`` is a short machine-readable reason (it becomes the dead-letter reason),
    ``path`` points at the offending field, ``message`` says what is wrong in words.
    """

    def __init__(self, code: str, message: str, path: str = "") -> None:
        self.code = code
        self.path = path
        self.message = message
        where = f" at {path}" if path else ""
        super().__init__(f"{code}{where}: {message}")

    def at(self, prefix: str) -> EventValidationError:
        """The same error, with its path prefixed by the enclosing field."""
        sep = "" if self.path.startswith("[") else "."  # items[1].score, not items.[1].score
        path = f"{prefix}{sep}{self.path}" if self.path else prefix
        return EventValidationError(self.code, self.message, path)
