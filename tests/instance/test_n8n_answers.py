"""How the client reads n8n 2.41's answers, with a mock transport answering exactly as n8n does: the
refusals whose cause it names in one line, the memory route it learns is missing, message pages,
and deletes of what is already gone. (The same calls against the real n8n: ``tests/n8n``.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from threadcase import wire
from threadcase.errors import InstanceError, MissingRouteError, ProviderError
from threadcase.instance import InstanceClient, RetryPolicy
from threadcase.instance.models import InstanceFeatures

pytestmark = pytest.mark.anyio

URL = "http://n8n.test"
COOKIE = "n8n-auth=eyJhbGciOi.session; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax"
USER = {"id": "u1", "email": "owner@example.com", "role": "global:owner"}
Handler = Callable[[httpx.Request], httpx.Response]


def _login(handler: Handler, cookie: str = COOKIE) -> Handler:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/rest/login" and request.method == "POST":
            return httpx.Response(200, json={"data": USER}, headers={"set-cookie": cookie})
        return handler(request)

    return answer


def _client(handler: Handler, **kwargs: Any) -> InstanceClient:
    fast = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.002, jitter=0.0)
    return InstanceClient(
        URL, email="owner@example.com", password="pw", retry=fast, transport=httpx.MockTransport(handler), **kwargs
    )


async def test_a_secure_cookie_over_http_is_caught_at_login_naming_the_fix() -> None:
    """Regression: n8n's default N8N_SECURE_COOKIE=true set a Secure cookie httpx never sends over
    http://, so every call after the login was 401 and the run ended "instance refused"."""
    secure = COOKIE + "; Secure"
    with pytest.raises(InstanceError) as refused:
        async with _client(_login(lambda r: httpx.Response(200, json={"data": {}}), cookie=secure)):
            pass
    message = str(refused.value)
    assert "N8N_SECURE_COOKIE=false" in message
    assert "https" in message


async def test_a_401_right_after_a_login_names_the_cookie_not_the_password() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"status": "error", "message": "Unauthorized"})

    async with _client(_login(handler)) as client:
        with pytest.raises(InstanceError) as refused:
            await client.personal_project()
    assert refused.value.status == 401
    assert "401 right after a successful login" in str(refused.value)
    assert "N8N_SECURE_COOKIE=false" in str(refused.value)


@pytest.mark.parametrize(
    ("path", "feature"),
    [("/folders", "feat:folders"), ("/rest/projects", "feat:projectRole:admin")],
)
async def test_a_licence_403_names_the_feature_to_switch_on(path: str, feature: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"status": "error", "message": "Plan lacks license for this feature"})

    async with _client(_login(handler)) as client:
        call = client.list_folders("p1") if path == "/folders" else client.create_project("Team")
        with pytest.raises(InstanceError) as refused:
            await call
    message = str(refused.value)
    assert f"licence lacks {feature}" in message
    assert f'PATCH /rest/e2e/feature {{"feature": "{feature}", "enabled": true}}' in message


async def test_a_chat_refused_for_want_of_a_model_is_a_provider_error_carrying_n8ns_words() -> None:
    said = "The n8n Assistant has no model configured. An instance owner can add one in Settings > n8n Assistant."

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"code": 400, "message": said, "stacktrace": "ResponseError: ...\n at x"})

    async with _client(_login(handler)) as client:
        with pytest.raises(ProviderError) as refused:
            await client.chat("t1", wire.ChatRequest(message="hi"))
    assert refused.value.reason == said
    assert "stacktrace" not in str(refused.value)


async def test_the_missing_memory_route_is_asked_once_per_lane() -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        page = f"<!DOCTYPE html>\n<html><body><pre>Cannot GET {request.url.path}</pre></body></html>"
        return httpx.Response(404, text=page, headers={"content-type": "text/html; charset=utf-8"})

    features = InstanceFeatures()
    async with (
        _client(_login(handler), features=features) as first,
        _client(_login(handler), features=features) as second,
    ):
        with pytest.raises(MissingRouteError, match="no route GET /rest/instance-ai/eval/threads/t1/memory"):
            await first.thread_memory("t1")
        with pytest.raises(MissingRouteError, match="no memory route"):
            await second.thread_memory("t2")
        with pytest.raises(MissingRouteError):
            await first.thread_memory("t3")
    assert asked == ["/rest/instance-ai/eval/threads/t1/memory"]
    assert features.memory_route is False


async def test_a_thread_that_is_not_found_is_not_a_missing_route() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"code": 404, "message": "Thread not found"})

    async with _client(_login(handler)) as client:
        with pytest.raises(InstanceError) as refused:
            await client.thread_memory("t1")
        assert not isinstance(refused.value, MissingRouteError)
        await client.delete_thread("t1")  # a missing thread still counts as deleted
    assert client.features.memory_route is None


async def test_messages_are_read_raw_page_after_page_oldest_first() -> None:
    """n8n pages newest first (page 0 = the newest ``limit``, each page oldest first) and answers 50
    unless asked; a long thread's cleanup must see its earliest tool calls too."""
    total = 430
    stored = [
        {"id": f"m{i}", "role": "user", "type": "llm", "content": [{"type": "text", "text": str(i)}], "createdAt": "x"}
        for i in range(total)
    ]
    asked: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        limit, page = int(params.get("limit", 50)), int(params.get("page", 0))
        end = max(0, total - page * limit)
        return httpx.Response(200, json={"data": {"threadId": "t1", "messages": stored[max(0, end - limit) : end]}})

    async with _client(_login(handler)) as client:
        messages = await client.thread_messages("t1")
    assert [m.id for m in messages] == [f"m{i}" for i in range(total)]
    assert [a["page"] for a in asked] == ["0", "1", "2"]
    assert {a["raw"] for a in asked} == {"true"}
    assert messages[0].blocks == [{"type": "text", "text": "0"}]


async def test_deleting_a_workflow_archives_it_first_and_a_missing_one_is_already_gone() -> None:
    calls: list[str] = []
    gone = {"wf-gone"}

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.path}")
        workflow = request.url.path.split("/")[3]
        if workflow in gone:
            what = "archive" if request.url.path.endswith("/archive") else "delete"
            message = f"Could not {what} the workflow - workflow was not found in your projects"
            return httpx.Response(403, json={"code": 403, "message": message})
        if request.url.path.endswith("/archive"):
            return httpx.Response(200, json={"data": {"id": workflow, "isArchived": True}})
        if not any(c == f"POST /rest/workflows/{workflow}/archive" for c in calls):
            return httpx.Response(
                400, json={"code": 400, "message": "Workflow must be archived before it can be deleted."}
            )
        return httpx.Response(200, json={"data": True})

    async with _client(_login(handler)) as client:
        await client.delete_workflow("wf-live")
        await client.delete_workflow("wf-gone")
    assert calls == [
        "DELETE /rest/workflows/wf-live",
        "POST /rest/workflows/wf-live/archive",
        "DELETE /rest/workflows/wf-live",
        "DELETE /rest/workflows/wf-gone",
    ]


async def test_a_refusal_shows_the_servers_message_and_where_not_its_json() -> None:
    issue = {
        "validation": "regex",
        "code": "invalid_string",
        "message": 'Model must be "provider/model-name" format',
        "path": ["agents", 0, "config", "model"],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, content=json.dumps(issue).encode(), headers={"content-type": "application/json"})

    async with _client(_login(handler)) as client:
        with pytest.raises(InstanceError) as refused:
            await client.restore_thread(wire.RestoreThreadRequest(threadId="t1"))
    assert str(refused.value).endswith(': Model must be "provider/model-name" format (at agents.0.config.model)')
