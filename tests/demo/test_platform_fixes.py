"""Regression tests for the demo platform's audit findings (issue 3 review)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from tests.demo.conftest import ScriptedAgent, chat, data, events, finished, new_thread, server, session, settings
from threadcase.demo_instance.app import create_app, platform_of
from threadcase.demo_instance.serve import serving

pytestmark = pytest.mark.anyio

SLACK_NODE = {"name": "Slack", "type": "n8n-nodes-base.slack", "parameters": {"channel": "#a", "text": "hi"}}


async def _credential(client: httpx.AsyncClient, name: str, cred_type: str = "slackApi") -> str:
    body = {"name": name, "type": cred_type, "data": {"accessToken": "tok"}}
    return str(data(await client.post("/rest/credentials", json=body))["id"])


async def _restore_slack(client: httpx.AsyncClient, thread_id: str, workflow_id: str, ref: dict[str, str]) -> Any:
    node = {**SLACK_NODE, "credentials": {"slackApi": ref}}
    seed = {"threadId": thread_id, "workflows": [{"id": workflow_id, "name": workflow_id, "nodes": [node]}]}
    data(await client.post("/rest/instance-ai/eval/restore-thread", json=seed))
    workflow = data(await client.get(f"/rest/workflows/{workflow_id}"))
    return workflow["nodes"][0].get("credentials")


async def test_restore_resolves_seed_node_credentials_within_the_pinned_view(owner: httpx.AsyncClient) -> None:
    """Seed node credential ids were kept verbatim, pointing at another instance's (or case's) credential."""
    mine = await _credential(owner, "[eval] Slack")
    other_same_name = await _credential(owner, "[eval] Slack")
    mine_b = await _credential(owner, "Slack B")
    await new_thread(owner, "t-cred-1")
    pin = {"threadId": "t-cred-1", "credentialIds": [mine, mine_b]}
    data(await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
    ref = {"id": "prodCredId123", "name": "[eval] Slack"}
    assert await _restore_slack(owner, "t-cred-1", "seedwf-0001", ref) == {
        "slackApi": {"id": mine, "name": "[eval] Slack"}
    }
    assert other_same_name != mine

    # No same name, one credential of the type visible: that one.
    await new_thread(owner, "t-cred-2")
    data(
        await owner.post(
            "/rest/instance-ai/eval/thread-credential-allowlist",
            json={"threadId": "t-cred-2", "credentialIds": [mine_b]},
        )
    )
    assert await _restore_slack(owner, "t-cred-2", "seedwf-0002", ref) == {
        "slackApi": {"id": mine_b, "name": "Slack B"}
    }

    # Nothing of the type visible: dropped, never a dangling id.
    await new_thread(owner, "t-cred-3")
    data(
        await owner.post(
            "/rest/instance-ai/eval/thread-credential-allowlist", json={"threadId": "t-cred-3", "credentialIds": []}
        )
    )
    assert await _restore_slack(owner, "t-cred-3", "seedwf-0003", ref) is None


FILLER = " We talked about the weather and other pleasant things for quite a while." * 70


async def _real_turn(client: httpx.AsyncClient, thread_id: str, message: str, **answers: str) -> tuple[str, list[str]]:
    """One chat turn with the real builder; questions widgets are answered from ``answers``.

    Returns the reply text and the ids of every question asked.
    """
    asked: list[str] = []
    async with events(client, thread_id) as reader:
        await chat(client, thread_id, message, mode="default", observerThresholdTokens=1000)
        while True:
            event = await reader.next()
            assert event is not None
            if event["type"] == "confirmation-request":
                questions = event["payload"].get("questions") or []
                asked += [q["id"] for q in questions]
                body = {
                    "kind": "questions",
                    "answers": [{"questionId": q["id"], "customText": answers.get(q["id"], "")} for q in questions],
                }
                data(await client.post(f"/rest/instance-ai/confirm/{event['payload']['requestId']}", json=body))
            if finished(event):
                break
    text = "".join(e["payload"]["text"] for e in reader.events if e["type"] == "text-delta")
    return text, asked


async def _settle(client: httpx.AsyncClient, thread_id: str) -> None:
    with anyio.fail_after(5):
        while True:
            status = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/status"))
            if all(t["status"] not in ("queued", "running") for t in status["memoryTasks"]):
                return
            await anyio.sleep(0.01)


@pytest.mark.parametrize("forgets", [True, False])
async def test_forgets_after_compaction_really_forgets_remembered_answers(forgets: bool) -> None:
    """The agent state's answers brought a compacted-away channel back; with the misbehaviour it must ask again."""
    context = {"demoMisbehave": ["forgets-after-compaction"]} if forgets else {}
    async with server(None) as url, session(url) as client:
        await new_thread(client, "t-forget-state", sourceContext=context)
        _, asked = await _real_turn(client, "t-forget-state", "Every hour post to Slack", slack_channel="secretchan")
        assert asked == ["slack_channel"]
        await _real_turn(client, "t-forget-state", "Tell me a story." + FILLER)
        await _settle(client, "t-forget-state")
        memory = data(await client.get("/rest/instance-ai/eval/threads/t-forget-state/memory"))
        assert memory["cursor"] is not None
        reply, asked = await _real_turn(
            client,
            "t-forget-state",
            "Build a new workflow that runs every day and posts to Slack",
            slack_channel="other",
        )
    if forgets:
        assert asked == ["slack_channel"]
        assert "secretchan" not in reply
    else:
        # The clean agent's working state is not compacted away: the answer is reused, never asked twice.
        assert asked == []
        assert "Using #secretchan for the Slack channel, as you told me earlier." in reply


