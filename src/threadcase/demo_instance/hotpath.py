"""A direct route to the handful of endpoints every case calls, in front of FastAPI's router.

Per case a client makes ~8 requests to five routes (create thread, pin credentials, the event
stream, chat, delete thread). Through FastAPI each one walks the nested routers' pattern tables and
solves the endpoint's parameters; on two shared cores that framework work was a large part of the
demo's CPU per case. :class:`HotRoutes` is a pure ASGI middleware that recognises exactly those
method/path shapes with a dict lookup and calls the *same* endpoint functions with a starlette
``Request``; anything else (and any path it does not match exactly) goes on to FastAPI unchanged.

What it keeps identical: the endpoint code and its response object; an :class:`ApiError` becomes the
same ``{"code", "message"}`` body the app's handler writes; any other exception propagates to the
app's outer error middleware (the same 500 body as before); middleware added after it (the fault
injector) still wraps it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from threadcase.demo_instance.apierror import ApiError, error_response

__all__ = ["Endpoint", "HotRoutes"]

Endpoint = Callable[..., Awaitable[Response]]
"""``endpoint(*path_params, request)`` -> a response (the route functions of ``routes_*``)."""


class HotRoutes:
    """Pure ASGI middleware: exact ``(method, path shape)`` matches go straight to their endpoint."""

    def __init__(self, app: Any, prefix: str, routes: dict[tuple[str, str], Endpoint]) -> None:
        """``routes`` maps ``(METHOD, "a/{x}/b")`` (relative to ``prefix``) to the endpoint function."""
        self.app = app
        self._prefix = prefix.rstrip("/") + "/"
        # (method, segment count, first segment) -> [(segments with None for a parameter, names, endpoint)]
        self._table: dict[tuple[str, int, str], list[tuple[tuple[str | None, ...], tuple[str, ...], Endpoint]]] = {}
        for (method, pattern), endpoint in routes.items():
            parts = pattern.split("/")
            if parts[0].startswith("{"):
                raise ValueError(f"a hot route must start with a literal segment: {pattern!r}")
            shape = tuple(None if p.startswith("{") else p for p in parts)
            names = tuple(p[1:-1] for p in parts if p.startswith("{"))
            self._table.setdefault((method, len(parts), parts[0]), []).append((shape, names, endpoint))

    def _find(self, method: str, path: str) -> tuple[Endpoint, dict[str, str]] | None:
        if not path.startswith(self._prefix):
            return None
        parts = path[len(self._prefix) :].split("/")
        for shape, names, endpoint in self._table.get((method, len(parts), parts[0]), ()):
            params: list[str] = []
            for want, got in zip(shape, parts, strict=True):
                if want is None:
                    if not got:
                        break  # a parameter is one non-empty segment, as in the router's pattern
                    params.append(got)
                elif want != got:
                    break
            else:
                return endpoint, dict(zip(names, params, strict=True))
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self._find(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        endpoint, params = found
        scope["path_params"] = params
        request = Request(scope, receive, send)
        try:
            response = await endpoint(*params.values(), request)
        except ApiError as exc:
            response = error_response(exc)
        await response(scope, receive, send)
