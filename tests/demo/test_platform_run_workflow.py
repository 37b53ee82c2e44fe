"""``POST /rest/workflows/:id/run`` and the executions it records: shapes, refusals, access."""

from __future__ import annotations

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
    session,
    settings,
)
from threadcase.demo_instance.app import create_app
from threadcase.demo_instance.serve import serving

pytestmark = pytest.mark.anyio


START = {"triggerToStartFrom": {"name": "Start"}}
"""n8n refuses a manual run that does not name where it starts."""


def _link(target: str) -> dict[str, Any]:
    return {"main": [[{"node": target, "type": "main", "index": 0}]]}


def _workflow(trigger_type: str = "n8n-nodes-base.manualTrigger", **extra_nodes: dict[str, Any]) -> dict[str, Any]:
    nodes = [
        {"name": "Start", "type": trigger_type, "parameters": {}},
        {
            "name": "Greeting",
            "type": "n8n-nodes-base.set",
            "parameters": {"assignments": {"assignments": [{"name": "hello", "value": "world"}]}},
        },
        {"name": "Ping", "type": "n8n-nodes-base.httpRequest", "parameters": {"url": "https://example.com"}},
        *extra_nodes.values(),
    ]
    return {
        "name": "Runnable",
        "nodes": nodes,
        "connections": {"Start": _link("Greeting"), "Greeting": _link("Ping")},
    }


