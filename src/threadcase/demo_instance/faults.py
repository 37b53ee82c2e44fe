"""Deliberate, reproducible unreliability for the harness's reliability tests (``--faults RATE``).

Three kinds, each drawn with probability ``rate`` from one seeded generator:

- **reject**: the request answers 503 *before doing anything*, so a retry is always safe;
- **slow**: the request is delayed (up to ``fault_delay_seconds``, 0.8 s by default) before it is handled;
- **drop**: an open SSE stream is closed after an event, mid-run (the client resumes with
  ``Last-Event-ID`` and loses nothing).

State is never corrupted: faults only ever act before a handler starts or between two events.
The event stream endpoint itself is never rejected or slowed (its drops are the SSE fault).
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import anyio

__all__ = ["FaultInjector", "FaultMiddleware"]


class FaultInjector:
    """Seeded fault decisions; thread-safe, so the order of draws is the only source of variation."""

    def __init__(self, rate: float, seed: int, *, max_delay: float = 0.8) -> None:
        self.rate = rate
        self.max_delay = max_delay
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.counts = {"reject": 0, "slow": 0, "drop": 0}

    def _draw(self, kind: str) -> bool:
        if self.rate <= 0:
            return False
        with self._lock:
            hit = self._random.random() < self.rate
            if hit:
                self.counts[kind] += 1
        return hit

    def reject(self) -> bool:
        """This request answers 503 before doing anything."""
        return self._draw("reject")

    def slow(self) -> float:
        """Seconds to delay this request (0 = not slowed)."""
        if not self._draw("slow"):
            return 0.0
        with self._lock:
            return self.max_delay * (0.25 + 0.75 * self._random.random())

    def drop(self) -> bool:
        """This event stream drops right after the event just sent."""
        return self._draw("drop")


class FaultMiddleware:
    """Pure ASGI middleware (streams pass through untouched) applying reject/slow to ``/rest`` calls."""

    def __init__(self, app: Any, injector: FaultInjector) -> None:
        self.app = app
        self.injector = injector

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or not path.startswith("/rest/") or path.startswith("/rest/instance-ai/events/"):
            await self.app(scope, receive, send)
            return
        if self.injector.reject():
            body = json.dumps({"code": 503, "message": "demo fault: service unavailable, retry"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"retry-after", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        delay = self.injector.slow()
        if delay:
            await anyio.sleep(delay)
        await self.app(scope, receive, send)
