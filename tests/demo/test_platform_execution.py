"""Mocked execution: the walk, real Set/IF/Data Table nodes, mocked actions, credentials, onError."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.demo.conftest import chat, data, events, finished, new_thread
from threadcase.demo_instance.mock_exec import hints_from_text, resolve

pytestmark = pytest.mark.anyio


def _link(*targets: str) -> dict[str, Any]:
    return {"main": [[{"node": t, "type": "main", "index": 0}] for t in targets]}


def _if(name: str, left: str, operation: str, right: Any, kind: str = "number") -> dict[str, Any]:
    condition = {"leftValue": left, "rightValue": right, "operator": {"type": kind, "operation": operation}}
    return {
        "name": name,
        "type": "n8n-nodes-base.if",
        "parameters": {"conditions": {"combinator": "and", "conditions": [condition]}},
    }


def _slack(name: str, credential_id: str | None, **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": name,
        "type": "n8n-nodes-base.slack",
        "parameters": {"resource": "message", "operation": "post", "channel": "#ops", "text": "={{ $json.message }}"},
        **extra,
    }
    if credential_id is not None:
        node["credentials"] = {"slackApi": {"id": credential_id, "name": "Slack"}}
    return node


def _order_workflow(credential_id: str | None, **slack_extra: Any) -> dict[str, Any]:
    return {
        "name": "Big orders",
        "nodes": [
            {"name": "Webhook", "type": "n8n-nodes-base.webhook", "parameters": {"path": "orders"}},
            _if("If", "={{ $json.amount }}", "gt", 100),
            {
                "name": "Edit Fields",
                "type": "n8n-nodes-base.set",
                "parameters": {
                    "assignments": {
                        "assignments": [
                            {
                                "name": "message",
                                "value": "=Big order {{ $json.id }}: ${{ $json.amount }}",
                                "type": "string",
                            }
                        ]
                    }
                },
            },
            _slack("Slack", credential_id, **slack_extra),
            _if("Check for errors", "={{ $json.error }}", "exists", "", "string"),
            _slack("Alert on failure", credential_id),
        ],
        "connections": {
            "Webhook": _link("If"),
            "If": _link("Edit Fields"),
            "Edit Fields": _link("Slack"),
            "Slack": _link("Check for errors"),
            "Check for errors": _link("Alert on failure"),
        },
    }


async def _credential(client: httpx.AsyncClient, name: str = "Slack") -> str:
    body = {"name": name, "type": "slackApi", "data": {"accessToken": "eval-placeholder"}}
    return str(data(await client.post("/rest/credentials", json=body))["id"])


async def _execute(client: httpx.AsyncClient, workflow_id: str, hints: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"timeoutMs": 30_000}
    if hints is not None:
        body["scenarioHints"] = hints if isinstance(hints, str) else json.dumps(hints)
    result: dict[str, Any] = data(
        await client.post(f"/rest/instance-ai/eval/execute-with-llm-mock/{workflow_id}", json=body)
    )
    return result


async def test_walks_from_trigger_running_if_and_set_for_real(owner: httpx.AsyncClient) -> None:
    cred = await _credential(owner)
    workflow = data(await owner.post("/rest/workflows", json=_order_workflow(cred)))
    hints = {"Webhook": [{"id": 1, "amount": 50}, {"id": 2, "amount": 150}], "Slack": {"ok": True, "ts": "42"}}
    result = await _execute(owner, workflow["id"], f"An order webhook. Data: {json.dumps(hints)}")
    assert result["success"] is True, result["errors"]
    nodes = result["nodeResults"]
    assert nodes["Webhook"]["executionMode"] == "pinned"
    assert nodes["If"]["executionMode"] == "real"
    # n8n's shape: connection type -> branches -> items {json, pairedItem}.
    assert [[i["json"]["id"] for i in branch] for branch in nodes["If"]["outputs"]["main"]] == [[2], [1]]
    assert nodes["Edit Fields"]["outputs"]["main"][0] == [
        {"json": {"message": "Big order 2: $150"}, "pairedItem": {"item": 0}}
    ]
    assert all(isinstance(n["startTime"], int) for n in nodes.values())
    request = nodes["Slack"]["interceptedRequests"][0]
    assert nodes["Slack"]["executionMode"] == "mocked"
    assert request["requestBody"] == {"channel": "#ops", "text": "Big order 2: $150"}
    assert request["mockResponse"] == {"ok": True, "ts": "42"}
    assert "slack.com" in request["url"]
    # No error item, so the error branch's IF sends nothing on and the alert never runs.
    assert "Alert on failure" not in nodes
    # As n8n 2.41: an attached credential is used as it is; only synthesized ones would be listed.
    assert result["mockedCredentials"] == []


async def test_a_missing_credential_is_mocked_as_n8n_does(owner: httpx.AsyncClient) -> None:
    # n8n 2.41's mocked execution synthesizes a credential for a node with none and intercepts the call
    # (observed with scripts/n8n-local): the execution runs, and the request is still recorded.
    workflow = data(await owner.post("/rest/workflows", json=_order_workflow(None)))
    result = await _execute(owner, workflow["id"], {"Webhook": {"id": 1, "amount": 500}})
    assert result["success"] is True, result["errors"]
    assert result["errors"] == []
    assert result["nodeResults"]["Slack"]["interceptedRequests"][0]["requestBody"]["channel"] == "#ops"
    assert result["mockedCredentials"] == []


async def test_on_error_continue_sends_the_error_down_the_alert_branch(owner: httpx.AsyncClient) -> None:
    cred = await _credential(owner)
    workflow = data(await owner.post("/rest/workflows", json=_order_workflow(cred, onError="continueRegularOutput")))
    hints = {
        "trigger": {"id": 9, "amount": 900},
        "Slack": {"ok": False, "error": "channel_not_found"},
        "Alert on failure": {"ok": True},
    }
    result = await _execute(owner, workflow["id"], hints)
    assert result["success"] is True, result["errors"]
    nodes = result["nodeResults"]
    assert nodes["Slack"]["outputs"]["main"][0][0]["json"]["error"] == {"message": "channel_not_found"}
    # A hint keyed by node name wins over one keyed by type (the alert is a Slack node too).
    alert = nodes["Alert on failure"]["interceptedRequests"][0]
    assert alert["mockResponse"] == {"ok": True}
    assert alert["requestBody"]["channel"] == "#ops"


async def test_a_credential_outside_the_threads_view_does_not_stop_a_mocked_execution(
    owner: httpx.AsyncClient,
) -> None:
    # The thread's credential view bounds what the agent may attach, not what n8n's mocked execution runs.
    inside, outside = await _credential(owner, "in"), await _credential(owner, "out")
    await new_thread(owner, "t-exec-view")
    pin = {"threadId": "t-exec-view", "credentialIds": [inside]}
    data(await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
    async with events(owner, "t-exec-view") as reader:
        await chat(owner, "t-exec-view", [{"tool": "build-workflow", "args": {"workflow": _order_workflow(outside)}}])
        seen = await reader.until(finished)
    workflow_id = next(e for e in seen if e["type"] == "tool-result")["payload"]["result"]["workflowId"]
    result = await _execute(owner, workflow_id, {"Webhook": {"id": 1, "amount": 500}})
    assert result["success"] is True, result["errors"]


async def test_data_table_nodes_read_and_insert_seeded_rows(owner: httpx.AsyncClient) -> None:
    project = await new_thread(owner, "t-exec-table")
    columns = [{"name": "email", "type": "string"}, {"name": "score", "type": "number"}]
    table = data(await owner.post(f"/rest/projects/{project}/data-tables", json={"name": "Leads", "columns": columns}))
    archive = data(await owner.post(f"/rest/projects/{project}/data-tables", json={"name": "Hot", "columns": columns}))
    rows = [{"email": "a@x.io", "score": 10}, {"email": "b@x.io", "score": 90}]
    seed = {"threadId": "t-exec-table", "tableId": table["id"], "rows": rows}
    data(await owner.post("/rest/instance-ai/eval/seed-data-table-rows", json=seed))
    workflow = {
        "name": "Hot leads",
        "nodes": [
            {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
            {
                "name": "Read",
                "type": "n8n-nodes-base.dataTable",
                "parameters": {"operation": "get", "dataTableId": table["id"]},
            },
            {
                "name": "Filter",
                "type": "n8n-nodes-base.if",
                "parameters": {"conditions": {"field": "score", "operation": "gte", "value": 50}},
            },
            {
                "name": "Save",
                "type": "n8n-nodes-base.dataTable",
                "parameters": {"operation": "insert", "dataTableName": "Hot"},
            },
        ],
        "connections": {"Manual Trigger": _link("Read"), "Read": _link("Filter"), "Filter": _link("Save")},
    }
    created = data(await owner.post("/rest/workflows", json=workflow))
    result = await _execute(owner, created["id"])
    assert result["success"] is True, result["errors"]
    assert result["nodeResults"]["Read"]["outputCount"] == 2
    assert result["nodeResults"]["Save"]["executionMode"] == "real"
    saved = data(await owner.get(f"/rest/projects/{project}/data-tables/{archive['id']}/rows"))["data"]
    assert [(r["email"], r["score"]) for r in saved] == [("b@x.io", 90)]


async def test_workflow_without_trigger_fails_cleanly(owner: httpx.AsyncClient) -> None:
    workflow = data(await owner.post("/rest/workflows", json={"name": "Empty", "nodes": [], "connections": {}}))
    result = await _execute(owner, workflow["id"])
    assert result["success"] is False
    assert "no trigger" in result["errors"][0]
    missing = await owner.post("/rest/instance-ai/eval/execute-with-llm-mock/nope", json={"timeoutMs": 30_000})
    assert missing.status_code == 404
    too_short = await owner.post(
        f"/rest/instance-ai/eval/execute-with-llm-mock/{workflow['id']}", json={"timeoutMs": 5}
    )
    assert too_short.status_code == 422


def test_expressions_resolve_against_the_item() -> None:
    item = {"a": {"b": 3}, "name": "Ann", "list": [1, 2]}
    assert resolve("={{ $json.a.b }}", item) == 3
    assert resolve("=Hi {{ $json.name }} ({{ $json.a.b }})", item) == "Hi Ann (3)"
    assert resolve("={{ $json.missing ?? 'none' }}", item) == "none"
    assert resolve("={{ JSON.stringify($json.list) }}", item) == "[1,2]"
    assert resolve({"x": ["={{ $json.name }}"]}, item) == {"x": ["Ann"]}
    assert resolve("plain {{ $json.name }}", item) == "plain {{ $json.name }}"


def test_hints_are_found_whole_or_embedded() -> None:
    assert hints_from_text('{"Slack": {"ok": true}}') == {"Slack": {"ok": True}}
    text = 'Orders arrive. {"Webhook": {"amount": 5}} and Slack answers {"Slack": {"ok": false}} then.'
    assert hints_from_text(text) == {"Webhook": {"amount": 5}, "Slack": {"ok": False}}
    assert hints_from_text("no json {here") == {}
    assert hints_from_text(None) == {}


async def test_a_misconfigured_node_fails_the_execution_not_the_server(owner: httpx.AsyncClient) -> None:
    workflow = {
        "name": "Odd",
        "nodes": [
            {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
            {
                "name": "If",
                "type": "n8n-nodes-base.if",
                "parameters": {"conditions": {"conditions": ["not-a-condition"]}},
            },
        ],
        "connections": {"Manual Trigger": _link("If")},
    }
    created = data(await owner.post("/rest/workflows", json=workflow))
    result = await _execute(owner, created["id"])
    assert result["success"] is False
    assert result["errors"][0].startswith('Node "If": IF condition must be an object')


async def test_an_array_answer_becomes_items_that_flow_on(owner: httpx.AsyncClient) -> None:
    workflow = {
        "name": "Fetch and filter",
        "nodes": [
            {"name": "Schedule Trigger", "type": "n8n-nodes-base.scheduleTrigger", "parameters": {}},
            {
                "name": "HTTP Request",
                "type": "n8n-nodes-base.httpRequest",
                "parameters": {"method": "GET", "url": "https://x.io/orders"},
            },
            _if("If", "={{ $json.amount }}", "gt", 100),
            {
                "name": "GitHub",
                "type": "n8n-nodes-base.github",
                "parameters": {"operation": "getAll", "owner": "a", "repository": "b"},
            },
        ],
        "connections": {"Schedule Trigger": _link("HTTP Request"), "HTTP Request": _link("If")},
    }
    created = data(await owner.post("/rest/workflows", json=workflow))
    result = await _execute(owner, created["id"], {"HTTP Request": [{"amount": 50}, {"amount": 500}, {"amount": 700}]})
    assert result["success"] is True, result["errors"]
    nodes = result["nodeResults"]
    assert nodes["HTTP Request"]["interceptedRequests"][0]["method"] == "GET"
    assert nodes["HTTP Request"]["interceptedRequests"][0]["url"] == "https://x.io/orders"
    assert nodes["HTTP Request"]["outputCount"] == 3
    assert [len(branch) for branch in nodes["If"]["outputs"]["main"]] == [2, 1]
    assert "GitHub" not in nodes  # not connected: never ran
