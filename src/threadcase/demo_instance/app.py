"""The demo instance's ASGI app: an n8n-compatible subset of the REST API (see DESIGN.md).

The shapes are n8n 2.41's (see ``README.md`` there): responses are ``{"data": ...}`` (workflow and
folder lists ``{count, data}``, data tables ``{data: {count, data}}``); errors are ``{"code": status,
"message": ...}``. Every ``/rest`` route but ``POST /rest/login`` needs the ``n8n-auth`` cookie (401),
eval routes need the owner (403), a thread belongs to its creator (403 for anyone else). Request
bodies are validated with the models of :mod:`threadcase.wire` and answer 422 with a message naming
the field and value — never a 500.

Routes (``/rest/instance-ai`` = ``AI``):

- ``POST /rest/login`` ``{emailOrLdapLoginId, password}``, ``GET /rest/login``, ``POST /rest/logout``,
  ``GET /healthz``, ``GET /healthz/readiness``
- ``GET /threadcase/demo`` (no login; not an n8n route) -> ``{misbehaviours: [every name this demo
  knows], misbehave: [those switched on for every thread]}``: ``threadcase control`` asks it to tell a
  demo at ``--base-url`` from a real n8n
- ``POST AI/threads`` ``{threadId, projectId?, source, origin, sourceContext?}`` -> ``{thread, created}``
  (the same id again: ``created: false``; ``sourceContext.demoMisbehave: [names]`` switches misbehaviours
  on for the thread), ``DELETE AI/threads/:id`` (cancels its run), ``GET AI/threads/:id/status``
  ``{hasActiveRun, isSuspended, runId?, backgroundTasks, memoryTasks, promptConfiguration?}``,
  ``GET AI/threads/:id/messages`` (``?limit&page``; ``content`` a string, the blocks with ``?raw=true``)
- ``POST AI/chat/:threadId`` (a ``wire.ChatRequest``; header ``X-Demo-Misbehave: a,b``; 409 while a run
  is in progress) -> ``{runId}``; ``POST AI/chat/:threadId/cancel`` -> ``{cancelled}``
- ``GET AI/events/:threadId`` Server-Sent Events (see :mod:`.events`)
- ``POST AI/confirm/:requestId`` (a ``wire.ConfirmBody``; the same body twice is one delivery, a
  different second body is 409, an unknown id 404)
- ``GET AI/debug/threads/:threadId/runs`` -> ``{threadId, runs: [{runId, threadId, startedAt (epoch ms),
  stepCount, workflowCodeCount, label, steps}]}``, ``GET AI/debug/runs/:runId`` -> ``{threadId, runId,
  startedAt, label, nextStepIndex, steps: [{stepNumber, input, output: {usage, ...}}], workflowCode}``
- eval (owner only): ``POST AI/eval/restore-thread``, ``POST AI/eval/thread-credential-allowlist``,
  ``POST AI/eval/seed-data-table-rows``, ``POST AI/eval/execute-with-llm-mock/:workflowId``
  (see :mod:`.mock_exec`), ``GET AI/eval/threads/:threadId/memory`` (see :mod:`.memory`)
- ``GET/POST /rest/projects``, ``GET /rest/projects/personal``, ``DELETE /rest/projects/:id``
- ``GET/POST /rest/workflows``, ``GET/PATCH/DELETE /rest/workflows/:id``, ``POST .../:id/archive``
- ``POST /rest/workflows/:id/run`` ``{triggerToStartFrom}`` -> ``{executionId}`` (credential-free manual or
  schedule workflows only, else 400), ``GET /rest/executions?workflowId=``, ``GET /rest/executions/:id``
  (see :mod:`.routes_executions`)
- ``GET/POST /rest/credentials``, ``GET /rest/credentials/:id?includeData=true``,
  ``DELETE /rest/credentials/:id``, ``POST /rest/credentials/test`` ``{credentials: {id?, type?,
  data?}, threadId?}`` -> ``{status: OK|Error, message}`` (bypass-listed ids of the thread pass; data
  with ``eval-placeholder`` or no data fails; anything else passes)
- ``GET/POST /rest/projects/:pid/folders`` (``take`` 10 unless given, ``skip``), ``DELETE .../folders/:id``
  (with its sub-folders; its workflows archived at the root); ``GET/POST /rest/projects/:pid/data-tables``,
  ``GET .../data-tables/:id/columns``, ``GET .../data-tables/:id/rows``, ``DELETE .../data-tables/:id``
- ``GET /rest/projects/:pid/agents/v2/:id/config`` -> ``{id, config}``, ``GET .../skills`` ->
  ``{skillId: skill}``, ``DELETE /rest/projects/:pid/agents/v2/:id``
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.lowlevel import current_token
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from threadcase.demo_instance.agent.protocol import BuilderAgent
from threadcase.demo_instance.apierror import ApiError, error_response
from threadcase.demo_instance.bodies import BodyLimit
from threadcase.demo_instance.faults import FaultMiddleware
from threadcase.demo_instance.platform import AUTH_COOKIE, Platform, ok, parse_body
from threadcase.demo_instance.settings import MISBEHAVIOURS, DemoSettings

__all__ = ["create_app"]

_log = logging.getLogger("threadcase.demo")


class _Login(BaseModel):
    model_config = ConfigDict(extra="forbid")

    emailOrLdapLoginId: str
    password: str
    mfaCode: str | None = None
    mfaRecoveryCode: str | None = None


def create_app(settings: DemoSettings | None = None, *, agent: BuilderAgent | None = None) -> FastAPI:
    """A demo instance app; ``agent=None`` runs the rule-based builder (``demo_instance.agent``).

    Storage opens now (a temporary database unless ``settings.db_path``) and closes when the app's
    lifespan ends; agent turns run as tasks of that lifespan.
    """
    settings = settings or DemoSettings()
    platform = Platform(settings, agent)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            async with anyio.create_task_group() as tg:
                platform.runs.tg = tg
                platform.token = current_token()
                yield
                platform.runs.tg = None
                platform.begin_close()
                tg.cancel_scope.cancel()
        finally:
            platform.close()

    app = FastAPI(title="threadcase demo instance", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.platform = platform

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse({"code": 422, "message": f"invalid request: {where}: {first['msg']}"}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "Not found: no such route" if exc.status_code == 404 else str(exc.detail)
        return JSONResponse({"code": exc.status_code, "message": message}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not a client mistake: one fixed JSON line. The exception's text (paths, values, whatever
        # the request carried) stays in the server's debug log, never on the wire.
        _log.debug("unexpected failure on %s %s", request.method, request.url.path, exc_info=exc)
        message = "internal error in the demo instance (a bug: run it with debug logging to see it)"
        return JSONResponse({"code": 500, "message": message}, status_code=500)

    @app.get("/healthz")
    @app.get("/healthz/readiness")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/threadcase/demo")
    async def about_demo() -> dict[str, list[str]]:
        # Not an n8n route: how `threadcase control` tells a demo at --base-url from a real n8n, and
        # sees misbehaviours switched on for every thread (its clean baseline must have none).
        return {"misbehaviours": sorted(MISBEHAVIOURS), "misbehave": sorted(settings.misbehave)}

    @app.post("/rest/login")
    async def login(request: Request) -> JSONResponse:
        body = await parse_body(request, _Login, "login request")
        token, user = platform.login(body.emailOrLdapLoginId, body.password)
        response = ok(user.public())
        response.set_cookie(AUTH_COOKIE, token, httponly=True, samesite="lax", path="/")
        return response

    @app.get("/rest/login")
    async def current_user(request: Request) -> JSONResponse:
        return ok(platform.user(request).public())

    @app.post("/rest/logout")
    async def logout(request: Request) -> JSONResponse:
        platform.user(request)
        platform.logout(request.cookies.get(AUTH_COOKIE))
        response = ok({"loggedOut": True})
        response.delete_cookie(AUTH_COOKIE, path="/")
        return response

    from threadcase.demo_instance import routes_ai, routes_eval, routes_executions, routes_resources

    app.include_router(routes_ai.router)
    app.include_router(routes_eval.router)
    app.include_router(routes_resources.router)
    app.include_router(routes_executions.router)
    if platform.faults is not None:
        app.add_middleware(FaultMiddleware, injector=platform.faults)
    # Outermost: an oversized body is refused before anything else looks at the request.
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    return app


def platform_of(app: Any) -> Platform:
    """The :class:`Platform` behind an app made by :func:`create_app` (tests and the server use it)."""
    platform: Platform = app.state.platform
    return platform
