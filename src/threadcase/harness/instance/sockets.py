"""A lean network layer under httpx for plain-HTTP instances.

httpx's default transport reaches sockets through httpcore's anyio backend, which wraps every read
and write in a cancel scope and anyio's stream machinery. At fifty concurrent cases on two cores that
bookkeeping is a fifth of the harness's CPU (bench/concurrency.py), so for ``http://`` instances the
client's connection pool runs on this backend instead: non-blocking sockets, a write that completes
without suspending when the kernel takes the bytes (on loopback it always does), a read that only
waits when nothing has arrived yet, and the readiness waits of anyio itself. httpx stays the client:
requests, responses, timeouts and exception mapping are its own. TLS is not handled here: ``https://``
instances keep httpx's default transport.
"""

from __future__ import annotations

import math
import os
import re
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import anyio
import anyio.lowlevel
import httpcore
import httpx

__all__ = ["SocketBackend", "SocketStream", "plain_http_transport"]

# httpcore's option tuples, as its backend interface declares them.
_SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


_YIELD_EVERY = 16
"""Reads served straight from the socket buffer before one trip through the event loop."""

_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*([0-9]+)", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding:[^\r\n]*chunked", re.IGNORECASE)


def _announces_body(buffer: bytes) -> bool:
    """Whether ``buffer`` is a complete request head after which a body must follow."""
    if not buffer.endswith(b"\r\n\r\n") or buffer[:1] not in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        return False
    length = _CONTENT_LENGTH.search(buffer)
    if length is not None:
        return int(length.group(1)) > 0
    return _CHUNKED.search(buffer) is not None


class SocketStream(httpcore.AsyncNetworkStream):
    """One connected non-blocking TCP socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._head = b""
        """A request head whose body is still to come: held so both leave in one send."""
        self._reads_without_yield = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109 - httpcore's interface
        if self._head:
            await self.write(b"", timeout)  # never wait for an answer to a request not fully sent
        if self._reads_without_yield >= _YIELD_EVERY:
            # A peer that sends faster than we read would otherwise keep every read on the fast path
            # below and this task would hold the loop: no other case, deadline or Ctrl-C would run.
            self._reads_without_yield = 0
            await anyio.lowlevel.checkpoint()
        try:
            # Most reads follow a wait the pool already did, or data that is already buffered.
            data = self._sock.recv(max_bytes)
            self._reads_without_yield += 1
            return data
        except BlockingIOError:
            self._reads_without_yield = 0
        except OSError as exc:
            raise httpcore.ReadError(f"{type(exc).__name__}: {exc}") from exc
        try:
            with anyio.fail_after(timeout):
                while True:
                    await anyio.wait_readable(self._sock)
                    try:
                        return self._sock.recv(max_bytes)
                    except BlockingIOError:
                        continue
        except TimeoutError as exc:
            raise httpcore.ReadTimeout("timed out waiting for the instance's answer") from exc
        except (OSError, anyio.ClosedResourceError, anyio.BusyResourceError) as exc:
            raise httpcore.ReadError(f"{type(exc).__name__}: {exc}") from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109 - httpcore's interface
        # httpcore writes a request's head and its body separately; on loopback every send is the
        # kernel delivering a segment and waking the server, so a head announcing a body waits for it.
        if self._head:
            buffer, self._head = self._head + buffer, b""
        elif _announces_body(buffer):
            self._head = bytes(buffer)
            return
        view = memoryview(buffer)
        deadline: float | None = None  # one deadline for the whole write, set only if it has to wait
        try:
            while view:
                try:
                    sent = self._sock.send(view)
                except BlockingIOError:
                    if deadline is None and timeout is not None:
                        deadline = anyio.current_time() + timeout
                    with anyio.fail_at(deadline if deadline is not None else math.inf):
                        await anyio.wait_writable(self._sock)
                    continue
                view = view[sent:]
        except TimeoutError as exc:
            raise httpcore.WriteTimeout("timed out sending to the instance") from exc
        except (OSError, anyio.ClosedResourceError, anyio.BusyResourceError) as exc:
            raise httpcore.WriteError(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        if self._sock.fileno() != -1:
            # Wakes a task still waiting on this socket (it gets ClosedResourceError) before the fd goes.
            anyio.notify_closing(self._sock)
            self._sock.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        # Only reachable through an HTTPS proxy tunnel, which plain_http_transport never builds.
        raise httpcore.ConnectError("TLS is not supported on the plain-HTTP socket backend")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle keep-alive connection with something to read has been closed (or broken) by the
            # server: one non-blocking peek answers that without a poll object per connection.
            try:
                self._sock.recv(1, socket.MSG_PEEK)
            except BlockingIOError:
                return False
            except OSError:
                return True
            return True
        if info == "socket":
            return self._sock
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        return None


class SocketBackend(httpcore.AsyncNetworkBackend):
    """Connects non-blocking TCP sockets (every address the name resolves to, in order)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        errors: list[str] = []
        try:
            with anyio.fail_after(timeout):
                for family, kind, proto, _name, address in await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM):
                    try:
                        # Inside the try: a family the kernel lacks (IPv6 disabled, ::1 still listed
                        # for localhost) is one failed address, and the next one is tried.
                        sock = socket.socket(family, kind, proto)
                    except OSError as exc:
                        errors.append(f"{address[0]}:{address[1]}: {exc.strerror or exc}")
                        continue
                    try:
                        sock.setblocking(False)
                        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        for option in socket_options or ():
                            sock.setsockopt(*option)
                        if local_address is not None:
                            sock.bind((local_address, 0))
                        await _connect(sock, address)
                    except OSError as exc:
                        sock.close()
                        errors.append(f"{address[0]}:{address[1]}: {exc.strerror or exc}")
                        continue
                    except BaseException:
                        sock.close()
                        raise
                    return SocketStream(sock)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:  # name resolution
            raise httpcore.ConnectError(f"{host}:{port}: {exc.strerror or exc}") from exc
        raise httpcore.ConnectError("; ".join(errors) or f"{host}:{port}: no address")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not supported on the plain-HTTP socket backend")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


async def _connect(sock: socket.socket, address: Any) -> None:
    try:
        sock.connect(address)
    except BlockingIOError:
        await anyio.wait_writable(sock)
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise OSError(error, os.strerror(error)) from None


def plain_http_transport(limits: httpx.Limits, verify: ssl.SSLContext) -> httpx.AsyncHTTPTransport:
    """httpx's transport with its connection pool on :class:`SocketBackend` (for ``http://`` only).

    httpx has no parameter for the network backend, so the pool it builds is replaced by an equal
    one; should a future httpx name it differently, the transport is returned unchanged (slower, same
    behaviour). ``verify`` is the caller's shared context: left to httpx, every transport would build
    its own by reading the whole CA bundle (~40 ms), even though this one never speaks TLS.
    """
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=verify)
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=SocketBackend(),
        )
    return transport
