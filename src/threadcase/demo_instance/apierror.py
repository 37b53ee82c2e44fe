"""The one error type the demo instance's routes raise: an HTTP status and a one-line message.

Answered n8n-style as ``{"code": status, "message": ...}``; the message names the field or id and
what would be valid, so a client author can fix the call from the message alone.
"""

from __future__ import annotations

__all__ = ["ApiError"]


class ApiError(Exception):
    """An HTTP error answer (4xx/5xx) with a clear message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
