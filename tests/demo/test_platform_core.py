"""Contract tests of the demo platform's core: auth, threads, chat, the event stream, confirm, cancel."""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.demo.conftest import (
    MEMBER,
    MEMBER_PASSWORD,
    ScriptedAgent,
    chat,
    data,
    events,
    finished,
    new_thread,
    server,
    session,
    settings,
)
from threadcase.demo_instance.app import create_app, platform_of
from threadcase.demo_instance.server import demo_server_sync
from threadcase.demo_instance.settings import DemoSettings

pytestmark = pytest.mark.anyio


async def test_health_and_login(demo: str) -> None:
    async with httpx.AsyncClient(base_url=demo) as client:
        assert (await client.get("/healthz/readiness")).status_code == 200
        wrong = await client.post("/rest/login", json={"emailOrLdapLoginId": "owner@threadcase.dev", "password": "x"})
        assert wrong.status_code == 401
        assert "threadcase-demo" not in wrong.text
        good = await client.post(
            "/rest/login", json={"emailOrLdapLoginId": "owner@threadcase.dev", "password": "threadcase-demo"}
        )
        user = data(good)
        assert user["isOwner"] is True
        assert "n8n-auth" in good.cookies


_OPEN_ROUTES = {("POST", "/rest/login")}


def _rest_routes() -> list[tuple[str, str]]:
    """Every (method, path) under /rest of a real app, path parameters filled in.

    Read from ``create_app(...).routes`` (included routers walked too), so a route added later is
    covered without editing this list. The app is built on a throwaway database and closed at once.
    """

    def walk(routes: list[Any]) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for route in routes:
            included = getattr(route, "original_router", None)
            if included is not None:
                found += walk(list(included.routes))
            elif isinstance(getattr(route, "path", None), str):
                found += [(m, route.path) for m in sorted(getattr(route, "methods", None) or []) if m != "HEAD"]
        return found

    with tempfile.TemporaryDirectory() as folder:
        app = create_app(DemoSettings(db_path=Path(folder) / "routes.sqlite"))
        try:
            pairs = walk(list(app.routes))
        finally:
            platform_of(app).close()
    rest = sorted({(m, re.sub(r"\{[^}]+\}", "x1", p)) for m, p in pairs if p.startswith("/rest")})
    return [pair for pair in rest if pair not in _OPEN_ROUTES]


_REST_ROUTES = _rest_routes()


async def test_the_route_list_is_complete() -> None:
    assert len(_REST_ROUTES) >= 30
    assert ("GET", "/rest/instance-ai/events/x1") in _REST_ROUTES
    assert ("POST", "/rest/instance-ai/eval/restore-thread") in _REST_ROUTES


@pytest.fixture(scope="module")
def shared_demo() -> Iterator[str]:
    """One server for the whole route sweep (no test here changes state; starting 40 servers is slow)."""
    with demo_server_sync(settings()) as url:
        yield url


@pytest.mark.parametrize(("method", "path"), _REST_ROUTES)
async def test_every_rest_route_needs_the_cookie(shared_demo: str, method: str, path: str) -> None:
    async with httpx.AsyncClient(base_url=shared_demo) as client:
        response = await client.request(method, path, json={})
    assert response.status_code == 401, response.text
    assert "log in" in response.json()["message"]


