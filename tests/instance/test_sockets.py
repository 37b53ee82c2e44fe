"""The plain-HTTP socket backend under httpx, against a raw TCP server on loopback.

The server is a few lines of HTTP/1.1 on an anyio listener, so each test controls exactly what the
connection does: keep it alive, close it while idle, answer slowly, read slowly.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from threadcase.harness.instance import InstanceClient, sockets
from threadcase.harness.instance.sockets import SocketBackend, plain_http_transport

pytestmark = pytest.mark.anyio

LIMITS = httpx.Limits(max_connections=8, max_keepalive_connections=8)
Handler = Callable[[SocketStream, bytes], Awaitable[bool]]


def _client(timeout: float = 5.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=plain_http_transport(LIMITS, httpx.create_ssl_context()), timeout=timeout)


def _answer(body: bytes, *, close: bool = False) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n"
    if close:
        head += "connection: close\r\n"
    return head.encode() + b"\r\n" + body


async def _read_request(stream: SocketStream) -> bytes | None:
    """One request (headers and a content-length body), or None when the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            data += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return None
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += await stream.receive()
    return body


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """Serve ``handler(stream, body) -> keep going?`` per request; yields (url, connection count)."""
    connections: list[int] = []
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def serve(stream: SocketStream) -> None:
        connections.append(1)
        async with stream:
            while (body := await _read_request(stream)) is not None:
                if not await handler(stream, body):
                    return

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield f"http://127.0.0.1:{port}", connections
        finally:
            tg.cancel_scope.cancel()


async def echo(stream: SocketStream, body: bytes) -> bool:
    await stream.send(_answer(b"echo:" + body))
    return True


async def test_requests_share_one_kept_alive_connection() -> None:
    async with raw_server(echo) as (url, connections), _client() as client:
        for n in range(5):
            response = await client.post(url + "/x", content=f"n{n}".encode())
            assert response.text == f"echo:n{n}"
    assert len(connections) == 1


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async def close_after_answer(stream: SocketStream, body: bytes) -> bool:
        # Answers as if keeping the connection, then closes it: the client only learns when idle.
        await stream.send(_answer(b"ok"))
        return False

    async with raw_server(close_after_answer) as (url, connections), _client() as client:
        for _ in range(3):
            assert (await client.get(url)).text == "ok"
            await anyio.sleep(0.05)  # the close reaches the client's socket
    assert len(connections) == 3


async def test_a_large_body_goes_out_in_pieces_to_a_slow_reader() -> None:
    payload = b"x" * (8 * 1024 * 1024)  # far beyond the socket buffers: the write must wait for room

    async def slow(stream: SocketStream, body: bytes) -> bool:
        await stream.send(_answer(str(len(body)).encode()))
        return True

    async with raw_server(slow) as (url, _), _client() as client:
        response = await client.post(url, content=payload)
    assert response.text == str(len(payload))


