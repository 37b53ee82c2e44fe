"""Run the demo instance: as an async or sync context manager on a free loopback port (the runner's
embedded default), or in the foreground for ``threadcase demo serve``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.from_thread
import uvicorn

from threadcase.demo_instance.agent.protocol import BuilderAgent
from threadcase.demo_instance.app import create_app, platform_of
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DemoSettings

__all__ = ["demo_server", "demo_server_sync", "serve_forever"]


def _begin_close(app: Any) -> None:
    """End open SSE streams and runs on the server's loop, so shutdown does not wait for them."""
    platform = platform_of(app)
    if platform.token is None:
        return
    with contextlib.suppress(RuntimeError):  # the loop already stopped
        anyio.from_thread.run_sync(platform.begin_close, token=platform.token)


@contextmanager
def demo_server_sync(
    settings: DemoSettings | None = None, *, agent: BuilderAgent | None = None, host: str = "127.0.0.1", port: int = 0
) -> Iterator[str]:
    """Serve a demo instance in a background thread until the block exits; yields its base URL."""
    app = create_app(settings or DemoSettings(), agent=agent)
    with serve_in_thread(app, host=host, port=port) as url:
        try:
            yield url
        finally:
            _begin_close(app)


@asynccontextmanager
async def demo_server(
    settings: DemoSettings | None = None, *, agent: BuilderAgent | None = None, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[str]:
    """The async form of :func:`demo_server_sync` (start and stop run off the caller's loop)."""
    cm = demo_server_sync(settings, agent=agent, host=host, port=port)
    url = await anyio.to_thread.run_sync(cm.__enter__)
    try:
        yield url
    finally:
        await anyio.to_thread.run_sync(cm.__exit__, None, None, None)


class _Server(uvicorn.Server):
    """uvicorn, but Ctrl-C also ends open event streams at once (they never end by themselves)."""

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self._demo_app = app

    def handle_exit(self, sig: int, frame: Any) -> None:
        platform = platform_of(self._demo_app)
        if platform.token is not None:
            with contextlib.suppress(RuntimeError):
                # Called from a signal handler, between any two bytecodes of the loop's own code: the
                # loop's thread-safe hand-off is the one safe way in, and anyio has none for this.
                asyncio.get_running_loop().call_soon_threadsafe(platform.begin_close)
        super().handle_exit(sig, frame)


def _tune_gc() -> None:
    """Garbage-collector settings for a process that is only this server (never for an embedded one).

    Start-up objects (modules, FastAPI, pydantic schemas: ~60k) are frozen out of collection, and the
    youngest generation is collected every 10,000 allocations instead of 700: a turn allocates many
    short-lived dicts, and the collector's passes were ~5 % of the demo's CPU per case (~1.5 % after).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def serve_forever(
    settings: DemoSettings,
    *,
    host: str = "127.0.0.1",
    port: int = 5678,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve in the foreground until interrupted (``threadcase demo serve``); ``ready(url)`` once bound."""
    app = create_app(settings)
    _tune_gc()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        # Nothing here reads the client address, so X-Forwarded-* need not be parsed on every request.
        proxy_headers=False,
    )
    server = _Server(config, app)
    if ready is not None:
        original_startup = server.startup

        async def startup(sockets: Any = None) -> None:
            await original_startup(sockets)
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            ready(f"http://{host}:{bound}")

        server.startup = startup  # type: ignore[method-assign]
    server.run()