async def test_bad_bodies_are_422_with_the_field_named(owner: httpx.AsyncClient) -> None:
    bad = await owner.post("/rest/instance-ai/threads", json={"projectId": "x"})
    assert bad.status_code == 422
    assert "threadId" in bad.json()["message"]
    not_json = await owner.post(
        "/rest/instance-ai/threads", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 400  # malformed JSON is a bad request, not a bad field
    await new_thread(owner, "t-422")
    unknown = await owner.post("/rest/instance-ai/chat/t-422", json={"message": "hi", "colour": "red"})
    assert unknown.status_code == 422
    assert "colour" in unknown.json()["message"]
    low = await owner.post("/rest/instance-ai/chat/t-422", json={"message": "hi", "observerThresholdTokens": 5})
    assert low.status_code == 422
    assert "observerThresholdTokens" in low.json()["message"]
    empty = await owner.post("/rest/instance-ai/chat/t-422", json={"message": "  "})
    assert empty.status_code == 422
    bad_confirm = await owner.post("/rest/instance-ai/confirm/r1", json={"kind": "nope"})
    assert bad_confirm.status_code in (404, 422)
    misbehave = await owner.post(
        "/rest/instance-ai/threads",
        json={"threadId": "t-mb", "sourceContext": {"demoMisbehave": ["sulks"]}},
    )
    assert misbehave.status_code == 422
    assert "sulks" in misbehave.json()["message"]


async def test_chat_streams_events_with_ids_and_stores_messages(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    await new_thread(owner, "t-chat")
    async with events(owner, "t-chat") as reader:
        run_id = await chat(owner, "t-chat", [{"say": "Hello"}, {"say": "there."}])
        seen = await reader.until(finished)
    types = [e["type"] for e in seen]
    assert types == ["run-start", "text-delta", "text-delta", "run-finish"]
    # As n8n: deltas carry no id, and the durable text block (id 2) is never sent live.
    assert [e.get("id") for e in seen] == ["1", None, None, "3"]
    assert seen[-1]["payload"] == {"status": "completed"}
    assert all(e["runId"] == run_id and e["agentId"] == f"orchestrator-{run_id}" for e in seen)
    raw = data(await owner.get("/rest/instance-ai/threads/t-chat/messages", params={"raw": "true"}))["messages"]
    assert [m["role"] for m in raw] == ["user", "assistant"]
    assert raw[1]["content"][0]["text"] == "Hello\n\nthere."
    rich = data(await owner.get("/rest/instance-ai/threads/t-chat/messages"))
    assert [m["content"] for m in rich["messages"]] == [raw[0]["content"][0]["text"], "Hello\n\nthere."]
    assert rich["messages"][1]["runId"] == run_id
    status = data(await owner.get("/rest/instance-ai/threads/t-chat/status"))
    assert (status["hasActiveRun"], status["isSuspended"], status["memoryTasks"]) == (False, False, [])
    assert "status" not in status
    assert agent.turns[0].thread_id == "t-chat"
    async with events(owner, "t-chat", last_event_id="1") as reader:
        replayed = await reader.until(finished)
    # A resume replays the durable log: the text as one block, never the deltas.
    assert [(e["type"], e["id"]) for e in replayed] == [("text-block", "2"), ("run-finish", "3")]
    assert replayed[0]["payload"] == {"text": "Hello\n\nthere."}


async def test_stream_without_last_event_id_is_live_only_and_resume_replays(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-resume")
    async with events(owner, "t-resume") as reader:
        await chat(owner, "t-resume", [{"say": "one"}])
        first = await reader.until(finished)
    async with events(owner, "t-resume") as reader:
        await chat(owner, "t-resume", [{"say": "two"}])
        second = await reader.until(finished)
    # Live only: the second connection never saw the first run's events.
    assert int(second[0]["id"]) == int(first[-1]["id"]) + 1
    # Resume: everything after id 2, in order, then live.
    async with events(owner, "t-resume", last_event_id="2") as reader:
        replayed = await reader.until(lambda e: e["id"] == second[-1]["id"])
        assert [int(e["id"]) for e in replayed] == list(range(3, int(second[-1]["id"]) + 1))
        await chat(owner, "t-resume", "three")
        live = await reader.until(finished)
        assert live[0]["type"] == "run-start"
    bad = await owner.get("/rest/instance-ai/events/t-resume", headers={"Last-Event-ID": "abc"})
    assert bad.status_code == 422


async def test_heartbeat_comments_keep_an_idle_stream_alive(agent: ScriptedAgent) -> None:
    async with server(agent, heartbeat_seconds=0.05) as url, session(url) as client:
        await new_thread(client, "t-hb")
        async with events(client, "t-hb") as reader:
            with anyio.move_on_after(0.3):
                await reader.next(within=1.0)
            assert any("heartbeat" in c for c in reader.comments)


async def test_heartbeats_come_only_after_an_idle_interval_and_the_stream_stays_live(agent: ScriptedAgent) -> None:
    async with server(agent, heartbeat_seconds=0.25) as url, session(url) as client:
        await new_thread(client, "t-hb2")
        async with events(client, "t-hb2") as reader:
            await chat(client, "t-hb2", "first")
            await reader.until(finished)
            assert not any("heartbeat" in c for c in reader.comments)  # events kept it busy
            await anyio.sleep(0.6)  # idle: the comments wait in the connection until the next read
            await chat(client, "t-hb2", "second")
            second = await reader.until(finished)
            beats = sum("heartbeat" in c for c in reader.comments)
            assert 1 <= beats <= 3  # one per idle 0.25 s, not one per wake-up
    assert [e["type"] for e in second] == ["run-start", "text-delta", "run-finish"]


async def test_tool_calls_and_errors_are_streamed(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    await new_thread(owner, "t-tools")
    script = [
        {"tool": "list-workflows", "args": {}},
        {"tool": "get-workflow", "args": {"workflowId": "missing"}},
        {"say": "done"},
    ]
    async with events(owner, "t-tools") as reader:
        await chat(owner, "t-tools", script)
        seen = await reader.until(finished)
    types = [e["type"] for e in seen]
    assert types == [
        "run-start",
        "tool-call",
        "tool-result",
        "tool-call",
        "tool-error",
        "text-delta",
        "text-delta",
        "run-finish",
    ]
    call, result = seen[1], seen[2]
    assert call["payload"]["toolName"] == "list-workflows"
    assert result["payload"]["toolCallId"] == call["payload"]["toolCallId"]
    assert result["payload"]["result"] == {"workflows": []}
    assert "not found" in seen[4]["payload"]["error"]
    assert agent.results[1] == {"error": seen[4]["payload"]["error"]}


async def test_confirm_delivers_once_and_is_idempotent(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    await new_thread(owner, "t-confirm")
    ask = {"inputType": "questions", "questions": [{"id": "q1", "question": "Which channel?", "type": "text"}]}
    async with events(owner, "t-confirm") as reader:
        await chat(owner, "t-confirm", [{"ask": ask}])
        seen = await reader.until(lambda e: e["type"] == "confirmation-request")
        request_id = seen[-1]["payload"]["requestId"]
        assert seen[-1]["payload"]["questions"][0]["id"] == "q1"
        status = data(await owner.get("/rest/instance-ai/threads/t-confirm/status"))
        # As n8n: a run waiting for a widget's answer is suspended, not active.
        assert (status["hasActiveRun"], status["isSuspended"], status["runId"]) == (False, True, seen[0]["runId"])
        body = {"kind": "questions", "answers": [{"questionId": "q1", "customText": "#ops"}]}
        bad = await owner.post(f"/rest/instance-ai/confirm/{request_id}", json={"kind": "questions"})
        assert bad.status_code == 422
        assert "answers" in bad.json()["message"]
        assert data(await owner.post(f"/rest/instance-ai/confirm/{request_id}", json=body)) == {"ok": True}
        assert data(await owner.post(f"/rest/instance-ai/confirm/{request_id}", json=body)) == {"ok": True}
        other = {"kind": "questions", "answers": [{"questionId": "q1", "customText": "#dev"}]}
        assert (await owner.post(f"/rest/instance-ai/confirm/{request_id}", json=other)).status_code == 409
        await reader.until(finished)
    assert len(agent.results) == 1
    assert agent.results[0]["answers"][0]["customText"] == "#ops"
    assert (await owner.post("/rest/instance-ai/confirm/unknown", json=body)).status_code == 404


async def test_cancel_while_waiting_ends_the_run_cancelled(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-cancel")
    async with events(owner, "t-cancel") as reader:
        await chat(owner, "t-cancel", [{"say": "working"}, {"sleep": 30}])
        await reader.until(lambda e: e["type"] == "text-delta")
        busy = await owner.post("/rest/instance-ai/chat/t-cancel", json={"message": "again"})
        assert busy.status_code == 409
        assert data(await owner.post("/rest/instance-ai/chat/t-cancel/cancel")) == {"ok": True}
        seen = await reader.until(finished)
    assert seen[-1]["payload"]["status"] == "cancelled"
    # The thread is idle the moment run-finish is seen: the next message is accepted at once.
    await chat(owner, "t-cancel", "next")


async def test_agent_crash_is_an_error_event_then_run_finish(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-crash")
    async with events(owner, "t-crash") as reader:
        await chat(owner, "t-crash", [{"fail": "kaput"}])
        seen = await reader.until(finished)
    assert [e["type"] for e in seen] == ["run-start", "error", "run-finish"]
    # n8n's error payload: the message in ``content``; an agent crash has no provider status.
    assert "kaput" in seen[1]["payload"]["content"]
    assert "statusCode" not in seen[1]["payload"]
    assert seen[-1]["payload"]["status"] == "error"


async def test_spawned_agents_are_background_tasks_until_completed(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-spawn")
    target = {"type": "agent", "id": "agent-1"}
    async with events(owner, "t-spawn") as reader:
        await chat(owner, "t-spawn", [{"spawn": "agent-builder", "target": target, "complete": False}, {"sleep": 0.3}])
        spawned = await reader.until(lambda e: e["type"] == "agent-spawned")
        status = data(await owner.get("/rest/instance-ai/threads/t-spawn/status"))
        assert [t["status"] for t in status["backgroundTasks"]] == ["running"]
        seen = await reader.until(finished)
    assert spawned[-1]["payload"]["targetResource"] == target
    # A sub-agent the agent forgot to complete is completed by the platform before run-finish.
    assert [e["type"] for e in seen][-2:] == ["agent-completed", "run-finish"]


async def test_threads_belong_to_their_creator_and_eval_routes_to_the_owner(demo: str) -> None:
    async with session(demo) as owner, session(demo, MEMBER, MEMBER_PASSWORD) as member:
        await new_thread(owner, "t-owned")
        for response in (
            await member.get("/rest/instance-ai/threads/t-owned/messages"),
            await member.post("/rest/instance-ai/chat/t-owned", json={"message": "hi"}),
            await member.get("/rest/instance-ai/events/t-owned"),
        ):
            assert response.status_code == 403, response.text
        await new_thread(member, "t-member")
        memory = await member.get("/rest/instance-ai/eval/threads/t-member/memory")
        assert memory.status_code == 403
        assert "owner" in memory.json()["message"]
        # As n8n: creating a thread that exists answers it again, created: false (and 403 for someone else's).
        again = data(await owner.post("/rest/instance-ai/threads", json={"threadId": "t-owned"}))
        assert (again["thread"]["id"], again["created"]) == ("t-owned", False)
        assert (await member.post("/rest/instance-ai/threads", json={"threadId": "t-owned"})).status_code == 403


async def test_misbehaviours_reach_the_agent_from_server_thread_and_header(agent: ScriptedAgent) -> None:
    async with server(agent, misbehave=frozenset({"drops-change"})) as url, session(url) as client:
        await new_thread(client, "t-mis", sourceContext={"demoMisbehave": ["reasks-answered"]})
        async with events(client, "t-mis") as reader:
            await chat(client, "t-mis", "hi", headers={"X-Demo-Misbehave": "ignores-declined"})
            await reader.until(finished)
    assert agent.turns[0].misbehaviours == {"drops-change", "reasks-answered", "ignores-declined"}


async def test_agent_state_and_history_persist_across_turns(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    await new_thread(owner, "t-state")
    async with events(owner, "t-state") as reader:
        await chat(owner, "t-state", [{"state": {"asked": ["channel"]}}, {"say": "ok"}])
        await reader.until(finished)
        await chat(owner, "t-state", [{"echo": True}])
        seen = await reader.until(finished)
    said = json.loads(next(e for e in seen if e["type"] == "text-delta")["payload"]["text"])
    assert said == {"history": 2, "state": {"asked": ["channel"]}}
    assert [h.role for h in agent.turns[1].history] == ["user", "assistant"]


async def test_delete_thread_removes_it(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-del")
    await chat(owner, "t-del", "hello")
    assert data(await owner.delete("/rest/instance-ai/threads/t-del")) == {"ok": True}
    assert (await owner.get("/rest/instance-ai/threads/t-del/messages")).status_code == 404


_ENDPOINTS = [
    "/rest/login",
    "/rest/instance-ai/threads",
    "/rest/instance-ai/chat/t-fuzz",
    "/rest/instance-ai/confirm/r-fuzz",
    "/rest/instance-ai/eval/restore-thread",
    "/rest/instance-ai/eval/thread-credential-allowlist",
    "/rest/instance-ai/eval/seed-data-table-rows",
    "/rest/instance-ai/eval/execute-with-llm-mock/w-fuzz",
    "/rest/workflows",
    "/rest/credentials",
    "/rest/credentials/test",
    "/rest/projects",
]
_BODIES: list[object] = [
    [],
    "text",
    None,
    {"threadId": 5},
    {"threadId": "t-fuzz", "messages": "nope"},
    {"threadId": "t-fuzz", "workflows": [{"id": 1}]},
    {"threadId": "t-fuzz", "messages": [{"id": "m", "role": "user", "content": "flat"}]},
    {"name": ["x"], "nodes": {}},
    {"credentials": "x"},
]


async def test_no_malformed_body_is_ever_a_500(owner: httpx.AsyncClient) -> None:
    """Regression guard: every bad body is a 4xx with a message, never an internal error."""
    await new_thread(owner, "t-fuzz")
    for path in _ENDPOINTS:
        for body in _BODIES:
            response = await owner.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
            assert 400 <= response.status_code < 500, (path, body, response.status_code, response.text)
            assert response.json()["message"]


async def test_malformed_tool_arguments_are_tool_errors(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-badargs")
    script = [
        {"tool": "list-workflows", "args": {"query": 5}},
        {"tool": "build-workflow", "args": {"workflow": {"name": "x", "nodes": "many"}}},
        {"tool": "build-agent", "args": {"config": [], "skills": {}}},
        {"tool": "no-such-tool"},
    ]
    async with events(owner, "t-badargs") as reader:
        await chat(owner, "t-badargs", script)
        seen = await reader.until(finished)
    assert [e["type"] for e in seen].count("tool-error") == 4
    assert seen[-1]["payload"]["status"] == "completed"


async def test_server_stops_promptly_with_streams_and_runs_still_open(agent: ScriptedAgent) -> None:
    """The stream never ends by itself, so stopping must end it (and a waiting run) rather than wait."""
    async with session_with_open_stream(agent) as elapsed:
        pass
    assert elapsed[0] < 3.0


@asynccontextmanager
async def session_with_open_stream(agent: ScriptedAgent) -> AsyncIterator[list[float]]:
    elapsed: list[float] = []
    cm = server(agent)
    url = await cm.__aenter__()
    async with session(url) as client:
        await new_thread(client, "t-stop")
        async with events(client, "t-stop") as reader:
            await chat(client, "t-stop", [{"ask": {"inputType": "approval", "message": "wait"}}])
            await reader.until(lambda e: e["type"] == "confirmation-request")
            started = time.perf_counter()
            await cm.__aexit__(None, None, None)
            elapsed.append(time.perf_counter() - started)
            assert await reader.next(within=2) is None  # the stream ended with the server
    yield elapsed


async def test_deleting_a_thread_mid_run_leaves_nothing_of_it(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-del-run")
    async with events(owner, "t-del-run") as reader:
        await chat(owner, "t-del-run", [{"say": "working"}, {"sleep": 30}])
        await reader.until(lambda e: e["type"] == "text-delta")
        data(await owner.delete("/rest/instance-ai/threads/t-del-run"))
        assert await reader.next(within=2) is None  # its stream ends with it
    await anyio.sleep(0.05)
    # The same id starts afresh: no event of the cancelled run was written after the delete.
    await new_thread(owner, "t-del-run")
    async with events(owner, "t-del-run", last_event_id="0") as reader:
        await chat(owner, "t-del-run", "again")
        seen = await reader.until(finished)
    assert seen[0]["id"] == "1"
    messages = data(await owner.get("/rest/instance-ai/threads/t-del-run/messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


async def test_a_database_file_survives_a_restart(agent: ScriptedAgent, tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    async with server(agent, db_path=db) as url, session(url) as client:
        project = await new_thread(client, "t-keep")
        async with events(client, "t-keep") as reader:
            await chat(client, "t-keep", "first")
            first = await reader.until(finished)
    async with server(agent, db_path=db) as url, session(url) as client:
        assert data(await client.get("/rest/projects/personal"))["id"] == project
        assert len(data(await client.get("/rest/instance-ai/threads/t-keep/messages"))["messages"]) == 2
        async with events(client, "t-keep", last_event_id="0") as reader:
            replayed = await reader.until(lambda e: e.get("id") == first[-1]["id"])
            await chat(client, "t-keep", "second")
            live = await reader.until(finished)
    # The durable log survives: the run's events by id, its text as the one block a replay sends.
    assert [e["id"] for e in replayed] == [str(i) for i in range(1, int(first[-1]["id"]) + 1)]
    assert [e["type"] for e in replayed] == ["run-start", "text-block", "run-finish"]
    assert int(live[0]["id"]) == int(first[-1]["id"]) + 1
    assert db.exists()


def test_the_temporary_database_lives_in_memory_and_leaves_nothing_on_disk(agent: ScriptedAgent) -> None:
    from threadcase.demo_instance.app import create_app, platform_of
    from threadcase.demo_instance.serve import serve_in_thread
    from threadcase.demo_instance.settings import DemoSettings

    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("threadcase-demo-*"))
    app = create_app(DemoSettings(), agent=agent)
    store = platform_of(app).store
    assert store.path is None
    with serve_in_thread(app) as url:
        assert httpx.get(f"{url}/healthz/readiness").status_code == 200
        # It is a real database while the instance runs: what is written can be read back.
        store.put("cursors", "probe", {"lastObservedMessageId": "m1"}, scope="probe")
        assert store.get("cursors", "probe") == {"lastObservedMessageId": "m1"}
        assert set(temp.glob("threadcase-demo-*")) == before
    assert set(temp.glob("threadcase-demo-*")) == before
