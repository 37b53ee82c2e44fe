"""The lean HTTP/1.1 transport under httpx, against raw TCP servers on loopback and the demo instance.

The raw server is a few lines of HTTP/1.1 on an anyio listener, so each test controls exactly what the
connection does: keep it alive, close it while idle, answer slowly, answer badly, read slowly.
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

from tests.instance.demo import Demo, demo
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.instance import InstanceClient
from threadcase.instance.http11 import HTTP11Transport, StreamingBody, _serialize

pytestmark = pytest.mark.anyio

__all__ = ["demo"]  # the fixture, imported for the tests below

LIMITS = httpx.Limits(max_connections=8, max_keepalive_connections=8)
Handler = Callable[[SocketStream, bytes, bytes], Awaitable[bool]]
"""``(stream, request line, body) -> keep the connection?``"""


def _client(timeout: float | httpx.Timeout = 5.0, limits: httpx.Limits = LIMITS) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=HTTP11Transport(limits), timeout=timeout)


def _transport(client: httpx.AsyncClient) -> HTTP11Transport:
    transport = client._transport
    assert isinstance(transport, HTTP11Transport)
    return transport


def _answer(body: bytes, *, close: bool = False) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n"
    if close:
        head += "connection: close\r\n"
    return head.encode() + b"\r\n" + body


async def _read_request(stream: SocketStream) -> tuple[bytes, bytes] | None:
    """One request (request line, content-length body), or None when the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            data += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return None
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += await stream.receive()
    return lines[0], body


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """Serve ``handler`` per request; yields (url, one entry per accepted connection)."""
    connections: list[int] = []
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def serve(stream: SocketStream) -> None:
        connections.append(1)
        async with stream:
            while (request := await _read_request(stream)) is not None:
                if not await handler(stream, *request):
                    return

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield f"http://127.0.0.1:{port}", connections
        finally:
            tg.cancel_scope.cancel()


