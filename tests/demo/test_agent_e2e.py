"""The real builder agent inside the real demo server, driven over loopback HTTP and SSE."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from tests.demo.conftest import EventReader, chat, data, events, finished, new_thread, server, session

pytestmark = pytest.mark.anyio


async def _slack_credential(client: httpx.AsyncClient, thread_id: str) -> str:
    credential = data(
        await client.post(
            "/rest/credentials", json={"name": "Team Slack", "type": "slackApi", "data": {"accessToken": "x"}}
        )
    )
    pin = {"threadId": thread_id, "credentialIds": [credential["id"]], "bypassCredentialTest": [credential["id"]]}
    data(await client.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
    return str(credential["id"])


def _text(events_seen: list[dict[str, Any]]) -> str:
    return "".join(e["payload"]["text"] for e in events_seen if e["type"] == "text-delta")


async def _workflows(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    listed = data(await client.get("/rest/workflows"))
    return [data(await client.get(f"/rest/workflows/{w['id']}")) for w in listed]


async def _confirm(client: httpx.AsyncClient, reader: EventReader, body: dict[str, Any]) -> dict[str, Any]:
    request = (await reader.until(lambda e: e["type"] == "confirmation-request"))[-1]
    data(await client.post(f"/rest/instance-ai/confirm/{request['payload']['requestId']}", json=body))
    return request


async def test_build_with_a_clarifying_question_then_execute_it_mocked() -> None:
    async with server(None) as url, session(url) as client:
        await new_thread(client, "e2e-build")
        await _slack_credential(client, "e2e-build")
        async with events(client, "e2e-build") as reader:
            await chat(
                client, "e2e-build", "Every morning post the orders to Slack, only if amount > 100", mode="default"
            )
            request = await _confirm(
                client,
                reader,
                {
                    "kind": "questions",
                    "answers": [{"questionId": "slack_channel", "customText": "#orders", "selectedOptions": []}],
                },
            )
            assert request["payload"]["inputType"] == "questions"
            seen = await reader.until(finished)
        assert seen[-1]["payload"]["status"] == "completed"
        assert any(e["type"] == "tool-call" and e["payload"]["toolName"] == "build-workflow" for e in seen)
        assert "Built “Daily Slack post”" in _text(seen)
        (workflow,) = await _workflows(client)
        slack = next(n for n in workflow["nodes"] if n["type"] == "n8n-nodes-base.slack")
        assert slack["parameters"]["channelId"]["value"] == "#orders"

        hints = json.dumps({"trigger": [{"amount": 50}, {"amount": 500, "message": "big order"}]})
        result = data(
            await client.post(
                f"/rest/instance-ai/eval/execute-with-llm-mock/{workflow['id']}", json={"scenarioHints": hints}
            )
        )
        assert result["success"] is True, result
        slack_run = result["nodeResults"]["Slack"]
        assert len(slack_run["interceptedRequests"]) == 1, "the IF filter really ran: only the big order posted"


async def test_edit_in_place_and_the_rebuild_misbehaviour_over_http() -> None:
    async with server(None) as url, session(url) as client:
        for thread_id, misbehave in (("e2e-clean", []), ("e2e-rebuild", ["rebuilds-instead-of-edit"])):
            await new_thread(client, thread_id, sourceContext={"demoMisbehave": misbehave})
            await _slack_credential(client, thread_id)
            async with events(client, thread_id) as reader:
                await chat(client, thread_id, 'Every hour post the status to #ops. Call it "Status ' + thread_id + '"')
                await reader.until(finished)
                await chat(client, thread_id, "Post to #eng instead")
                seen = await reader.until(finished)
            assert "#eng" in _text(seen)
        names = sorted(w["name"] for w in await _workflows(client))
        assert names == ["Status e2e-clean", "Status e2e-rebuild", "Status e2e-rebuild"]


async def test_setup_card_deferred_says_it_needs_setup() -> None:
    async with server(None) as url, session(url) as client:
        await new_thread(client, "e2e-setup")
        pin = {"threadId": "e2e-setup", "credentialIds": [], "bypassCredentialTest": []}
        data(await client.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
        async with events(client, "e2e-setup") as reader:
            await chat(client, "e2e-setup", "Every morning post the report to #sales")
            request = await _confirm(client, reader, {"kind": "approval", "approved": False})
            seen = await reader.until(finished)
        assert "inputType" not in request["payload"]
        assert request["payload"]["setupRequests"][0]["credentialType"] == "slackApi"
        assert "needs setup before it can run" in _text(seen)


async def _settled(client: httpx.AsyncClient, thread_id: str) -> None:
    for _ in range(100):
        status = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/status"))
        busy = {"queued", "running", "pending"}
        if not status["hasActiveRun"] and not any(t["status"] in busy for t in status.get("memoryTasks", [])):
            return
        await anyio.sleep(0.02)
    raise AssertionError(f"thread {thread_id} never settled: {status}")


async def _recall_after_compaction(misbehave: list[str]) -> str:
    thread_id = "e2e-recall-" + ("-".join(misbehave) or "clean")
    async with server(None) as url, session(url) as client:
        await new_thread(client, thread_id, sourceContext={"demoMisbehave": misbehave})
        await _slack_credential(client, thread_id)
        async with events(client, thread_id) as reader:
            for message in (
                "Every morning post the sales report to #sales, only if amount > 100.",
                "Add error handling: continue on fail and alert #ops",
                "Rename it to Morning sales",
            ):
                await chat(client, thread_id, message, mode="default", observerThresholdTokens=1000)
                await reader.until(finished)
                await _settled(client, thread_id)
            memory = data(await client.get(f"/rest/instance-ai/eval/threads/{thread_id}/memory"))
            assert memory["cursor"] is not None, "the thread compacted"
            await chat(client, thread_id, "What did I say the threshold was?", observerThresholdTokens=1000)
            return _text(await reader.until(finished))


async def test_recall_after_real_compaction_comes_from_the_observations() -> None:
    reply = await _recall_after_compaction([])
    assert reply.startswith("From my notes on the earlier conversation:")
    assert "amount > 100" in reply
    # The clause that answers the question, not the whole note (which also holds the channel).
    assert "#sales" not in reply


async def test_recall_after_forgetful_compaction_is_honest_about_it() -> None:
    reply = await _recall_after_compaction(["forgets-after-compaction"])
    assert reply.startswith("I can't see your exact words anymore; going by the workflow as it stands")
    assert "amount > 100" in reply
