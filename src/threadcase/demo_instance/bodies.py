"""Request bodies the demo instance will read: bounded in size, and JSON or a one-line 400.

- :class:`BodyLimit` (ASGI middleware) answers **413** to a body over ``DemoSettings.max_body_bytes``
  (16 MiB by default, n8n's own ``N8N_PAYLOAD_SIZE_MAX``): at once when ``Content-Length`` says so,
  without reading it; for a chunked body, as soon as the bytes received pass the limit.
- :func:`decode_json` turns a body into JSON or answers **400** with one line saying what is wrong —
  not UTF-8, not JSON, nested deeper than :data:`MAX_DEPTH`, a number Python will not read (over 4,300
  digits), ``NaN``/``Infinity``, or a lone surrogate escape (``"\\udfff"``, which could not be stored as
  text) — never the parser's exception text, never a 500.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect

from threadcase.demo_instance.apierror import ApiError

__all__ = ["MAX_DEPTH", "BodyLimit", "decode_json", "size_text"]

MAX_DEPTH = 128
"""Deepest nesting of arrays and objects a body may have (a workflow's parameters nest a dozen deep)."""

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DRAIN_LIMIT = 256 * 2**20
"""Most of a refused body read (and dropped) so the client hears the 413; past it the connection closes."""


def size_text(size: int) -> str:
    """``16 MiB``, ``4 KiB``, ``900 bytes``."""
    for unit, name in ((2**20, "MiB"), (2**10, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


class BodyLimit:
    """Pure ASGI middleware: a body over ``limit`` bytes is answered 413 and never read whole."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await self._guarded(scope, receive, send)
        except ClientDisconnect:
            # The client went away before its body arrived (a harness exiting at its third Ctrl-C): there is
            # no one to answer, and nothing went wrong here worth a traceback in the server's log.
            return

    async def _guarded(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        length: int | None = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None
                break
        if length is not None:
            if length > self.limit:
                await self._refuse(receive, send, size=0)
                return
            # The server delivers exactly Content-Length bytes: nothing to count.
            await self.app(scope, receive, send)
            return
        # Chunked: read it here, counting, and hand the app what fitted.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._refuse(receive, send, size=size, more=bool(message.get("more_body", False)))
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return dict(await receive())
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, receive: Any, send: Any, *, size: int, more: bool = True) -> None:
        # The body is read and dropped (never kept) before the answer: a client that sends its whole
        # body before reading, as most do, would otherwise meet a closed connection instead of the 413.
        # Up to a bound: past it the connection is closed, and such a client learns nothing.
        while more and size <= _DRAIN_LIMIT:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
        message = (
            f"request body too large: the demo instance reads at most {size_text(self.limit)} "
            "(THREADCASE_DEMO_MAX_BODY_BYTES)"
        )
        payload = json.dumps({"code": 413, "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                # The rest of the body is never read, so the connection cannot be used again.
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def decode_json(raw: bytes, what: str) -> Any:
    """``raw`` as JSON (an empty body is ``{}``); anything else is an :class:`ApiError` 400 in one line."""
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"invalid {what}: the body is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"invalid {what}: the body is not JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:
        raise ApiError(400, f"invalid {what}: the body is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        why = "NaN and Infinity are not JSON numbers" if "JSON number" in str(exc) else "a number is over 4300 digits"
        raise ApiError(400, f"invalid {what}: {why}") from None
    if (text.count("[") + text.count("{")) > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise ApiError(400, f"invalid {what}: the body is nested deeper than {MAX_DEPTH} levels")
    if ("\\ud" in text or "\\uD" in text) and _has_lone_surrogate(data):
        raise ApiError(400, f"invalid {what}: a string holds a lone surrogate escape (\\uD800-\\uDFFF)")
    return data


def _depth(data: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            deepest = max(deepest, depth)
            stack.extend((inner, depth + 1) for inner in value.values())
        elif isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((inner, depth + 1) for inner in value)
    return deepest


def _has_lone_surrogate(data: Any) -> bool:
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value):
            return True
    return False
