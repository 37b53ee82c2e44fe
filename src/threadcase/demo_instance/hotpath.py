"""A direct route to the handful of endpoints every case calls, in front of FastAPI.

Per case a client makes ~8 requests to five routes (create thread, pin credentials, the event
stream, chat, delete thread). Through FastAPI each one pays its application call (telemetry check,
error and body-limit middleware), the nested routers' pattern tables and parameter solving: measured
on loopback, ~240 µs of server CPU for a one-line FastAPI route against ~70 µs for uvicorn alone.
:class:`DemoApp` is the FastAPI app with one addition: before any of that, :class:`HotRoutes`
recognises exactly those method/path shapes with a dict lookup and calls the *same* endpoint
functions with a starlette ``Request``. Anything else (and any path it does not match exactly) goes
through FastAPI unchanged.

What stays identical: the endpoint code and its response object; an :class:`ApiError` becomes the
same ``{"code", "message"}`` body the app's handler writes; any other exception gets the app's own
500 handler and is re-raised (logged by the server), as starlette's error middleware does; the fault
injector applies to these routes exactly as to the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from fastapi import FastAPI, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from threadcase.demo_instance.apierror import ApiError, error_response
from threadcase.demo_instance.faults import FaultInjector, FaultMiddleware

__all__ = ["DemoApp", "Endpoint", "HotRoutes"]

Endpoint = Callable[..., Awaitable[Response]]
"""``endpoint(*path_params, request)`` -> a response (the route functions of ``routes_*``)."""

ErrorHandler = Callable[[Request, Exception], Awaitable[Response]]
Found = tuple[Endpoint, dict[str, str]]


class HotRoutes:
    """Exact ``(method, path shape)`` matches, served straight by their endpoint."""

    def __init__(
        self,
        prefix: str,
        routes: dict[tuple[str, str], Endpoint],
        *,
        on_error: ErrorHandler,
        faults: FaultInjector | None = None,
    ) -> None:
        """``routes`` maps ``(METHOD, "a/{x}/b")`` (relative to ``prefix``) to the endpoint function;
        ``on_error`` answers an unexpected exception (the app's 500 handler)."""
        self._prefix = prefix.rstrip("/") + "/"
        self._on_error = on_error
        self._faults = faults
        # (method, segment count, first segment) -> [(segments with None for a parameter, names, endpoint)]
        self._table: dict[tuple[str, int, str], list[tuple[tuple[str | None, ...], tuple[str, ...], Endpoint]]] = {}
        for (method, pattern), endpoint in routes.items():
            parts = pattern.split("/")
            if parts[0].startswith("{"):
                raise ValueError(f"a hot route must start with a literal segment: {pattern!r}")
            shape = tuple(None if p.startswith("{") else p for p in parts)
            names = tuple(p[1:-1] for p in parts if p.startswith("{"))
            self._table.setdefault((method, len(parts), parts[0]), []).append((shape, names, endpoint))

    def find(self, method: str, path: str) -> Found | None:
        """The endpoint and path parameters for this request, or None (FastAPI decides)."""
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

    async def serve(self, found: Found, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request :meth:`find` matched (through the fault injector when faults are on)."""
        if self._faults is None:
            await self._run(found, scope, receive, send)
            return

        async def run(scope: Scope, receive: Receive, send: Send) -> None:
            await self._run(found, scope, receive, send)

        await FaultMiddleware(run, self._faults)(cast(dict[str, Any], scope), receive, send)

    async def _run(self, found: Found, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint, params = found
        scope["path_params"] = params
        request = Request(scope, receive, send)
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            try:
                response = await endpoint(*params.values(), request)
            except ApiError as exc:
                response = error_response(exc)
            await response(scope, receive, tracked)
        except Exception as exc:
            # As starlette's ServerErrorMiddleware: the app's 500 answer if nothing was sent yet, then
            # re-raise so the server logs the traceback.
            if not started:
                await (await self._on_error(request, exc))(scope, receive, send)
            raise


class DemoApp(FastAPI):
    """The demo's FastAPI app; requests :attr:`hot` matches skip FastAPI's machinery (see the module)."""

    hot: HotRoutes | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a hot route directly, anything else through FastAPI."""
        hot = self.hot
        if hot is not None and scope["type"] == "http":
            found = hot.find(scope["method"], scope["path"])
            if found is not None:
                scope["app"] = self  # what FastAPI sets: endpoints reach the platform through request.app
                await hot.serve(found, scope, receive, send)
                return
        await super().__call__(scope, receive, send)
