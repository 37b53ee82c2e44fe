"""Faults, latency, traces, and 50 threads chatting at once without cross-thread leakage."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.demo.conftest import ScriptedAgent, chat, data, events, finished, new_thread, server, session
from threadcase._util.fanout import fan_out

pytestmark = pytest.mark.anyio


async def _retrying(send: Any) -> httpx.Response:
    """What a client does with a 503 answered before anything happened: send it again."""
    for _ in range(50):
        response: httpx.Response = await send()
        if response.status_code != 503:
            return response
    raise AssertionError("still 503 after 50 attempts")


async def _status_codes(agent: ScriptedAgent, seed: int) -> tuple[list[int], int]:
    async with (
        server(agent, faults=0.3, seed=seed, fault_delay_seconds=0.02) as url,
        httpx.AsyncClient(base_url=url) as client,
    ):
        login = {"emailOrLdapLoginId": "owner@threadcase.dev", "password": "threadcase-demo"}
        await _retrying(lambda: client.post("/rest/login", json=login))
        codes = []
        for index in range(40):
            body = {"name": f"c{index}", "type": "slackApi", "data": {"accessToken": "x"}}
            codes.append((await client.post("/rest/credentials", json=body)).status_code)
        created = len(data(await _retrying(lambda: client.get("/rest/credentials"))))
    return codes, created


async def test_faults_reject_before_acting_and_are_reproducible(agent: ScriptedAgent) -> None:
    first, created = await _status_codes(agent, seed=7)
    second, _ = await _status_codes(agent, seed=7)
    assert first == second  # same seed, same faults
    assert set(first) == {200, 503}
    assert created == first.count(200)  # a 503 never created anything: retrying is safe


async def test_dropped_streams_resume_with_last_event_id_losing_nothing(agent: ScriptedAgent) -> None:
    async with (
        server(agent, faults=0.25, seed=3, fault_delay_seconds=0.02) as url,
        httpx.AsyncClient(base_url=url, timeout=10) as client,
    ):
        login = {"emailOrLdapLoginId": "owner@threadcase.dev", "password": "threadcase-demo"}
        await _retrying(lambda: client.post("/rest/login", json=login))
        project = data(await _retrying(lambda: client.get("/rest/projects/personal")))["id"]
        await _retrying(
            lambda: client.post("/rest/instance-ai/threads", json={"threadId": "t-drop", "projectId": project})
        )
        script = json.dumps([{"say": f"part {i}"} for i in range(30)] + [{"sleep": 0.05}])
        seen: list[dict[str, Any]] = []
        reconnects = 0
        last: str | None = None
        started = False
        with anyio.fail_after(20):
            while not seen or seen[-1]["type"] != "run-finish":
                headers = {"Last-Event-ID": last} if last else {}
                async with events(client, "t-drop", last_event_id=headers.get("Last-Event-ID")) as reader:
                    if not started:
                        await _retrying(lambda: client.post("/rest/instance-ai/chat/t-drop", json={"message": script}))
                        started = True
                    while True:
                        event = await reader.next(within=5)
                        if event is None:
                            reconnects += 1
                            break
                        seen.append(event)
                        last = event["id"]
                        if event["type"] == "run-finish":
                            break
    assert reconnects >= 1  # the fault really dropped the stream mid-run
    assert [int(e["id"]) for e in seen] == list(range(1, len(seen) + 1))  # no gap, no duplicate
    assert sum(1 for e in seen if e["type"] == "text-delta") == 30


async def test_latency_is_paid_at_every_agent_step(agent: ScriptedAgent) -> None:
    async with server(agent, latency_ms=60) as url, session(url) as client:
        await new_thread(client, "t-slow")
        async with events(client, "t-slow") as reader:
            started = time.perf_counter()
            await chat(client, "t-slow", [{"say": "a"}, {"tool": "list-workflows"}, {"say": "b"}])
            await reader.until(finished)
            elapsed = time.perf_counter() - started
    assert elapsed >= 0.18  # three steps x 60 ms


async def test_turns_are_traced_as_langsmith_runs(agent: ScriptedAgent, tmp_path: Path) -> None:
    trace = tmp_path / "traces" / "demo.jsonl"
    async with server(agent, trace_to=trace) as url, session(url) as client:
        await new_thread(client, "t-trace")
        async with events(client, "t-trace") as reader:
            await chat(client, "t-trace", [{"tool": "list-workflows"}, {"tool": "get-workflow"}, {"say": "All done."}])
            await reader.until(finished)
            await chat(client, "t-trace", "second")
            await reader.until(finished)
    runs = [json.loads(line) for line in trace.read_text().splitlines()]
    roots = [r for r in runs if r["parent_run_id"] is None]
    assert [r["name"] for r in roots] == ["turn", "turn"]
    root = roots[0]
    assert root["run_type"] == "chain"
    assert root["trace_id"] == root["id"]
    assert root["outputs"]["response"].endswith("All done.")
    assert json.loads(root["inputs"]["message"])[0] == {"tool": "list-workflows"}
    assert root["extra"]["metadata"]["thread_id"] == "t-trace"
    assert root["session_name"] == "instance-ai"
    assert root["start_time"].endswith("Z")
    assert root["start_time"] <= root["end_time"]
    tools = [r for r in runs if r["parent_run_id"] == root["id"]]
    assert [(t["name"], t["run_type"]) for t in tools] == [("list-workflows", "tool"), ("get-workflow", "tool")]
    assert tools[0]["outputs"] == {"workflows": []}
    assert tools[0]["error"] is None
    assert "workflowId" in tools[1]["error"]
    assert all(t["extra"]["metadata"]["langsmith_root_run_id"] == root["id"] for t in tools)
    assert roots[1]["inputs"] == {"message": "second"}


async def test_fifty_threads_at_once_stay_apart(agent: ScriptedAgent) -> None:
    async with server(agent, latency_ms=20) as url, session(url) as client:

        async def one(index: int) -> dict[str, Any]:
            thread_id = f"t-many-{index}"
            await new_thread(client, thread_id)
            body = {"name": f"cred-{index}", "type": "slackApi", "data": {"accessToken": f"token-{index}"}}
            credential = data(await client.post("/rest/credentials", json=body))["id"]
            pin = {"threadId": thread_id, "credentialIds": [credential], "bypassCredentialTest": [credential]}
            data(await client.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
            workflow = {"name": f"wf-{index}", "nodes": [], "connections": {}}
            script = [
                {"say": f"thread {index} speaking"},
                {"tool": "list-credentials"},
                {"tool": "build-workflow", "args": {"workflow": workflow}},
                {"ask": {"inputType": "approval", "message": f"ok {index}?"}},
            ]
            async with events(client, thread_id) as reader:
                run_id = await chat(client, thread_id, script)
                ask = (await reader.until(lambda e: e["type"] == "confirmation-request"))[-1]
                await client.post(
                    f"/rest/instance-ai/confirm/{ask['payload']['requestId']}",
                    json={"kind": "approval", "approved": True},
                )
                await reader.until(finished, within=30)
                seen = reader.events
            messages = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/messages"))
            return {"index": index, "run": run_id, "credential": credential, "events": seen, "messages": messages}

        started = time.perf_counter()
        results = await fan_out(range(50), one, limit=50)
        elapsed = time.perf_counter() - started

    for result in results:
        index, seen = result["index"], result["events"]
        assert {e["runId"] for e in seen} == {result["run"]}
        text = "".join(e["payload"]["text"] for e in seen if e["type"] == "text-delta")
        assert text.startswith(f"thread {index} speaking")
        tool_results = [e["payload"]["result"] for e in seen if e["type"] == "tool-result"]
        assert [c["id"] for c in tool_results[0]["credentials"]] == [result["credential"]]
        assert tool_results[1]["workflow"]["name"] == f"wf-{index}"
        assert seen[-1]["payload"]["status"] == "completed"
        texts = [b.get("text", "") for m in result["messages"] for b in m["content"] if b["type"] == "text"]
        assert all(f"thread {index} " in t or str(index) in t for t in texts if t.startswith("thread"))
        assert all(f"thread {other} " not in " ".join(texts) for other in range(50) if other != index)
    assert elapsed < 15
