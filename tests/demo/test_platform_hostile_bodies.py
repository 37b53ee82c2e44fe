"""The demo instance under hostile request bodies: every POST/PATCH route answers 400 (malformed JSON of any
kind) or 413 (over the documented limit) with one JSON line — never a 500, a Python exception's text, or a
dropped connection — and stays healthy afterwards."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi.routing import APIRoute

from tests.demo.conftest import ScriptedAgent, server, session
from threadcase.demo_instance import routes_ai, routes_eval, routes_executions, routes_resources
from threadcase.demo_instance.app import create_app
from threadcase.demo_instance.settings import DEFAULT_MAX_BODY_BYTES, DemoSettings

pytestmark = pytest.mark.anyio


def _body_routes() -> list[tuple[str, str]]:
    """Every POST/PATCH route of the app and its routers (path templates, filled in by :func:`_fill`)."""
    app = create_app(DemoSettings())
    routes = [*app.routes]
    for module in (routes_ai, routes_eval, routes_executions, routes_resources):
        routes += module.router.routes
    found = []
    for route in routes:
        if isinstance(route, APIRoute):
            for method in sorted((route.methods or set()) & {"POST", "PATCH"}):
                if route.path != "/rest/logout":  # reads no body, and would end the tests' shared session
                    found.append((method, route.path))
    return sorted(set(found))


def _fill(path: str, ids: dict[str, str]) -> str:
    """A route template with real ids where the instance has them (so the route reaches its body)."""
    return re.sub(r"\{([^}]+)\}", lambda m: ids.get(m.group(1), "x1234567"), path)


ROUTES = _body_routes()
BODILESS = {"/rest/instance-ai/chat/{thread_id}/cancel", "/rest/workflows/{workflow_id}/archive"}
"""Routes that never read their body: whatever it holds, they answer as they would to none."""

MALFORMED = {
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
    "deeply nested objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "integer over 4300 digits": b'{"message": ' + b"9" * 5000 + b"}",
    "invalid UTF-8": b'{"message": "caf\xe9 \xff\xfe"}',
    "truncated": b'{"message": "hi',
    "not JSON at all": b"<xml/>",
    "NaN": b'{"message": NaN}',
    "lone surrogate escape": b'{"message": "\\udfff"}',
}
"""Bodies a JSON parser refuses (or Python's parser accepts but no instance should): the lone surrogate
is valid JSON that cannot be stored as text, NaN is not JSON at all."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def owner_client() -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    async with server(ScriptedAgent()) as url, session(url) as client:
        project = (await client.get("/rest/projects/personal")).json()["data"]["id"]
        created = await client.post("/rest/workflows", json={"name": "w", "nodes": [], "connections": {}})
        workflow = created.json()["data"]["id"]
        await client.post("/rest/instance-ai/threads", json={"threadId": "hostile-thread", "projectId": project})
        yield client, {"thread_id": "hostile-thread", "project_id": project, "workflow_id": workflow}


def test_every_body_route_is_covered() -> None:
    assert len(ROUTES) >= 18, ROUTES  # a renamed route must not silently shrink the coverage


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("kind", sorted(MALFORMED))
async def test_malformed_json_is_a_400_in_one_line(
    owner_client: tuple[httpx.AsyncClient, dict[str, str]], method: str, path: str, kind: str
) -> None:
    client, ids = owner_client
    response = await client.request(
        method, _fill(path, ids), content=MALFORMED[kind], headers={"content-type": "application/json"}
    )
    # A route may refuse before reading the body (no such thread: 404; not the owner: 403); what it
    # must never do is fail on the body with a 5xx or a 422 that treats broken JSON as a bad field.
    allowed = {400, 404, 403, 409} | ({200} if path in BODILESS else set())
    assert response.status_code in allowed, (kind, response.status_code, response.text[:300])
    health = await client.get("/healthz/readiness")
    assert health.status_code == 200
    if response.status_code == 200:
        return  # a route that never reads its body
    message = response.json()["message"]
    assert "\n" not in message
    assert len(message) < 300
    assert "Traceback" not in message
    assert "Error:" not in message
    assert "exception" not in message.lower()
    if response.status_code == 400:
        assert message.startswith("invalid "), message


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_body_over_the_limit_is_a_413_unread(
    owner_client: tuple[httpx.AsyncClient, dict[str, str]], method: str, path: str
) -> None:
    client, ids = owner_client
    big = b'{"message": "' + b"a" * (DEFAULT_MAX_BODY_BYTES + 10) + b'"}'
    response = await client.request(method, _fill(path, ids), content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413, response.text[:200]
    assert f"{DEFAULT_MAX_BODY_BYTES // 2**20} MiB" in response.json()["message"]


async def test_a_chunked_body_over_the_limit_is_a_413() -> None:
    """Without a Content-Length the limit is counted as the body arrives (it is never read whole)."""
    async with server(ScriptedAgent(), max_body_bytes=4096) as url, session(url) as client:

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"message": "'
            for _ in range(100):
                yield b"b" * 1024
            yield b'"}'

        response = await client.post("/rest/workflows", content=chunks(), headers={"content-type": "application/json"})
        assert response.status_code == 413, response.text
        assert "4 KiB" in response.json()["message"]
        small = await client.post("/rest/workflows", json={"name": "fits", "nodes": [], "connections": {}})
        assert small.status_code == 200, small.text


async def test_an_unexpected_failure_never_shows_the_exception_text() -> None:
    """A bug in a route answers 500 with a fixed line; the exception's own text (paths, values) stays in."""
    from threadcase.demo_instance.app import create_app as make

    app = make(DemoSettings())

    @app.get("/rest/boom")
    async def boom() -> None:
        raise KeyError("secret-internal-detail")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://demo") as client:
        response = await client.get("/rest/boom")
    assert response.status_code == 500
    assert "secret-internal-detail" not in response.text
    assert "KeyError" not in response.text
