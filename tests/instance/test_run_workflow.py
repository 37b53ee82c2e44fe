"""``InstanceClient.run_workflow`` / ``get_execution`` / ``list_executions``: against the demo, and the
never-repeat rule and answer mapping with a mock transport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.instance.demo import demo, demo_client
from threadcase.errors import InstanceError
from threadcase.instance import InstanceClient, RetryPolicy

__all__ = ["demo", "demo_client"]  # fixtures, imported for pytest

pytestmark = pytest.mark.anyio


def _workflow(trigger: str) -> dict[str, Any]:
    return {
        "name": f"Run me ({trigger})",
        "nodes": [
            {"name": "Start", "type": f"n8n-nodes-base.{trigger}", "parameters": {}},
            {
                "name": "Set",
                "type": "n8n-nodes-base.set",
                "parameters": {"assignments": {"assignments": [{"name": "n", "value": 42}]}},
            },
        ],
        "connections": {"Start": {"main": [[{"node": "Set", "type": "main", "index": 0}]]}},
    }


async def _create(client: InstanceClient, trigger: str) -> str:
    response = await client.http.post("/rest/workflows", json=_workflow(trigger))
    assert response.status_code == 200, response.text
    return str(response.json()["data"]["id"])


async def test_run_then_read_the_execution(demo_client: InstanceClient) -> None:
    wid = await _create(demo_client, "manualTrigger")
    execution_id = await demo_client.run_workflow(wid)
    execution = await demo_client.get_execution(execution_id)
    assert execution["workflowId"] == wid
    assert execution["status"] == "success"
    main = execution["data"]["resultData"]["runData"]["Set"][0]["data"]["main"]
    assert main == [[{"json": {"n": 42}, "pairedItem": {"item": 0}}]]
    again = await demo_client.run_workflow(wid, trigger_name="Start")
    listed = await demo_client.list_executions(wid)
    assert [e["id"] for e in listed] == [again, execution_id]


async def test_a_refused_run_is_an_instance_error_naming_the_reason(demo_client: InstanceClient) -> None:
    wid = await _create(demo_client, "webhook")
    with pytest.raises(InstanceError) as caught:
        await demo_client.run_workflow(wid)
    assert caught.value.status == 400
    assert "only manual or schedule triggers run" in str(caught.value)
    assert await demo_client.list_executions(wid) == []
    with pytest.raises(InstanceError) as missing:
        await demo_client.get_execution("no-such-execution")
    assert missing.value.status == 404


def _mock_client(handler: Any) -> InstanceClient:
    fast = RetryPolicy(attempts=4, initial_wait=0.001, max_wait=0.002, jitter=0.0)
    return InstanceClient(
        "http://instance.test", email="a@b.c", password="pw", retry=fast, transport=httpx.MockTransport(handler)
    )


async def test_a_run_that_reached_the_server_is_never_repeated() -> None:
    runs: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/run"):
            runs.append(request)
            return httpx.Response(502, json={"message": "bad gateway"})
        return httpx.Response(200, json={"data": {}})

    async with _mock_client(handler) as client:
        with pytest.raises(InstanceError) as caught:
            await client.run_workflow("wf1", trigger_name="Every hour")
    assert caught.value.status == 502
    assert len(runs) == 1
    assert json.loads(runs[0].content) == {"triggerToStartFrom": {"name": "Every hour"}}


async def test_waiting_for_a_webhook_is_not_a_run() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/run"):
            return httpx.Response(200, json={"data": {"waitingForWebhook": True}})
        if request.url.path.startswith("/rest/executions/"):
            return httpx.Response(200, json={"data": "flatted-string"})
        return httpx.Response(200, json={"data": {}})

    async with _mock_client(handler) as client:
        with pytest.raises(InstanceError, match="waits for a webhook call"):
            await client.run_workflow("wf1", trigger_name="Webhook")
        with pytest.raises(InstanceError, match="expected an object"):
            await client.get_execution("7")


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ([("Every hour", "scheduleTrigger"), ("Click", "manualTrigger"), ("Hook", "webhook")], "Click"),
        ([("Hook", "webhook"), ("Nightly", "scheduleTrigger")], "Nightly"),
        ([("Inbound", "webhook"), ("Tidy", "set")], "Inbound"),
        ([("Form in", "formTrigger")], "Form in"),
    ],
)
async def test_a_run_without_a_trigger_name_starts_from_the_workflows_own_trigger(
    nodes: list[tuple[str, str]], expected: str
) -> None:
    """Regression: ``{}`` was sent, which n8n refuses (400 "specify either a trigger to start from or a
    destination node"); the client now reads the workflow and names its trigger, a manual one first."""
    runs: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/rest/workflows/wf9":
            workflow = {
                "id": "wf9",
                "name": "Pick",
                # A disabled manual trigger never wins: n8n would not start from it.
                "nodes": [{"name": "Off", "type": "n8n-nodes-base.manualTrigger", "disabled": True}]
                + [{"name": n, "type": f"n8n-nodes-base.{t}"} for n, t in nodes],
            }
            return httpx.Response(200, json={"data": workflow})
        if request.url.path.endswith("/run"):
            runs.append(json.loads(request.content))
            return httpx.Response(200, json={"data": {"executionId": "11"}})
        return httpx.Response(200, json={"data": {}})

    async with _mock_client(handler) as client:
        assert await client.run_workflow("wf9") == "11"
    assert runs == [{"triggerToStartFrom": {"name": expected}}]


async def test_a_workflow_with_no_enabled_trigger_is_refused_before_any_run() -> None:
    runs: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/rest/workflows/wf9":
            nodes = [
                {"name": "Off", "type": "n8n-nodes-base.manualTrigger", "disabled": True},
                {"name": "Tidy", "type": "n8n-nodes-base.set"},
            ]
            return httpx.Response(200, json={"data": {"id": "wf9", "name": "Dormant", "nodes": nodes}})
        runs.append(request)
        return httpx.Response(200, json={"data": {}})

    async with _mock_client(handler) as client:
        with pytest.raises(InstanceError, match="has no enabled trigger node"):
            await client.run_workflow("wf9")
    assert [r for r in runs if r.url.path.endswith("/run")] == []
