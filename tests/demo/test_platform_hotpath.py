"""The hot routes in front of FastAPI: exact shapes only, and the same answers as FastAPI's router gives."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.responses import PlainTextResponse, Response

from tests.demo.conftest import MEMBER, MEMBER_PASSWORD, ScriptedAgent, events, finished, session, settings
from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.app import create_app
from threadcase.demo_instance.hotpath import DemoApp, HotRoutes
from threadcase.demo_instance.platform import _auth_token, parse_body
from threadcase.demo_instance.serve import serving
from threadcase.wire import ChatRequest, CreateThreadRequest, ThreadCredentialAllowlistRequest

pytestmark = pytest.mark.anyio


def _endpoint(name: str) -> Any:
    async def endpoint(*args: Any) -> Response:
        *params, _request = args
        return PlainTextResponse(f"{name}:{','.join(params)}")

    return endpoint


async def _on_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"code": 500, "message": f"boom: {type(exc).__name__}: {exc}"}, status_code=500)


def _table(extra: dict[tuple[str, str], Any] | None = None) -> HotRoutes:
    routes: dict[tuple[str, str], Any] = {
        ("POST", "threads"): _endpoint("create"),
        ("DELETE", "threads/{id}"): _endpoint("delete"),
        ("GET", "threads/{id}/status"): _endpoint("status"),
        ("POST", "eval/allow"): _endpoint("allow"),
        **(extra or {}),
    }
    return HotRoutes("/api", routes, on_error=_on_error)


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/api/threads", ("create", {})),
        ("DELETE", "/api/threads/t-1", ("delete", {"id": "t-1"})),
        ("GET", "/api/threads/t-1/status", ("status", {"id": "t-1"})),
        ("POST", "/api/eval/allow", ("allow", {})),
        ("GET", "/api/threads", None),  # another method: FastAPI decides (405 or another route)
        ("POST", "/api/threads/", None),  # a trailing slash: FastAPI decides (its redirect or 404)
        ("DELETE", "/api/threads/", None),  # a parameter is one non-empty segment
        ("DELETE", "/api/threads/a/b", None),
        ("GET", "/api/threads/t-1/statuses", None),
        ("POST", "/other/threads", None),
        ("POST", "/apithreads", None),
    ],
)
async def test_only_exact_shapes_are_taken(method: str, path: str, expected: tuple[str, dict[str, str]] | None) -> None:
    found = _table().find(method, path)
    if expected is None:
        assert found is None
        return
    assert found is not None
    endpoint, params = found
    assert params == expected[1]
    body = await endpoint(*params.values(), None)
    assert bytes(body.body).decode() == f"{expected[0]}:{','.join(expected[1].values())}"


async def test_everything_else_goes_on_to_the_app() -> None:
    app = DemoApp()

    @app.get("/api/threads/{thread_id}")
    async def fallback(thread_id: str) -> Response:
        return PlainTextResponse(f"fallback:{thread_id}")

    app.hot = _table()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hot") as client:
        assert (await client.post("/api/threads")).text == "create:"
        assert (await client.delete("/api/threads/x")).text == "delete:x"
        assert (await client.get("/api/threads/x")).text == "fallback:x"
        app.hot = None
        assert (await client.delete("/api/threads/x")).status_code == 405  # FastAPI's answer, no hot table


async def test_an_unexpected_error_gets_the_apps_500_answer_and_is_raised_as_through_fastapi() -> None:
    async def broken(request: Request) -> Response:
        raise RuntimeError("agent bug")

    app = DemoApp()
    app.add_exception_handler(Exception, _on_error)
    app.add_api_route("/api/broken", broken, methods=["POST"])
    answers = []
    for hot in (None, _table({("POST", "broken"): broken})):
        app.hot = hot
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://hot") as client:
            response = await client.post("/api/broken")
        answers.append((response.status_code, response.json()))
        with pytest.raises(RuntimeError, match="agent bug"):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hot") as client:
                await client.post("/api/broken")
    assert answers[0] == answers[1] == (500, {"code": 500, "message": "boom: RuntimeError: agent bug"})


_IDS = re.compile(r"(proj|run|msg|req|call)_[0-9a-f]+|\d{4}-\d\d-\d\dT[\d:.]+Z")


def _norm(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, _IDS.sub(lambda m: f"<{m.group(1) or 'time'}>", response.text)


@asynccontextmanager
async def _served(agent: ScriptedAgent, *, hot: bool, **overrides: Any) -> AsyncIterator[str]:
    app = create_app(settings(**overrides), agent=agent)
    assert isinstance(app, DemoApp)
    assert app.hot is not None
    if not hot:
        app.hot = None
    async with serving(app) as url:
        yield url


async def _conversation(url: str) -> list[tuple[str, tuple[int, str]]]:
    """Every hot route, answered and refused, as (label, (status, body with ids and times masked))."""
    out: list[tuple[str, tuple[int, str]]] = []
    async with httpx.AsyncClient(base_url=url, timeout=10.0) as anonymous:
        out.append(("no cookie", _norm(await anonymous.post("/rest/instance-ai/threads", json={"threadId": "t"}))))
    async with session(url) as client:
        ai = "/rest/instance-ai"
        out.append(("not json", _norm(await client.post(f"{ai}/threads", content=b"{"))))
        out.append(("bad field", _norm(await client.post(f"{ai}/threads", json={"threadId": 3}))))
        out.append(("create", _norm(await client.post(f"{ai}/threads", json={"threadId": "t1"}))))
        out.append(("again", _norm(await client.post(f"{ai}/threads", json={"threadId": "t1"}))))
        allow = f"{ai}/eval/thread-credential-allowlist"
        out.append(("allow unknown", _norm(await client.post(allow, json={"threadId": "t1", "credentialIds": ["x"]}))))
        out.append(("allow", _norm(await client.post(allow, json={"threadId": "t1", "credentialIds": []}))))
        out.append(("allow bad", _norm(await client.post(allow, json={"credentialIds": []}))))
        out.append(("status", _norm(await client.get(f"{ai}/threads/t1/status"))))
        out.append(("status missing", _norm(await client.get(f"{ai}/threads/nope/status"))))
        out.append(("chat missing", _norm(await client.post(f"{ai}/chat/nope", json={"message": "hi"}))))
        out.append(("chat empty", _norm(await client.post(f"{ai}/chat/t1", json={"message": " "}))))
        out.append(("events bad id", _norm(await client.get(f"{ai}/events/t1", headers={"Last-Event-ID": "x"}))))
        async with events(client, "t1") as reader:
            out.append(("chat", _norm(await client.post(f"{ai}/chat/t1", json={"message": "hello"}))))
            streamed = await reader.until(finished)
        out.append(("streamed", (200, _IDS.sub("<id>", repr([(e["type"], e["payload"]) for e in streamed])))))
        out.append(("trailing slash", _norm(await client.post(f"{ai}/threads/", json={"threadId": "t2"}))))
        out.append(("empty segment", _norm(await client.get(f"{ai}/events/"))))
        out.append(("wrong method", _norm(await client.put(f"{ai}/threads/t1"))))
        out.append(("delete", _norm(await client.delete(f"{ai}/threads/t1"))))
        out.append(("delete again", _norm(await client.delete(f"{ai}/threads/t1"))))
    async with session(url, MEMBER, MEMBER_PASSWORD) as member:
        forbidden = await member.post(f"{ai}/eval/thread-credential-allowlist", json={"threadId": "t1"})
        out.append(("member allow", _norm(forbidden)))
    return out


async def test_hot_routes_answer_exactly_as_the_router_does(agent: ScriptedAgent) -> None:
    async with _served(agent, hot=True) as url:
        hot = await _conversation(url)
    async with _served(ScriptedAgent(), hot=False) as url:
        plain = await _conversation(url)
    assert hot == plain
    statuses = {label: status for label, (status, _) in hot}
    # The conversation really exercised answers and refusals (not, say, 404s everywhere).
    assert statuses["create"] == statuses["chat"] == statuses["delete"] == statuses["allow"] == 200
    assert (statuses["no cookie"], statuses["member allow"], statuses["again"]) == (401, 403, 409)
    assert statuses["not json"] == statuses["bad field"] == statuses["chat empty"] == 422
    assert statuses["delete again"] == statuses["chat missing"] == 404


async def test_the_fault_injector_still_wraps_hot_routes(agent: ScriptedAgent) -> None:
    async with _served(agent, hot=True, faults=1.0) as url, httpx.AsyncClient(base_url=url) as client:
        response = await client.post("/rest/instance-ai/threads", json={"threadId": "t"})
    assert response.status_code == 503
    assert "demo fault" in response.json()["message"]


# --- direct body validation gives what json.loads + validation gave ----------------------------------

BODIES = [
    b"",
    b"   ",
    b"{}",
    b"[]",
    b'"x"',
    b"not json",
    b'{"threadId": "t1"}',
    b'{"threadId": "t1", "threadId": "t2"}',
    b'{"threadId": "t\\ud800"}',
    b'{"threadId": "\\u00e9\xc3\xa9 \\ud83d\\ude00", '
    b'"sourceContext": {"n": 1e400, "m": -0, "b": 123456789012345678901234567890}}',
    b'{"threadId": 5}',
    b'{"threadId": "t", "extra": 1}',
    b'{"threadId": "t", "sourceContext": {"x": NaN}}',
    b'{"threadId": "t"} trailing',
    b"\xef\xbb\xbf{}",
    '{"threadId": "t"}'.encode("utf-16"),
    b'{"message": "hi", "mode": "progressive", "observerThresholdTokens": 2000.0}',
    b'{"message": "hi", "observerThresholdTokens": 2000.5}',
    b'{"message": "hi", "observerThresholdTokens": "2000"}',
    b'{"message": "hi", "mode": "fast"}',
    b'{"message": "hi", "attachments": [{"type": "workflow", "id": "w", "name": "n"}, '
    b'{"type": "agent", "id": "a", "name": "b"}]}',
    b'{"message": "hi", "attachments": [{"type": "other", "id": "w", "name": "n"}]}',
    b'{"message": "hi", "context": {"source": "x", "nested": [1, 2.5, null, true]}}',
    b'{"threadId": "t", "credentialIds": ["a", "a", "b"], "bypassCredentialTest": null}',
    b'{"threadId": "t", "credentialIds": "a"}',
]


async def _parsed(body: bytes, model: type[BaseModel], direct: bool) -> Any:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    request = Request({"type": "http", "method": "POST", "path": "/", "headers": []}, receive)
    try:
        parsed = await parse_body(request, model, "test request", direct=direct)
    except ApiError as exc:
        return ("error", exc.status, exc.message)
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))
    return ("ok", type(parsed).__name__, repr(parsed.model_dump()))  # repr: NaN equals itself


@pytest.mark.anyio
@pytest.mark.parametrize("model", [CreateThreadRequest, ChatRequest, ThreadCredentialAllowlistRequest])
async def test_direct_body_validation_answers_as_the_two_step_path(model: type[BaseModel]) -> None:
    for body in BODIES:
        assert await _parsed(body, model, True) == await _parsed(body, model, False), body


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [(b"cookie", b"n8n-auth=abc")],
        [(b"cookie", b"other=1; n8n-auth=abc; n8n-auth=def")],
        [(b"cookie", b"n8n-auth=abc"), (b"accept", b"*/*"), (b"cookie", b"n8n-auth=xyz")],
        [(b"cookie", b'n8n-auth="quoted\\"value"')],
        [(b"cookie", b"n8n-auth")],
    ],
)
def test_the_auth_token_is_what_request_cookies_reads(headers: list[tuple[bytes, bytes]]) -> None:
    for _ in range(2):  # the second time from the cache
        request = Request({"type": "http", "method": "GET", "path": "/", "headers": headers})
        assert _auth_token(request) == request.cookies.get("n8n-auth", "")
