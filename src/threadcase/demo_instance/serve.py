"""Serve an ASGI app with uvicorn on a free loopback port, in a background thread.

Used by the embedded demo instance (the runner's default system under test) and by the tests' fake
servers. A thread with its own event loop keeps the server's work (SQLite, the rule-based agent) off
the caller's loop, so neither side can stall the other.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import uvicorn

__all__ = ["serve_in_thread", "serving"]


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this. asyncio only sets TCP_NODELAY itself when the socket's proto is
    # IPPROTO_TCP (ours is 0), and without it every small response waits ~40 ms for a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


@contextlib.contextmanager
def serve_in_thread(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 20.0,
    shutdown_timeout: float = 10.0,
) -> Iterator[str]:
    """Run ``app`` until the block exits; yields its base URL (``http://127.0.0.1:PORT``).

    ``port=0`` binds a free port. Open streams (SSE) are closed at shutdown after
    ``shutdown_timeout`` seconds, so the thread always ends.
    """
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=max(1, int(shutdown_timeout / 2)),
        ws="none",
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def _run() -> None:
        try:
            anyio.run(_serve, server, sock)
        except BaseException as exc:  # surfaced to the caller below
            failure.append(exc)

    thread = threading.Thread(target=_run, name=f"serve-{bound_port}", daemon=True)
    thread.start()
    waited = 0.0
    while not server.started and thread.is_alive() and waited < startup_timeout:
        thread.join(0.01)
        waited += 0.01
    if not server.started:
        server.should_exit = True
        thread.join(shutdown_timeout)
        sock.close()
        raise RuntimeError(f"server on {host}:{bound_port} did not start") from (failure[0] if failure else None)
    try:
        yield f"http://{host}:{bound_port}"
    finally:
        server.should_exit = True
        thread.join(shutdown_timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(shutdown_timeout)
        sock.close()


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    await server.serve(sockets=[sock])


@contextlib.asynccontextmanager
async def serving(app: Any, *, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """The async form of :func:`serve_in_thread`; start and stop run off the event loop."""
    cm = serve_in_thread(app, host=host, port=port)
    url = await anyio.to_thread.run_sync(cm.__enter__)
    try:
        yield url
    finally:
        await anyio.to_thread.run_sync(cm.__exit__, None, None, None)