async def _create(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    return str(data(await client.post("/rest/workflows", json=body))["id"])


async def test_run_records_a_real_execution_readable_by_id_and_by_workflow(owner: httpx.AsyncClient) -> None:
    wid = await _create(owner, _workflow())
    other = await _create(owner, _workflow("n8n-nodes-base.scheduleTrigger"))
    execution_id = data(await owner.post(f"/rest/workflows/{wid}/run", json=START))["executionId"]
    data(await owner.post(f"/rest/workflows/{other}/run", json=START))

    execution = data(await owner.get(f"/rest/executions/{execution_id}"))
    assert execution["id"] == execution_id
    assert execution["workflowId"] == wid
    assert execution["status"] == "success"
    assert execution["finished"] is True
    assert execution["mode"] == "manual"
    assert execution["startedAt"] <= execution["stoppedAt"]
    run_data = execution["data"]["resultData"]["runData"]
    # The Set node really ran; the HTTP node answered its per-type default (no network).
    assert run_data["Greeting"][0]["data"]["main"] == [[{"json": {"hello": "world"}, "pairedItem": {"item": 0}}]]
    assert run_data["Ping"][0]["executionStatus"] == "success"
    assert execution["data"]["resultData"]["lastNodeExecuted"] == "Ping"

    listed = data(await owner.get("/rest/executions", params={"filter": f'{{"workflowId": "{wid}"}}'}))
    assert listed["count"] == 1
    assert [e["id"] for e in listed["results"]] == [execution_id]
    assert "data" not in listed["results"][0]
    filtered = data(await owner.get("/rest/executions", params={"filter": f'{{"workflowId": "{other}"}}'}))
    assert [e["workflowId"] for e in filtered["results"]] == [other]
    assert data(await owner.get("/rest/executions"))["count"] == 2

    # A workflow's executions go with it (archived first: n8n deletes only archived workflows).
    data(await owner.post(f"/rest/workflows/{wid}/archive"))
    data(await owner.delete(f"/rest/workflows/{wid}"))
    assert (await owner.get(f"/rest/executions/{execution_id}")).status_code == 404


async def test_failing_node_makes_an_error_execution(owner: httpx.AsyncClient) -> None:
    broken = {"name": "Broken", "type": "n8n-nodes-base.if", "parameters": {"conditions": []}}
    body = _workflow(broken=broken)
    body["connections"]["Ping"] = _link("Broken")
    wid = await _create(owner, body)
    execution_id = data(await owner.post(f"/rest/workflows/{wid}/run", json=START))["executionId"]
    execution = data(await owner.get(f"/rest/executions/{execution_id}"))
    assert execution["status"] == "error"
    assert "no conditions" in execution["data"]["resultData"]["error"]["message"]


@pytest.mark.parametrize(
    ("body", "run_body", "expected"),
    [
        (_workflow(), {}, "specify either a trigger to start from or a destination node"),
        (_workflow("n8n-nodes-base.webhook"), START, "only manual or schedule triggers run"),
        (_workflow(), {"triggerToStartFrom": {"name": "Nope"}}, "no enabled trigger named 'Nope'"),
        (
            _workflow(slack={"name": "Post", "type": "n8n-nodes-base.slack", "parameters": {"channel": "#x"}}),
            START,
            "node 'Post' needs a credential (slackApi)",
        ),
        (
            _workflow(
                http={
                    "name": "Authed",
                    "type": "n8n-nodes-base.httpRequest",
                    "parameters": {},
                    "credentials": {"httpHeaderAuth": {"id": "x", "name": "Header"}},
                }
            ),
            START,
            "node 'Authed' needs a credential (httpHeaderAuth)",
        ),
    ],
)
async def test_refusals_say_why(
    owner: httpx.AsyncClient, body: dict[str, Any], run_body: dict[str, Any], expected: str
) -> None:
    wid = await _create(owner, body)
    response = await owner.post(f"/rest/workflows/{wid}/run", json=run_body)
    assert response.status_code == 400, response.text
    assert expected in response.json()["message"]
    listed = await owner.get("/rest/executions", params={"filter": f'{{"workflowId": "{wid}"}}'})
    assert data(listed)["count"] == 0


async def test_a_webhook_trigger_named_explicitly_is_refused(owner: httpx.AsyncClient) -> None:
    body = _workflow()
    body["nodes"].append({"name": "Hook", "type": "n8n-nodes-base.webhook", "parameters": {}})
    wid = await _create(owner, body)
    response = await owner.post(f"/rest/workflows/{wid}/run", json={"triggerToStartFrom": {"name": "Hook"}})
    assert response.status_code == 400
    assert "only manual or schedule triggers" in response.json()["message"]


async def test_unknown_foreign_and_malformed(demo: str, owner: httpx.AsyncClient) -> None:
    assert (await owner.post("/rest/workflows/nope/run", json=START)).status_code == 404
    assert (await owner.get("/rest/executions/nope")).status_code == 404
    bad = await owner.post("/rest/workflows/nope/run", json={"triggerToStartFrom": "Start"})
    assert bad.status_code == 422
    wid = await _create(owner, _workflow())
    execution_id = data(await owner.post(f"/rest/workflows/{wid}/run", json=START))["executionId"]
    async with session(demo, MEMBER, MEMBER_PASSWORD) as member:
        refused = await member.post(f"/rest/workflows/{wid}/run", json=START)
        assert refused.status_code == 403
        assert (await member.get(f"/rest/executions/{execution_id}")).status_code == 404
        assert data(await member.get("/rest/executions"))["count"] == 0
        own = await _create(member, _workflow())
        mine = data(await member.post(f"/rest/workflows/{own}/run", json=START))["executionId"]
        assert data(await member.get(f"/rest/executions/{mine}"))["workflowId"] == own
    # The instance owner sees every project's executions.
    assert data(await owner.get(f"/rest/executions/{mine}"))["workflowId"] == own


@pytest.mark.anyio
async def test_turns_reuse_idle_run_workers_and_add_one_only_when_all_are_busy() -> None:
    agent = ScriptedAgent()
    app = create_app(settings(), agent=agent)
    runs = app.state.platform.runs
    async with serving(app) as url, session(url) as client:
        for thread_id in ("w1", "w2", "w3"):
            await new_thread(client, thread_id)

        async def turn(thread_id: str, message: Any) -> None:
            async with events(client, thread_id) as reader:
                run_id = await chat(client, thread_id, message)
                done = await reader.until(lambda e: finished(e) and e["runId"] == run_id)
            assert done[-1]["payload"]["status"] == "completed"

        for index in range(3):
            await turn("w1", f"one after another {index}")
        assert runs._idle_workers == 1  # one worker ran all three
        async with anyio.create_task_group() as tg:
            for thread_id in ("w1", "w2", "w3"):
                tg.start_soon(turn, thread_id, [{"sleep": 0.3}, {"say": "slept"}])
        assert runs._idle_workers == 3  # three at once: the idle one and two more
        await turn("w2", "and again")
        assert runs._idle_workers == 3
    assert [t.message for t in agent.turns].count("and again") == 1