async def test_a_silent_server_is_a_read_timeout() -> None:
    async def silent(stream: SocketStream, body: bytes) -> bool:
        await anyio.sleep(5)
        return False

    async with raw_server(silent) as (url, _), _client(0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(url)


async def test_a_connection_reset_mid_answer_is_a_read_error() -> None:
    async def reset(stream: SocketStream, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        return False  # closing with linger 0 sends RST

    async with raw_server(reset) as (url, _), _client() as client:
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            await client.get(url)


async def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        async with _client() as client:
            with pytest.raises(httpx.ConnectError, match=r"127\.0\.0\.1"):
                await client.get(f"http://127.0.0.1:{port}/")


async def test_a_host_name_resolves() -> None:
    async with raw_server(echo) as (url, _):
        named = url.replace("127.0.0.1", "localhost")
        async with _client() as client:
            # localhost may resolve to ::1 first, where nothing listens: the next address is tried.
            assert (await client.post(named, content=b"hi")).text == "echo:hi"


async def test_the_instance_client_uses_it_for_plain_http_only() -> None:
    plain = InstanceClient("http://127.0.0.1:9", email="e", password="p")
    secure = InstanceClient("https://127.0.0.1:9", email="e", password="p")
    try:
        plain_pool = getattr(plain.http._transport, "_pool", None)
        secure_pool = getattr(secure.http._transport, "_pool", None)
        assert isinstance(getattr(plain_pool, "_network_backend", None), SocketBackend)
        assert not isinstance(getattr(secure_pool, "_network_backend", None), SocketBackend)
    finally:
        await plain.aclose()
        await secure.aclose()


async def test_clients_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    # Building one reads the whole CA bundle (~40 ms); a lane opens a dozen clients.
    import ssl

    from httpx._transports import default as httpx_default

    from threadcase.harness.instance import client as client_module

    built: list[object] = []
    real = httpx.create_ssl_context

    def counting(verify: object = True, **kwargs: object) -> ssl.SSLContext:
        if not isinstance(verify, ssl.SSLContext):  # a context handed in is returned as is, not built
            built.append(verify)
        return real(verify=verify)  # type: ignore[arg-type]

    # httpx's transport calls the function through its own module; both names lead here.
    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    monkeypatch.setattr(httpx_default, "create_ssl_context", counting)
    client_module._tls_context.cache_clear()
    clients = [InstanceClient(f"http://127.0.0.1:{9 + n}", email="e", password="p") for n in range(3)]
    try:
        for each in clients:
            assert each.http is not None
    finally:
        for each in clients:
            await each.aclose()
        client_module._tls_context.cache_clear()
    assert len(built) == 1


def _pending(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return b""


async def test_a_request_head_announcing_a_body_leaves_together_with_it() -> None:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.setblocking(False)
    stream = sockets.SocketStream(ours)
    try:
        head = b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n"
        await stream.write(head)
        assert _pending(theirs) == b""  # held: one send for head and body
        await stream.write(b"hi")
        assert _pending(theirs) == head + b"hi"
        # No body announced: the head goes at once.
        await stream.write(b"GET /y HTTP/1.1\r\nHost: h\r\n\r\n")
        assert _pending(theirs) == b"GET /y HTTP/1.1\r\nHost: h\r\n\r\n"
        await stream.write(b"POST /z HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        assert _pending(theirs).startswith(b"POST /z")
        # A held head is never left behind while we wait for an answer.
        await stream.write(b"PUT /w HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert _pending(theirs) == b""
        theirs.send(b"answer")
        assert await stream.read(100, timeout=1) == b"answer"
        assert _pending(theirs).startswith(b"PUT /w")
    finally:
        await stream.aclose()
        theirs.close()


_FLOOD = """
import socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
conn, _ = server.accept()
conn.recv(65536)
conn.sendall(b"HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\ntransfer-encoding: chunked\\r\\n\\r\\n")
chunk = b": " + b"x" * 4000 + b"\\n\\n"
frame = (f"{len(chunk):x}\\r\\n".encode() + chunk + b"\\r\\n") * 16
try:
    while True:
        conn.sendall(frame)
except OSError:
    pass
"""


@pytest.fixture
def flooding_peer() -> Iterator[int]:
    """A server in another process that streams an endless answer as fast as it can; yields its port."""
    flood = subprocess.Popen([sys.executable, "-c", _FLOOD], stdout=subprocess.PIPE, text=True)
    try:
        assert flood.stdout is not None
        yield int(flood.stdout.readline())
    finally:
        flood.kill()
        flood.wait(5)
        if flood.stdout is not None:
            flood.stdout.close()


@pytest.mark.timeout(20)
async def test_a_peer_sending_faster_than_we_read_cannot_hold_the_event_loop(flooding_peer: int) -> None:
    # The peer is another process, so data is always waiting when the client reads.
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.01)
            ticks += 1

    async with anyio.create_task_group() as tg, _client() as client:
        tg.start_soon(ticker)
        began = anyio.current_time()
        with anyio.move_on_after(0.3):
            async with client.stream("GET", f"http://127.0.0.1:{flooding_peer}/") as response:
                async for _ in response.aiter_bytes():
                    pass
        elapsed = anyio.current_time() - began
        tg.cancel_scope.cancel()
    assert elapsed < 2.0, "the deadline could not fire while the stream was read"
    assert ticks >= 5, "other tasks did not run while the stream was read"


async def test_a_family_the_kernel_lacks_is_one_failed_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """IPv6 disabled while ``localhost`` still resolves to ::1 first: the IPv4 address is tried next."""
    real_socket = socket.socket

    def no_ipv6(family: int = socket.AF_INET, *args: object, **kwargs: object) -> socket.socket:
        if family == socket.AF_INET6:
            raise OSError(97, "Address family not supported by protocol")
        return real_socket(family, *args, **kwargs)  # type: ignore[arg-type]

    async def both(host: str, port: int, **kwargs: object) -> list[tuple[object, ...]]:
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]

    async with raw_server(echo) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        monkeypatch.setattr(socket, "socket", no_ipv6)
        monkeypatch.setattr(anyio, "getaddrinfo", both)
        async with _client() as client:
            assert (await client.post(f"http://localhost:{port}/", content=b"v4")).text == "echo:v4"


@pytest.mark.timeout(20)
async def test_a_peer_reading_a_trickle_still_hits_the_write_deadline() -> None:
    """The write timeout bounds the whole send, not each wait for room in the socket buffer."""
    import threading
    import time

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    done = threading.Event()

    def trickle() -> None:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(1)
            while not done.is_set():
                taken = 0
                try:
                    while taken < 1 << 20:  # room for the writer every tick, well within its timeout
                        taken += len(conn.recv(1 << 20))
                except OSError:
                    return
                time.sleep(0.1)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        async with httpx.AsyncClient(
            transport=plain_http_transport(LIMITS, httpx.create_ssl_context()),
            timeout=httpx.Timeout(5.0, write=0.4),
        ) as client:
            began = anyio.current_time()
            with pytest.raises(httpx.WriteTimeout):
                await client.post(f"http://127.0.0.1:{port}/", content=b"x" * (64 * 1024 * 1024))
            assert anyio.current_time() - began < 3.0
    finally:
        done.set()
        server.close()
        thread.join(5)
