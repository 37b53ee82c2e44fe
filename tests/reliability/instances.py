"""Demo instances that misbehave in one precise way, for the reliability tests: a wrapper around the
demo's ASGI app answers chosen requests with a 503 (as an overloaded proxy would) or delays them."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadcase.demo_instance.app import create_app
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DemoSettings


@dataclass
class Trouble:
    """Which requests go wrong: ``refuse`` answers 503 to ``(method, path regex)`` the first ``times`` times
    (None = always); ``slow`` delays matching requests by ``seconds``."""

    refuse: list[tuple[str, str]] = field(default_factory=list)
    times: int | None = None
    slow: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    echo: list[tuple[str, str]] = field(default_factory=list)
    """Answered 400 with the request's headers and body in the message, as a careless proxy's error page
    does (the first time each)."""
    refused: int = 0
    echoed: int = 0

    def matches(self, rules: list[tuple[str, str]], method: str, path: str) -> bool:
        return any(method == m and re.fullmatch(p, path) for m, p in rules)


class _Troubled:
    def __init__(self, app: Any, trouble: Trouble) -> None:
        self.app = app
        self.trouble = trouble

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            method, path = scope["method"], scope["path"]
            trouble = self.trouble
            if trouble.matches(trouble.slow, method, path):
                import anyio

                await anyio.sleep(trouble.seconds)
            if trouble.matches(trouble.echo, method, path) and not trouble.echoed:
                trouble.echoed += 1
                received = b""
                while True:
                    message = await receive()
                    received += message.get("body", b"")
                    if not message.get("more_body"):
                        break
                headers = {k.decode(): v.decode() for k, v in scope["headers"]}
                text = f"rejected by the gateway; request headers: {headers}; body: {received.decode()}"
                body = json.dumps({"code": 400, "message": text}).encode()
                await send(
                    {"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json")]}
                )
                await send({"type": "http.response.body", "body": body})
                return
            if trouble.matches(trouble.refuse, method, path) and (
                trouble.times is None or trouble.refused < trouble.times
            ):
                trouble.refused += 1
                body = json.dumps({"code": 503, "message": "overloaded, retry"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"0")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


@contextmanager
def troubled_demo(db: Path, trouble: Trouble, **settings: Any) -> Iterator[str]:
    """A demo instance on ``db`` whose requests go wrong as ``trouble`` says; yields its URL."""
    app = create_app(DemoSettings.model_validate({"db_path": db, **settings}))
    with serve_in_thread(_Troubled(app, trouble)) as url:
        yield url
    time.sleep(0)  # the server thread has ended: the database is closed
