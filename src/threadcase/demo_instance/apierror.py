"""The one error type the demo instance's routes raise: an HTTP status and a one-line message.

Answered n8n-style as ``{"code": status, "message": ...}``; the message names the field or id and
what would be valid, so a client author can fix the call from the message alone.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse
from pydantic import ValidationError

__all__ = ["ApiError", "error_response", "validation_message"]


class ApiError(Exception):
    """An HTTP error answer (4xx/5xx) with a clear message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(exc: ApiError) -> JSONResponse:
    """The answer to an :class:`ApiError`: ``{"code": status, "message": ...}`` with that status."""
    return JSONResponse({"code": exc.status, "message": exc.message}, status_code=exc.status)


def validation_message(exc: ValidationError, what: str) -> str:
    """One line naming the first bad field, the problem and the value (``invalid chat request: ...``)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(body)"
    shown = repr(first.get("input"))
    if len(shown) > 80:
        shown = shown[:77] + "..."
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return f"invalid {what}: {where}: {first['msg']} (got {shown}){more}"
