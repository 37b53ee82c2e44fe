"""One write per loop iteration per connection: uvicorn's HTTP protocol with coalesced sends.

uvicorn writes a response's head and its body with two ``transport.write`` calls, and each write is
its own send on the socket (TCP_NODELAY), so a client on another core wakes for the head, then again
for the body; a burst of event-stream frames goes out one segment each. Writes made in the same
iteration of the event loop are collected here and go out together at the end of it, as one send: a
small answer is one segment, as n8n's (Express) answers are.

uvicorn is asyncio's by construction (its protocols are ``asyncio.Protocol``s on an asyncio
transport), so this layer uses the loop's ``call_soon`` directly: anyio has no protocol layer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["CoalescingHttpToolsProtocol"]


class _CoalescingTransport:
    """A transport whose writes within one loop iteration reach the socket as one write."""

    __slots__ = ("_inner", "_loop", "_pending")

    def __init__(self, inner: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._inner.is_closing():
            self._inner.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        # Everything else (is_closing, get_extra_info, pause_reading, abort, ...) is the real transport's.
        return getattr(self._inner, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a :class:`_CoalescingTransport` (pass as ``uvicorn.Config(http=...)``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