def answering(raw: bytes, *, keep: bool = True) -> Handler:
    async def handler(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(raw)
        return keep

    return handler


async def echo(stream: SocketStream, line: bytes, body: bytes) -> bool:
    await stream.send(_answer(b"echo:" + body))
    return True


# --- keep-alive and framing ---------------------------------------------------------------------


async def test_requests_share_one_kept_alive_connection() -> None:
    async with raw_server(echo) as (url, connections), _client() as client:
        for n in range(5):
            response = await client.post(url + "/x", content=f"n{n}".encode())
            assert response.text == f"echo:n{n}"
            assert response.http_version == "HTTP/1.1"
            assert response.reason_phrase == "OK"
    assert len(connections) == 1


async def test_a_chunked_body_is_joined() -> None:
    raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    async with raw_server(answering(raw)) as (url, connections), _client() as client:
        for _ in range(2):
            assert (await client.get(url)).text == "hello world"
    assert len(connections) == 1


async def test_a_body_until_close_ends_with_the_connection_which_is_not_reused() -> None:
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it"
    async with raw_server(answering(raw, keep=False)) as (url, connections), _client() as client:
        for _ in range(2):
            assert (await client.get(url)).text == "all of it"
    assert len(connections) == 2


async def test_headers_keep_their_order_duplicates_and_bytes() -> None:
    raw = b"HTTP/1.1 201 Created\r\nSet-Cookie: a=1\r\nX-One: 1\r\nSet-Cookie: b=2\r\ncontent-length: 0\r\n\r\n"
    async with raw_server(answering(raw)) as (url, _), _client() as client:
        response = await client.get(url)
    assert response.status_code == 201
    assert response.reason_phrase == "Created"
    assert response.headers.raw == [
        (b"Set-Cookie", b"a=1"),
        (b"X-One", b"1"),
        (b"Set-Cookie", b"b=2"),
        (b"content-length", b"0"),
    ]


async def test_a_204_has_no_body_and_keeps_the_connection() -> None:
    async with raw_server(answering(b"HTTP/1.1 204 No Content\r\n\r\n")) as (url, connections), _client() as client:
        for _ in range(3):
            response = await client.delete(url)
            assert response.status_code == 204
            assert response.content == b""
    assert len(connections) == 1


async def test_a_head_answer_announces_a_body_it_does_not_send() -> None:
    async def head_then_get(stream: SocketStream, line: bytes, body: bytes) -> bool:
        if line.startswith(b"HEAD "):
            await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n")
        else:
            await stream.send(_answer(b"got"))
        return True

    async with raw_server(head_then_get) as (url, connections), _client(1.0) as client:
        response = await client.head(url)
        assert response.headers["content-length"] == "1000"
        assert response.content == b""
        assert (await client.get(url)).text == "got"
    assert len(connections) == 1


async def test_an_informational_answer_before_the_real_one_is_skipped() -> None:
    raw = b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + _answer(b"real")
    async with raw_server(answering(raw)) as (url, _), _client() as client:
        response = await client.get(url)
    assert (response.status_code, response.text, "link" in response.headers) == (200, "real", False)


async def test_connection_close_and_http10_answers_are_not_reused() -> None:
    answers = [_answer(b"a", close=True), b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nb", _answer(b"c")]

    async def next_answer(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(answers.pop(0))
        return True  # the server would keep it; the client must not

    async with raw_server(next_answer) as (url, connections), _client() as client:
        assert [(await client.get(url)).text for _ in range(3)] == ["a", "b", "c"]
    assert len(connections) == 3


async def test_a_request_asking_to_close_does_not_keep_its_connection() -> None:
    async with raw_server(echo) as (url, connections), _client() as client:
        assert (await client.get(url, headers={"Connection": "close"})).text == "echo:"
        assert _transport(client)._idle_count == 0
        assert (await client.get(url)).text == "echo:"
    assert len(connections) == 2


async def test_bytes_after_a_complete_answer_make_the_connection_unusable() -> None:
    for after in (b"garbage", _answer(b"unasked")):
        async with raw_server(answering(_answer(b"ok") + after)) as (url, connections), _client() as client:
            assert (await client.get(url)).text == "ok"
            assert (await client.get(url)).text == "ok"
        assert len(connections) == 2


# --- streaming ----------------------------------------------------------------------------------


async def test_a_streamed_body_arrives_while_the_server_is_still_sending() -> None:
    first_seen = anyio.Event()

    async def in_two_parts(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
        with anyio.fail_after(5):
            await first_seen.wait()  # the rest only after the client saw the first part
        await stream.send(b"7\r\nsecond\n\r\n0\r\n\r\n")
        return True

    async with raw_server(in_two_parts) as (url, connections), _client() as client:
        parts: list[bytes] = []
        async with client.stream("GET", url) as response:
            async for chunk in response.aiter_bytes():
                parts.append(chunk)
                first_seen.set()
        assert b"".join(parts) == b"first\nsecond\n"
        assert parts[0] == b"first\n"
        assert _transport(client)._idle_count == 1  # fully read: back in the pool
        assert (await client.get(url)).status_code == 200
    assert len(connections) == 1


async def test_closing_a_stream_early_closes_its_connection() -> None:
    closed = anyio.Event()

    async def endless(stream: SocketStream, line: bytes, body: bytes) -> bool:
        if line.startswith(b"GET /short"):
            await stream.send(_answer(b"short"))
            return True
        await stream.send(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\npart\r\n")
        try:
            with anyio.fail_after(5):
                await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            closed.set()
        return False

    async with raw_server(endless) as (url, connections), _client() as client:
        async with client.stream("GET", url + "/long") as response:
            async for chunk in response.aiter_bytes():
                assert chunk == b"part"
                break
        with anyio.fail_after(5):
            await closed.wait()  # the server saw the client hang up
        assert _transport(client)._idle_count == 0
        assert (await client.get(url + "/short")).text == "short"
    assert len(connections) == 2


async def test_read_some_survives_its_deadline_and_a_cancellation() -> None:
    """The event stream waits on a body with a deadline, gives up, and reads on later: neither the
    deadline nor a cancellation may cost the connection or a byte of the answer."""
    go_on = anyio.Event()

    async def in_two_parts(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
        with anyio.fail_after(5):
            await go_on.wait()
        await stream.send(b"7\r\nsecond\n\r\n0\r\n\r\n")
        return True

    async with raw_server(in_two_parts) as (url, connections), _client() as client:
        # Straight to the transport, as the instance client reads event streams (httpx's client wraps the body).
        response = await _transport(client).handle_async_request(client.build_request("GET", url))
        body = response.stream
        assert isinstance(body, StreamingBody)
        assert await body.read_some(anyio.current_time() + 5) == b"first\n"
        assert await body.read_some(anyio.current_time() + 0.05) is None  # the deadline: nothing yet
        with anyio.move_on_after(0.05) as scope:
            await body.read_some(anyio.current_time() + 5)
        assert scope.cancelled_caught  # cancelled while waiting
        go_on.set()
        assert await body.read_some(anyio.current_time() + 5) == b"second\n"
        assert await body.read_some(anyio.current_time() + 5) == b""  # complete
        assert _transport(client)._idle_count == 1  # fully read: back in the pool
        await response.aclose()
        assert (await client.get(url)).status_code == 200
    assert len(connections) == 1


async def test_read_some_gives_up_the_connection_when_it_fails() -> None:
    async def cut(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\npart\r\n")
        return False  # closes the connection mid-body

    async with raw_server(cut) as (url, _connections), _client() as client:
        # Straight to the transport, as the instance client reads event streams (httpx's client wraps the body).
        response = await _transport(client).handle_async_request(client.build_request("GET", url))
        body = response.stream
        assert isinstance(body, StreamingBody)
        assert await body.read_some(anyio.current_time() + 5) == b"part"
        with pytest.raises(httpx.RemoteProtocolError, match="mid-body"):
            await body.read_some(anyio.current_time() + 5)
        with pytest.raises(httpx.StreamClosed):
            await body.read_some(anyio.current_time() + 5)
        assert _transport(client)._idle_count == 0
        assert _transport(client)._open == 0


@pytest.mark.timeout(20)
async def test_a_peer_sending_faster_than_we_read_cannot_hold_the_event_loop(flooding_peer: int) -> None:
    """Regression: a stream whose data is always waiting never suspended, so no other task ran."""
    import time

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
                    time.sleep(0.001)  # noqa: ASYNC251 - a consumer slower than the peer: data always waits
        elapsed = anyio.current_time() - began
        tg.cancel_scope.cancel()
    assert elapsed < 2.0, "the deadline could not fire while the stream was read"
    assert ticks >= 5, "other tasks did not run while the stream was read"


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


# --- the pool -----------------------------------------------------------------------------------


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async def close_after_answer(stream: SocketStream, line: bytes, body: bytes) -> bool:
        # Answers as if keeping the connection, then closes it: the client only learns when idle.
        await stream.send(_answer(b"ok"))
        return False

    async with raw_server(close_after_answer) as (url, connections), _client() as client:
        for _ in range(3):
            assert (await client.post(url, content=b"x")).text == "ok"
            await anyio.sleep(0.05)  # the close reaches the client's socket
    assert len(connections) == 3


def _closing_on_reuse() -> tuple[Handler, list[bytes]]:
    """A server that answers a connection's first request and closes on its second, unanswered."""
    received: list[bytes] = []

    async def handler(stream: SocketStream, line: bytes, body: bytes) -> bool:
        received.append(line)
        if getattr(stream, "answered", False):
            return False  # closed as the request arrived: the race a stale keep-alive connection has
        stream.answered = True  # type: ignore[attr-defined]
        await stream.send(_answer(b"fresh"))
        return True

    return handler, received


async def test_an_idempotent_request_on_a_connection_closed_as_it_was_reused_is_sent_again() -> None:
    handler, received = _closing_on_reuse()
    async with raw_server(handler) as (url, connections), _client() as client:
        assert (await client.get(url + "/a")).text == "fresh"
        assert (await client.get(url + "/b")).text == "fresh"  # unanswered once, then on a new connection
    assert received == [b"GET /a HTTP/1.1", b"GET /b HTTP/1.1", b"GET /b HTTP/1.1"]
    assert len(connections) == 2


async def test_a_post_the_server_may_have_received_is_not_sent_again() -> None:
    handler, received = _closing_on_reuse()
    async with raw_server(handler) as (url, _), _client() as client:
        assert (await client.post(url + "/a", content=b"1")).text == "fresh"
        with pytest.raises(httpx.RemoteProtocolError, match="closed the connection"):
            await client.post(url + "/b", content=b"2")
    assert received == [b"POST /a HTTP/1.1", b"POST /b HTTP/1.1"]


async def test_all_connections_busy_is_a_pool_timeout() -> None:
    release = anyio.Event()

    async def slow(stream: SocketStream, line: bytes, body: bytes) -> bool:
        with anyio.fail_after(5):
            await release.wait()
        await stream.send(_answer(b"late"))
        return True

    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with raw_server(slow) as (url, _), _client(httpx.Timeout(5.0, pool=0.2), one) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.get, url)
            await anyio.sleep(0.05)
            with pytest.raises(httpx.PoolTimeout, match="no free connection"):
                await client.get(url)
            release.set()
        # The slot a waiter gave up on is not lost: the next request gets it.
        assert (await client.get(url)).text == "late"


async def test_a_waiter_cancelled_as_it_is_handed_a_connection_passes_the_slot_on() -> None:
    """The slot freed by a closed stream goes to the waiter; cancelled before it runs, it gives it back."""
    import asyncio

    async def endless(stream: SocketStream, line: bytes, body: bytes) -> bool:
        if line.startswith(b"GET /stream"):
            await stream.send(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            await anyio.sleep(5)
            return False
        await stream.send(_answer(b"ok"))
        return True

    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with raw_server(endless) as (url, _), _client(httpx.Timeout(5.0, pool=0.5), one) as client:
        transport = _transport(client)
        tasks: list[asyncio.Task[object]] = []
        outcome: list[str] = []

        async def wait_for_a_connection() -> None:
            task = asyncio.current_task()
            assert task is not None
            tasks.append(task)
            try:
                await client.get(url + "/ok")
            except asyncio.CancelledError:
                outcome.append("cancelled")  # the cancellation this test sends; swallowed to end the task
            else:
                outcome.append("answered")

        async with client.stream("GET", url + "/stream") as response, anyio.create_task_group() as tg:
            tg.start_soon(wait_for_a_connection)
            await anyio.wait_all_tasks_blocked()
            assert transport._waiters
            await response.aclose()  # hands the slot to the waiter (no checkpoint in between) ...
            tasks[0].cancel()  # ... which is cancelled before it runs (asyncio's own, as wait_for does)
        assert outcome == ["cancelled"]
        assert (await client.get(url + "/ok")).text == "ok"


async def test_idle_connections_expire_and_their_number_is_bounded() -> None:
    limits = httpx.Limits(max_connections=8, max_keepalive_connections=1, keepalive_expiry=0.1)
    async with raw_server(echo) as (url, connections), _client(limits=limits) as client:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(client.get, url)
        assert len(connections) == 3
        assert _transport(client)._idle_count == 1  # at most one kept
        await anyio.sleep(0.2)
        await client.get(url)  # the kept one expired: a new connection
    assert len(connections) == 4


async def test_closing_the_transport_closes_every_connection() -> None:
    async def partial(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
        await anyio.sleep(5)
        return False

    async with raw_server(partial) as (url, _):
        client = _client()
        async with client.stream("GET", url) as response:
            await client.aclose()
            with pytest.raises(httpx.ReadError):
                await response.aread()
        transport = _transport(client)
        assert (transport._idle_count, transport._active, transport._open) == (0, set(), 0)


# --- failures -----------------------------------------------------------------------------------


async def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        async with _client() as client:
            with pytest.raises(httpx.ConnectError, match=r"127\.0\.0\.1"):
                await client.get(f"http://127.0.0.1:{port}/")
            assert _transport(client)._open == 0


async def test_a_loopback_connect_does_not_wait_for_writability(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handshake completes inside connect(): waiting for the socket to turn writable would cost a
    trip through the event loop per new connection (one per case-iteration's event stream)."""

    async def never(sock: socket.socket) -> None:
        raise AssertionError("waited for writability on an established connection")

    async with raw_server(echo) as (url, connections), _client() as client:
        monkeypatch.setattr(anyio, "wait_writable", never)
        assert (await client.post(url, content=b"hi")).text == "echo:hi"
        assert connections == [1]


async def test_a_connect_nobody_answers_is_a_connect_timeout() -> None:
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)  # never accepted: once its queue is full, handshakes to it are left unanswered
        filler = socket.create_connection(full.getsockname(), timeout=1)  # fills that queue
        try:
            async with _client(httpx.Timeout(5.0, connect=0.3)) as client:
                with pytest.raises(httpx.ConnectTimeout, match=r"timed out after 0\.3 s"):
                    await client.get(f"http://127.0.0.1:{full.getsockname()[1]}/")
                assert _transport(client)._open == 0
        finally:
            filler.close()


async def test_a_silent_server_is_a_read_timeout() -> None:
    async def silent(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await anyio.sleep(5)
        return False

    async with raw_server(silent) as (url, _), _client(0.2) as client:
        with pytest.raises(httpx.ReadTimeout, match="timed out"):
            await client.get(url)
        assert _transport(client)._open == 0


async def test_a_malformed_answer_is_a_protocol_error() -> None:
    async with raw_server(answering(b"HTTP/1.1 abc nonsense\r\n\r\n")) as (url, _), _client() as client:
        with pytest.raises(httpx.RemoteProtocolError, match="malformed answer"):
            await client.get(url)


async def test_a_connection_closed_mid_body_is_a_protocol_error() -> None:
    raw = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial"
    async with raw_server(answering(raw, keep=False)) as (url, _), _client() as client:
        with pytest.raises(httpx.RemoteProtocolError, match="mid-body"):
            await client.get(url)


async def test_a_connection_reset_mid_answer_is_a_read_error() -> None:
    async def reset(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        await anyio.sleep(0.05)
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        return False  # closing with linger 0 sends RST

    async with raw_server(reset) as (url, _), _client() as client:
        with pytest.raises(httpx.ReadError):
            await client.get(url)


async def test_cancelled_mid_answer_the_connection_is_closed_not_pooled() -> None:
    hung_up = anyio.Event()

    async def stall(stream: SocketStream, line: bytes, body: bytes) -> bool:
        if line.startswith(b"GET /ok"):
            await stream.send(_answer(b"ok"))
            return True
        head_only = line.startswith(b"GET /head")
        await stream.send(b"HTTP/1.1 200 OK\r\n" if head_only else b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\npart")
        try:
            with anyio.fail_after(5):
                await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            hung_up.set()
        return False

    async with raw_server(stall) as (url, connections), _client() as client:
        transport = _transport(client)
        for path in ("/head", "/body"):
            hung_up = anyio.Event()
            with anyio.move_on_after(0.1) as scope:
                await client.get(url + path)
            assert scope.cancelled_caught
            with anyio.fail_after(5):
                await hung_up.wait()
            assert (transport._idle_count, transport._active, transport._open) == (0, set(), 0)
        assert (await client.get(url + "/ok")).text == "ok"
    assert len(connections) == 3


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
        async with _client(httpx.Timeout(5.0, write=0.4)) as client:
            began = anyio.current_time()
            with pytest.raises(httpx.WriteTimeout):
                await client.post(f"http://127.0.0.1:{port}/", content=b"x" * (64 * 1024 * 1024))
            assert anyio.current_time() - began < 3.0
    finally:
        done.set()
        server.close()
        thread.join(5)


async def test_a_large_body_goes_out_in_pieces_to_a_slow_reader() -> None:
    payload = b"x" * (8 * 1024 * 1024)  # far beyond the socket buffers: the write must wait for room

    async def count(stream: SocketStream, line: bytes, body: bytes) -> bool:
        await stream.send(_answer(str(len(body)).encode()))
        return True

    async with raw_server(count) as (url, _), _client() as client:
        response = await client.post(url, content=payload)
    assert response.text == str(len(payload))


# --- addresses ----------------------------------------------------------------------------------


async def test_a_host_name_resolves() -> None:
    async with raw_server(echo) as (url, _):
        named = url.replace("127.0.0.1", "localhost")
        async with _client() as client:
            # localhost may resolve to ::1 first, where nothing listens: the next address is tried.
            assert (await client.post(named, content=b"hi")).text == "echo:hi"


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


async def test_https_is_refused() -> None:
    async with _client() as client:
        with pytest.raises(httpx.UnsupportedProtocol):
            await client.get("https://127.0.0.1:9/")


# --- the request bytes --------------------------------------------------------------------------


def test_head_and_body_leave_in_one_buffer() -> None:
    request = httpx.Request("POST", "http://h:8/p?q=1", json={"a": 1}, headers={"X-A": "b"})
    assert _serialize(request, request.content) == (
        b"POST /p?q=1 HTTP/1.1\r\nHost: h:8\r\nX-A: b\r\nContent-Length: 7\r\n"
        b'Content-Type: application/json\r\n\r\n{"a":1}',
        False,
    )
    closing = httpx.Request("GET", "http://h/", headers={"Connection": " Close"})
    assert _serialize(closing, b"")[1] is True


async def test_a_streamed_request_body_keeps_its_chunked_framing() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"ab"
        yield b"c"

    request = httpx.Request("PUT", "http://h/", content=parts())
    body = await request.aread()
    data, _closing = _serialize(request, body)
    assert data.endswith(b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")


# --- with the demo instance ---------------------------------------------------------------------


async def test_the_demo_instance_over_one_kept_alive_connection(demo: Demo) -> None:
    async with _client() as client:
        login = {"emailOrLdapLoginId": DEFAULT_EMAIL, "password": DEFAULT_PASSWORD}
        assert (await client.post(demo.url + "/rest/login", json=login)).status_code == 200
        for _ in range(5):
            response = await client.get(demo.url + "/healthz/readiness")
            assert response.json() == {"status": "ok"}
        head = await client.head(demo.url + "/healthz")
        assert head.content == b""
        assert (await client.get(demo.url + "/healthz")).status_code == 200
        transport = _transport(client)
        assert (transport._idle_count, transport._open) == (1, 1)


async def test_the_instance_client_uses_it_for_plain_http_only() -> None:
    plain = InstanceClient("http://127.0.0.1:9", email="e", password="p")
    secure = InstanceClient("https://127.0.0.1:9", email="e", password="p")
    try:
        assert plain.http is not None
        assert secure.http is not None
        assert isinstance(plain._transport, HTTP11Transport)
        assert isinstance(plain._stream_transport, HTTP11Transport)
        assert isinstance(secure._transport, httpx.AsyncHTTPTransport)
        assert isinstance(secure._stream_transport, httpx.AsyncHTTPTransport)
    finally:
        await plain.aclose()
        await secure.aclose()


async def test_clients_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    # Building one reads the whole CA bundle (~40 ms); a lane opens a dozen clients.
    import ssl

    from httpx._transports import default as httpx_default

    from threadcase.instance import client as client_module

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
    clients = [InstanceClient(f"https://127.0.0.1:{9 + n}", email="e", password="p") for n in range(3)]
    try:
        for each in clients:
            assert each.http is not None
    finally:
        for each in clients:
            await each.aclose()
        client_module._tls_context.cache_clear()
    assert len(built) == 1


async def test_a_call_gets_exactly_its_own_headers_whatever_came_before() -> None:
    """Merged headers are kept per (body, extra headers): a stream's or a resumed stream's extras must
    never reach a plain call, nor a plain call's lack of them a stream."""
    client = InstanceClient("http://127.0.0.1:9", email="e", password="p")
    stream_headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
    try:
        calls = [
            ("GET", None, stream_headers),
            ("GET", None, None),
            ("GET", None, {**stream_headers, "Last-Event-ID": "7"}),
            ("POST", b"{}", None),
            ("GET", None, stream_headers),
            ("POST", b"{}", {"X-Demo-Misbehave": "drops-change"}),
            ("GET", None, None),
        ]
        for method, body, extra in calls:
            request = client._request(method, "/rest/x", body, None, extra, None)
            for name, value in (extra or {}).items():
                assert request.headers[name] == value
            assert ("last-event-id" in request.headers) == bool(extra and "Last-Event-ID" in extra)
            assert ("x-demo-misbehave" in request.headers) == bool(extra and "X-Demo-Misbehave" in extra)
            assert (request.headers.get("accept") == "text/event-stream") == bool(extra and "Accept" in extra)
            assert (request.headers.get("content-type") == "application/json") == (body is not None)
    finally:
        await client.aclose()
