"""A lean HTTP/1.1 transport under httpx for plain-HTTP instances.

httpx's default transport goes through httpcore, h11 and anyio's stream layer: a cancel scope around
every read and write, a state machine per event, a pool that scans every request it holds. At fifty
concurrent cases on two cores that machinery is most of the harness's CPU (bench/concurrency.py), so
``http://`` instances use this transport instead: non-blocking sockets, anyio's readiness waits only
when the kernel has nothing yet, httptools (llhttp) for parsing, and one send per request. httpx stays
the client: requests, responses, timeouts and exception types are its own. TLS is never handled here:
``https://`` keeps httpx's default transport.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httptools
import httpx

__all__ = ["HTTP11Transport", "StreamingBody"]

_YIELD_EVERY = 16
"""Reads served straight from the socket buffer before one trip through the event loop."""

_RECV_SIZE = 65536

_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})

_Origin = tuple[str, int]


class _Disconnected(Exception):
    """The server closed the connection before any byte of the answer (a reused one may be stale)."""

    def __init__(self, message: str, *, during_send: bool = False) -> None:
        super().__init__(message)
        self.during_send = during_send


def _is_ip_literal(host: str) -> int | None:
    """The address family of an IP literal, or None for a name that needs resolving."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return family
    return None


class _Connection:
    """One non-blocking TCP socket and the parse state of the answer being read on it."""

    __slots__ = (
        "_reads_without_yield",
        "chunks",
        "done",
        "framed",
        "head_done",
        "head_only",
        "headers",
        "idle_since",
        "keep_alive",
        "origin",
        "parser",
        "reason",
        "received",
        "reused",
        "sock",
        "status",
    )

    def __init__(self, sock: socket.socket, origin: _Origin) -> None:
        self.sock = sock
        self.origin = origin
        self.idle_since = 0.0
        self.reused = False
        self._reads_without_yield = 0
        self.parser: httptools.HttpResponseParser | None = None
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []
        self.head_done = False
        self.done = False
        self.keep_alive = False
        self.head_only = False
        self.received = False
        """Whether any byte of the current answer arrived (a stale connection sends none)."""
        self.framed = False
        """Whether the body's end is announced (content-length or chunked), not the connection's close."""

    # --- httptools callbacks ------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.done:
            # Bytes after a complete answer: nothing was asked for them, so the connection is unusable.
            raise _Stray

    def on_status(self, data: bytes) -> None:
        self.reason += data

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self.parser is not None
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            return  # informational (103 Early Hints): the real answer follows on the same parser
        self.status = status
        self.head_done = True
        # llhttp's verdict covers the version, Connection headers and bodies delimited by the close.
        self.keep_alive = self.parser.should_keep_alive()
        self.framed = any(
            name.lower() in (b"content-length", b"transfer-encoding") for name, _ in self.headers
        ) or status in (204, 304)
        if self.head_only:
            # The parser does not know the method; a HEAD answer announces a body it never sends.
            self.done = True

    def on_body(self, body: bytes) -> None:
        if self.head_only:
            self.keep_alive = False  # a HEAD answer with bytes after it: never reuse
            return
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if not self.head_done:
            # The end of an informational answer: forget its headers.
            self.reason, self.headers = b"", []
            return
        self.done = True

    # --- the connection -----------------------------------------------------------------------

    def begin(self, head_only: bool) -> None:
        """Reset the parse state for the next answer."""
        self.parser = httptools.HttpResponseParser(self)
        self.status, self.reason, self.headers, self.chunks = 0, b"", [], []
        self.head_done = self.done = self.keep_alive = self.received = self.framed = False
        self.head_only = head_only

    def usable(self) -> bool:
        """Whether an idle connection is still open and silent (one non-blocking peek)."""
        try:
            self.sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return False  # EOF, or bytes nobody asked for

    def close(self) -> None:
        if self.sock.fileno() != -1:
            # Wakes a task still waiting on this socket (it gets ClosedResourceError) before the fd goes.
            anyio.notify_closing(self.sock)
            self.sock.close()

    async def send(self, data: bytes, seconds: float | None, request: httpx.Request) -> None:
        view = memoryview(data)
        deadline: float | None = None  # one deadline for the whole write, set only if it has to wait
        try:
            while view:
                try:
                    sent = self.sock.send(view)
                except BlockingIOError:
                    if deadline is None:
                        deadline = math.inf if seconds is None else anyio.current_time() + seconds
                    await _writable_by(self.sock, deadline)
                    continue
                view = view[sent:]
        except TimeoutError as exc:
            raise httpx.WriteTimeout(f"timed out sending to {_where(self)}", request=request) from exc
        except (OSError, anyio.ClosedResourceError, anyio.BusyResourceError) as exc:
            raise httpx.WriteError(f"sending to {_where(self)} failed: {_describe(exc)}", request=request) from exc

    async def receive(self, seconds: float | None, request: httpx.Request) -> None:
        """Read what arrived (waiting up to ``seconds`` when nothing has) and feed it to the parser."""
        deadline = math.inf if seconds is None else anyio.current_time() + seconds
        if not await self.receive_until(deadline, request):
            raise httpx.ReadTimeout(f"timed out after {seconds} s waiting for {_where(self)}'s answer", request=request)

    async def receive_until(self, deadline: float, request: httpx.Request) -> bool:
        """Read what arrived (waiting until ``deadline``, anyio time, when nothing has) and feed it to the
        parser; False when nothing came by then.

        Nothing is consumed until bytes are there, so a deadline or a cancellation while waiting leaves
        the connection and its parse state exactly as they were: the read can simply be tried again.
        """
        if self._reads_without_yield >= _YIELD_EVERY:
            # A peer that sends faster than we read would otherwise keep every read on the fast path
            # below and this task would hold the loop: no other case, deadline or Ctrl-C would run.
            self._reads_without_yield = 0
            await anyio.lowlevel.checkpoint()
        try:
            data: bytes | None = self.sock.recv(_RECV_SIZE)
            self._reads_without_yield += 1
        except BlockingIOError:
            self._reads_without_yield = 0
            data = await self._wait_and_recv(deadline, request)
            if data is None:
                return False
        except OSError as exc:
            raise self._read_error(exc, request) from exc
        if not data:
            self._eof(request)
            return True
        self.received = True
        assert self.parser is not None
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            if not self.done:
                raise httpx.RemoteProtocolError(
                    f"{_where(self)} switched protocols; only plain HTTP/1.1 is supported", request=request
                ) from exc
            self.keep_alive = False
        except (httptools.HttpParserError, _Stray) as exc:
            if not self.done:
                raise httpx.RemoteProtocolError(
                    f"malformed answer from {_where(self)}: {exc}", request=request
                ) from exc
            self.keep_alive = False  # the answer stands; what followed it makes the connection unusable
        if self.done and self.head_only and self.chunks:
            self.keep_alive = False
        return True

    async def _wait_and_recv(self, deadline: float, request: httpx.Request) -> bytes | None:
        # A bare cancel scope, not fail_after: this runs for nearly every answer and every event batch
        # (~26 times a case), and fail_after's generator wrapper was a third of the wait's cost.
        try:
            with anyio.CancelScope(deadline=deadline):
                while True:
                    await anyio.wait_readable(self.sock)
                    try:
                        return self.sock.recv(_RECV_SIZE)
                    except BlockingIOError:
                        continue
        except (OSError, anyio.ClosedResourceError, anyio.BusyResourceError) as exc:
            raise self._read_error(exc, request) from exc
        # Only the scope's own deadline ends the block without a return (an outer cancellation propagates).
        return None

    def _read_error(self, exc: BaseException, request: httpx.Request) -> Exception:
        if not self.received and isinstance(exc, ConnectionError):
            return _Disconnected(f"{_where(self)} closed the connection: {_describe(exc)}")
        return httpx.ReadError(f"reading from {_where(self)} failed: {_describe(exc)}", request=request)

    def _eof(self, request: httpx.Request) -> None:
        self.keep_alive = False
        if self.done:
            return
        if not self.received:
            raise _Disconnected(f"{_where(self)} closed the connection without answering")
        if self.head_done and not self.framed:
            self.done = True  # a body delimited by the connection's close: this is its end
            return
        what = "mid-body" if self.head_done else "mid-header"
        raise httpx.RemoteProtocolError(f"{_where(self)} closed the connection {what}", request=request)