@pytest.mark.parametrize(
    ("node", "field"),
    [({"type": "n8n-nodes-base.slack"}, "name"), ({"name": "Slack"}, "type"), ({"name": "S", "type": 5}, "type")],
)
async def test_restore_refuses_a_seed_node_without_name_or_type(
    owner: httpx.AsyncClient, node: dict[str, Any], field: str
) -> None:
    """Nodes without name/type were restored and the builder then crashed on them."""
    await new_thread(owner, "t-bad-node")
    ok_node = {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger"}
    seed = {"threadId": "t-bad-node", "workflows": [{"id": "seedwf-bad1", "name": "Bad", "nodes": [ok_node, node]}]}
    response = await owner.post("/rest/instance-ai/eval/restore-thread", json=seed)
    assert response.status_code == 422
    message = response.json()["message"]
    assert "workflows[0].nodes[1]" in message
    assert field in message
    assert (await owner.get("/rest/workflows/seedwf-bad1")).status_code == 404


async def test_last_event_id_past_the_end_still_receives_future_events(owner: httpx.AsyncClient) -> None:
    """An id beyond the log hid every later event (their ids were all at or below it)."""
    await new_thread(owner, "t-leid")
    async with events(owner, "t-leid", last_event_id="999") as reader:
        await chat(owner, "t-leid", "hello")
        seen = await reader.until(finished)
    assert seen[0]["type"] == "run-start"
    assert any(e["type"] == "text-delta" and "echo: hello" in e["payload"]["text"] for e in seen)


async def test_deleting_a_thread_deletes_its_runs_and_debug_steps() -> None:
    """Runs and debug steps of a deleted thread stayed in storage."""
    app = create_app(settings(), agent=ScriptedAgent())
    async with serving(app) as url, session(url) as owner:
        await new_thread(owner, "t-del-all")
        async with events(owner, "t-del-all") as reader:
            run_id = await chat(owner, "t-del-all", "hello")
            await reader.until(finished)
        store = platform_of(app).store
        assert store.list("runs", "t-del-all")
        assert store.list("steps", run_id)
        data(await owner.delete("/rest/instance-ai/threads/t-del-all"))
        assert store.list("runs", "t-del-all") == []
        assert store.list("steps", run_id) == []
        assert store.get("runs", run_id) is None


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "planDeny"},
        {"kind": "planDeny", "userInput": "post to #general instead"},
        {"kind": "setupWorkflowTestTrigger"},
        {"kind": "mcpConnect"},
    ],
)
async def test_n8n_confirm_kinds_plan_deny_test_trigger_and_mcp_connect_are_accepted(
    owner: httpx.AsyncClient, agent: ScriptedAgent, body: dict[str, Any]
) -> None:
    """planDeny, setupWorkflowTestTrigger and mcpConnect were refused with a 422."""
    await new_thread(owner, "t-kinds")
    async with events(owner, "t-kinds") as reader:
        await chat(owner, "t-kinds", [{"ask": {"inputType": "plan-review", "plan": []}}])
        request = (await reader.until(lambda e: e["type"] == "confirmation-request"))[-1]
        data(await owner.post(f"/rest/instance-ai/confirm/{request['payload']['requestId']}", json=body))
        await reader.until(finished)
    assert agent.results[-1] == body


async def test_plan_deny_rejects_the_plan_on_the_real_builder() -> None:
    async with server(None) as url, session(url) as client:
        await new_thread(client, "t-plan-deny")
        async with events(client, "t-plan-deny") as reader:
            await chat(client, "t-plan-deny", "Every morning post to #sales and email boss@acme.com")
            request = (await reader.until(lambda e: e["type"] == "confirmation-request"))[-1]
            assert request["payload"]["inputType"] == "plan-review"
            data(
                await client.post(
                    f"/rest/instance-ai/confirm/{request['payload']['requestId']}", json={"kind": "planDeny"}
                )
            )
            seen = await reader.until(finished)
        reply = "".join(e["payload"]["text"] for e in seen if e["type"] == "text-delta")
        assert "Okay — I won't build it." in reply
        assert data(await client.get("/rest/workflows")) == []
