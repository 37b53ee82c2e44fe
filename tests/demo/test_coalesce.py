"""The demo's coalesced writes: what one loop iteration writes on a connection leaves as one send."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from typing import Any

import httpx

from threadcase.demo_instance.coalesce import _CoalescingTransport
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD


class _Inner:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def _run(body: Any) -> Any:
    return asyncio.run(body())


def test_writes_of_one_iteration_leave_together_and_later_ones_apart() -> None:
    inner = _Inner()

    async def body() -> None:
        transport = _CoalescingTransport(inner, asyncio.get_running_loop())  # type: ignore[arg-type]
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        transport.write(memoryview(b"body"))
        transport.write(b"")
        assert inner.writes == []  # nothing until the iteration ends
        await asyncio.sleep(0)
        assert inner.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        transport.write(b"next")
        await asyncio.sleep(0)
        assert inner.writes[-1] == b"next"
        # Everything else is the real transport's.
        assert transport.get_extra_info("peername") == ("127.0.0.1", 1)

    _run(body)


def test_close_sends_what_is_pending_first_and_a_closing_transport_gets_nothing() -> None:
    inner = _Inner()

    async def body() -> None:
        transport = _CoalescingTransport(inner, asyncio.get_running_loop())  # type: ignore[arg-type]
        transport.write(b"last words")
        transport.close()
        assert inner.writes == [b"last words"]
        assert inner.closed
        transport.write(b"too late")
        await asyncio.sleep(0)
        assert inner.writes == [b"last words"]

    _run(body)


def _assert_answers_come_whole(url: str) -> None:
    with httpx.Client(base_url=url) as client:
        login = client.post("/rest/login", json={"emailOrLdapLoginId": DEFAULT_EMAIL, "password": DEFAULT_PASSWORD})
        cookie = login.headers["set-cookie"].split(";")[0]
    host, port = url.removeprefix("http://").split(":")
    request = f"GET /rest/projects/personal HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n".encode()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for _ in range(5):
            sock.sendall(request)
            first = sock.recv(65536)  # whatever the first segment brought
            head, _, body = first.partition(b"\r\n\r\n")
            lengths = [
                line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
            ]
            assert len(body) == int(lengths[0]), f"the body did not come with the head: {first!r}"


def test_a_served_answer_arrives_whole_in_one_segment() -> None:
    """``threadcase demo serve`` answers a small JSON call with head and body in one send (uvicorn alone
    writes them apart, and a client on another core wakes up twice)."""
    command = [sys.executable, "-c", "from threadcase.cli import main; main()", "demo", "serve", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        _assert_answers_come_whole(process.stdout.readline().rsplit(" ", 1)[-1].strip())
    finally:
        process.terminate()
        process.communicate(timeout=20)