class _Stray(Exception):
    """Bytes after a complete answer."""


def _where(conn: _Connection) -> str:
    host, port = conn.origin
    return f"{host}:{port}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


class StreamingBody(httpx.AsyncByteStream):
    """An answer's body as it arrives; the connection goes back to the pool once it is fully read.

    Iterating it (what httpx does) gives up the connection on any interruption. :meth:`read_some` is the
    other way to read it: a wait that times out or is cancelled leaves it intact, so a reader can wait
    with a deadline and try again (the event stream does, see ``sse.py``).
    """

    def __init__(self, pool: HTTP11Transport, conn: _Connection, request: httpx.Request, timeout: float | None):
        self._pool = pool
        self._conn: _Connection | None = conn
        self._request = request
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            raise httpx.StreamClosed()
        try:
            while True:
                if conn.chunks:
                    chunks, conn.chunks = conn.chunks, []
                    yield chunks[0] if len(chunks) == 1 else b"".join(chunks)
                    if self._conn is None:
                        return  # closed by the consumer while it held the chunk
                if conn.done:
                    break
                try:
                    await conn.receive(self._timeout, self._request)
                except _Disconnected as exc:
                    raise httpx.RemoteProtocolError(str(exc), request=self._request) from None
        except BaseException:
            # Cancelled, failed or abandoned mid-body: the rest of the answer would poison the next one.
            self._conn = None
            self._pool._discard(conn)
            raise
        self._conn = None
        self._pool._release(conn)

    async def read_some(self, deadline: float) -> bytes | None:
        """The body's next bytes; ``b""`` once it is complete; None when nothing came by ``deadline``
        (anyio time). A failure gives up the connection; a timeout or a cancellation does not."""
        conn = self._conn
        if conn is None:
            raise httpx.StreamClosed()
        while True:
            if conn.chunks:
                chunks, conn.chunks = conn.chunks, []
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            if conn.done:
                self._conn = None
                self._pool._release(conn)
                return b""
            try:
                if not await conn.receive_until(deadline, self._request):
                    return None
            except anyio.get_cancelled_exc_class():
                raise  # nothing was consumed: the connection is as it was
            except _Disconnected as exc:
                self._conn = None
                self._pool._discard(conn)
                raise httpx.RemoteProtocolError(str(exc), request=self._request) from None
            except BaseException:
                self._conn = None
                self._pool._discard(conn)
                raise

    async def aclose(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            self._pool._discard(conn)  # never reuse a connection whose body was not fully read


class HTTP11Transport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over plain TCP for ``http://`` URLs, with a keep-alive pool per origin.

    ``limits`` as httpx takes them: ``max_connections`` bounds open connections (a request waits up
    to the ``pool`` timeout for one, then raises :class:`httpx.PoolTimeout`), at most
    ``max_keepalive_connections`` idle ones are kept, each for ``keepalive_expiry`` seconds. Idle
    connections are reused newest first. Responses stream: the body arrives as it is read.
    """

    def __init__(self, limits: httpx.Limits | None = None) -> None:
        limits = limits or httpx.Limits()
        self._max_connections = limits.max_connections if limits.max_connections is not None else math.inf
        self._max_idle = limits.max_keepalive_connections if limits.max_keepalive_connections is not None else math.inf
        self._expiry = limits.keepalive_expiry if limits.keepalive_expiry is not None else math.inf
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._idle_count = 0
        self._open = 0
        """Connections counted against ``max_connections``: idle, in use, or being connected."""
        self._active: set[_Connection] = set()
        self._waiters: deque[anyio.Event] = deque()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return its response once the headers arrived (the body streams)."""
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"only http:// URLs go through this transport, not {url}", request=request)
        if self._closed:
            raise RuntimeError("the transport is closed")
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = await request.aread()
        data, closing = _serialize(request, body)
        method = request.method
        origin = (url.host, url.port or 80)
        conn = await self._checkout(origin, timeouts, request)
        try:
            return await self._exchange(conn, request, data, closing, timeouts)
        except _Disconnected as exc:
            # A kept-alive connection the server closed just as we reused it: a race no client can
            # avoid. Nothing of an answer arrived, so the request was not answered; repeat it once on a
            # fresh connection when repeating is harmless (an idempotent method) or when the send
            # itself failed. A POST the server may have received before closing is not sent twice.
            if not conn.reused or not (method in _IDEMPOTENT or exc.during_send):
                raise httpx.RemoteProtocolError(str(exc.args[0]), request=request) from None
        conn = await self._connect(origin, timeouts, request)
        try:
            return await self._exchange(conn, request, data, closing, timeouts)
        except _Disconnected as exc:
            raise httpx.RemoteProtocolError(str(exc.args[0]), request=request) from None

    async def _exchange(
        self,
        conn: _Connection,
        request: httpx.Request,
        data: bytes,
        closing: bool,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        """One request on ``conn`` (checked out): the response, or the connection is discarded.

        ``closing``: the request asked for ``Connection: close``, so the connection is not kept.
        """
        try:
            conn.begin(request.method == "HEAD")
            try:
                await conn.send(data, timeouts.get("write"), request)
            except httpx.WriteError as exc:
                if conn.reused and isinstance(exc.__cause__, OSError):
                    raise _Disconnected(str(exc), during_send=True) from exc
                raise
            read_timeout = timeouts.get("read")
            while not conn.head_done:
                await conn.receive(read_timeout, request)
            if closing:
                conn.keep_alive = False
            extensions = {"http_version": b"HTTP/1.1", "reason_phrase": conn.reason}
            if conn.done:
                # The whole answer came with its head (small JSON bodies do): the connection is free now.
                content = conn.chunks[0] if len(conn.chunks) == 1 else b"".join(conn.chunks)
                status, headers = conn.status, conn.headers
                self._release(conn)
                return httpx.Response(status, headers=headers, stream=httpx.ByteStream(content), extensions=extensions)
            body = StreamingBody(self, conn, request, read_timeout)
            return httpx.Response(conn.status, headers=conn.headers, stream=body, extensions=extensions)
        except BaseException:
            self._discard(conn)
            raise

    # --- the pool -----------------------------------------------------------------------------

    async def _checkout(
        self, origin: _Origin, timeouts: dict[str, float | None], request: httpx.Request
    ) -> _Connection:
        """A usable idle connection to ``origin`` (newest first), else a new one."""
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            if now - conn.idle_since <= self._expiry and conn.usable():
                conn.reused = True
                self._active.add(conn)
                return conn
            self._drop(conn)
        return await self._connect(origin, timeouts, request)

    async def _connect(self, origin: _Origin, timeouts: dict[str, float | None], request: httpx.Request) -> _Connection:
        await self._reserve(timeouts.get("pool"), request)
        try:
            sock = await _open_socket(origin, timeouts.get("connect"), request)
        except BaseException:
            self._unreserve()
            raise
        conn = _Connection(sock, origin)
        self._active.add(conn)
        return conn

    async def _reserve(self, seconds: float | None, request: httpx.Request) -> None:
        """Count one more open connection, waiting for room up to ``seconds``."""
        if self._open >= self._max_connections and self._idle_count:
            self._drop(self._oldest_idle())  # an idle connection to another origin makes room
        if self._open < self._max_connections and not self._waiters:
            self._open += 1
            return
        event = anyio.Event()
        self._waiters.append(event)
        try:
            with anyio.fail_after(seconds):
                await event.wait()
            if self._closed:
                raise RuntimeError("the transport was closed while this request waited for a connection")
        except BaseException as exc:
            if event.is_set():
                self._unreserve()  # handed a slot just as we gave up: pass it on
            else:
                self._waiters.remove(event)
            if isinstance(exc, TimeoutError):
                raise httpx.PoolTimeout(
                    f"no free connection within {seconds} s ({self._open} open, the limit)", request=request
                ) from exc
            raise
        # The slot was handed over by _unreserve: _open already counts it.

    def _unreserve(self) -> None:
        """One open connection fewer: its slot goes to the first waiter, if any."""
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self._open -= 1

    def _oldest_idle(self) -> _Connection:
        return min((conns[0] for conns in self._idle.values() if conns), key=lambda c: c.idle_since)

    def _drop(self, conn: _Connection) -> None:
        """Close an idle connection taken out of the idle lists."""
        idle = self._idle.get(conn.origin)
        if idle and conn in idle:
            idle.remove(conn)
            self._idle_count -= 1
        conn.close()
        self._unreserve()

    def _release(self, conn: _Connection) -> None:
        """A fully read answer: keep the connection for the next request, or close it."""
        if conn not in self._active:
            return
        self._active.discard(conn)
        if not conn.keep_alive or self._closed or self._idle_count >= self._max_idle or self._waiters:
            # Closing it when someone waits for a slot lets a request to another origin proceed.
            conn.close()
            self._unreserve()
            return
        conn.parser = None
        conn.idle_since = time.monotonic()
        idle = self._idle.setdefault(conn.origin, [])
        while idle and conn.idle_since - idle[0].idle_since > self._expiry:
            self._drop(idle[0])  # the oldest are never reached by newest-first reuse: expire them here
        idle.append(conn)
        self._idle_count += 1

    def _discard(self, conn: _Connection) -> None:
        """Close a checked-out connection that must not be reused."""
        if conn in self._active:
            self._active.discard(conn)
            conn.close()
            self._unreserve()
        else:
            conn.close()

    async def aclose(self) -> None:
        """Close every connection, idle or in use (a stream still being read gets a ReadError)."""
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        self._idle_count = 0
        for conn in list(self._active):
            conn.close()
        self._active.clear()
        self._open = 0
        while self._waiters:
            self._waiters.popleft().set()


def _serialize(request: httpx.Request, body: bytes) -> tuple[bytes, bool]:
    """Head and body in one buffer (one send, one segment on loopback, one wake-up of the server), and
    whether the request asks to close the connection after its answer."""
    lines = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    chunked = closing = False
    for name, value in request.headers.raw:
        lowered = name.lower()
        if lowered == b"transfer-encoding" and value.lower() == b"chunked":
            chunked = True
        elif lowered == b"connection" and value.strip().lower() == b"close":
            closing = True
        lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    if chunked:
        # A streamed request body was read whole above; it still has to go out in the framing announced.
        if body:
            lines += (f"{len(body):x}\r\n".encode("ascii"), body, b"\r\n")
        lines.append(b"0\r\n\r\n")
    elif body:
        lines.append(body)
    return b"".join(lines), closing


async def _open_socket(origin: _Origin, seconds: float | None, request: httpx.Request) -> socket.socket:
    """A connected non-blocking TCP socket to the first of ``origin``'s addresses that accepts."""
    host, port = origin
    errors: list[str] = []
    # One deadline for the whole connect, armed only around what really waits (resolving a name, a
    # handshake still in flight): a loopback connect to an IP literal never waits, and arming a cancel
    # scope for it was a tenth of opening a connection.
    deadline = math.inf if seconds is None else anyio.current_time() + seconds
    timed_out = False
    try:
        family = _is_ip_literal(host)
        if family is not None:
            addresses: list[tuple[Any, ...]] = [(family, socket.SOCK_STREAM, 0, "", (host, port))]
        else:
            addresses = []
            with anyio.CancelScope(deadline=deadline) as resolving:
                addresses = list(await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM))
            timed_out = resolving.cancelled_caught
        for family, kind, proto, _name, address in addresses:
            try:
                # Inside the try: a family the kernel lacks (IPv6 disabled, ::1 still listed for
                # localhost) is one failed address, and the next one is tried.
                sock = socket.socket(family, kind, proto)
            except OSError as exc:
                errors.append(f"{address[0]}:{address[1]}: {_describe(exc)}")
                continue
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                await _connect(sock, address, deadline)
            except TimeoutError:
                sock.close()
                timed_out = True
                break
            except OSError as exc:
                sock.close()
                errors.append(f"{address[0]}:{address[1]}: {_describe(exc)}")
                continue
            except BaseException:
                sock.close()
                raise
            return sock
    except OSError as exc:  # name resolution
        raise httpx.ConnectError(f"{host}:{port}: {_describe(exc)}", request=request) from exc
    if timed_out:
        raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out after {seconds} s", request=request)
    raise httpx.ConnectError("; ".join(errors) or f"{host}:{port}: no address", request=request)


def _established(sock: socket.socket) -> bool:
    """Whether a non-blocking connect already completed (the kernel has a peer only once it has)."""
    try:
        sock.getpeername()
    except OSError:
        return False
    return True


async def _connect(sock: socket.socket, address: Any, deadline: float) -> None:
    """Connect ``sock``; TimeoutError when the handshake is not done by ``deadline`` (anyio time)."""
    try:
        sock.connect(address)
    except BlockingIOError:
        if _established(sock):
            return  # a loopback handshake completes inside connect(): nothing to wait for
        await _writable_by(sock, deadline)
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise OSError(error, os.strerror(error)) from None
    except InterruptedError:  # pragma: no cover - EINTR on connect: the attempt goes on in the kernel
        await _writable_by(sock, deadline)


async def _writable_by(sock: socket.socket, deadline: float) -> None:
    """Wait until ``sock`` can be written to; TimeoutError at ``deadline`` (anyio time)."""
    with anyio.CancelScope(deadline=deadline) as scope:
        await anyio.wait_writable(sock)
    if scope.cancelled_caught:
        raise TimeoutError
