"""Observational memory: threshold, memory tasks in thread status, observation rows, cursor, and the
agent seeing only observations plus the messages after the cursor."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from tests.demo.conftest import ScriptedAgent, chat, data, events, finished, new_thread, server, session
from threadcase.demo_instance.memory import observe

pytestmark = pytest.mark.anyio

FACTS = "Post the summary to #ops-alerts every Monday at 9. Always include the amount. Send a copy to bob@example.com."
FILLER = " We talked about the weather and other pleasant things for quite a while." * 70


async def _settle(client: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    with anyio.fail_after(5):
        while True:
            status = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/status"))
            if all(t["status"] not in ("queued", "running") for t in status["memoryTasks"]):
                return list(status["memoryTasks"])
            await anyio.sleep(0.01)


async def _turn(
    client: httpx.AsyncClient, thread_id: str, message: Any, **extra: Any
) -> tuple[str, list[dict[str, Any]]]:
    async with events(client, thread_id) as reader:
        run_id = await chat(client, thread_id, message, **extra)
        await reader.until(finished)
    status = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/status"))
    return run_id, list(status["memoryTasks"])


async def _opening_input(client: httpx.AsyncClient, run_id: str) -> int:
    steps = data(await client.get(f"/rest/instance-ai/debug/runs/{run_id}"))["steps"]
    return int(steps[0]["output"]["usage"]["inputTokens"])


async def test_compaction_past_the_threshold(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    await new_thread(owner, "t-mem")
    first_run, tasks = await _turn(owner, "t-mem", FACTS + FILLER, observerThresholdTokens=1000)
    # Queued before run-finish, so a client reacting to run-finish sees it and waits.
    assert [t["status"] for t in tasks] in (["queued"], ["running"])
    assert tasks[0]["taskKind"] == "observer"
    # As n8n: a memory task is listed only while queued or running; once done, the cursor shows it ran.
    assert await _settle(owner, "t-mem") == []

    memory = data(await owner.get("/rest/instance-ai/eval/threads/t-mem/memory"))
    assert memory["cursor"]["lastObservedMessageId"]
    critical = [o["text"] for o in memory["observations"] if o["marker"] == "CRITICAL"]
    assert any("#ops-alerts" in text for text in critical)
    assert any("bob@example.com" in text for text in critical)
    assert any("Always include the amount" in text for text in critical)
    assert all(o["tokenCount"] > 0 for o in memory["observations"])

    second_run, _ = await _turn(owner, "t-mem", "what next?", observerThresholdTokens=1000)
    turn = agent.turns[-1]
    assert turn.history == []  # everything before the cursor is masked
    assert any("#ops-alerts" in o.text for o in turn.observations)
    # Compaction makes the later opening step smaller than the raw history would have been.
    assert await _opening_input(owner, second_run) < await _opening_input(owner, first_run)
    messages = data(await owner.get("/rest/instance-ai/threads/t-mem/messages"))["messages"]
    assert len(messages) == 4  # the store keeps everything; only the agent's view is compacted


async def test_below_the_threshold_nothing_compacts(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-nomem")
    _, tasks = await _turn(owner, "t-nomem", FACTS)
    assert tasks == []
    memory = data(await owner.get("/rest/instance-ai/eval/threads/t-nomem/memory"))
    assert memory == {"observations": [], "cursor": None}


async def test_forgets_after_compaction_keeps_no_critical_rows(agent: ScriptedAgent) -> None:
    async with server(agent) as url, session(url) as client:
        await new_thread(client, "t-forget", sourceContext={"demoMisbehave": ["forgets-after-compaction"]})
        await _turn(client, "t-forget", FACTS + FILLER, observerThresholdTokens=1000)
        await _settle(client, "t-forget")
        memory = data(await client.get("/rest/instance-ai/eval/threads/t-forget/memory"))
        assert memory["cursor"] is not None
        assert memory["observations"]
        assert all(o["marker"] != "CRITICAL" for o in memory["observations"])
        await _turn(client, "t-forget", "which channel was it?")
    seen = " ".join(o.text for o in agent.turns[-1].observations) + " ".join(h.text for h in agent.turns[-1].history)
    for fact in ("#ops-alerts", "bob@example.com", "Always include"):
        assert fact not in seen  # the fact is really gone, not even in a gist of a reply that repeated it


def test_observer_priorities() -> None:
    messages: list[dict[str, Any]] = [
        {"id": "1", "role": "user", "content": [{"type": "text", "text": "Hello there. Call it 'Lead Sync'."}]},
        {
            "id": "2",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Built it."},
                {
                    "type": "tool-call",
                    "toolName": "build-workflow",
                    "input": {"workflow": {"name": "Lead Sync"}},
                    "output": {
                        "workflowId": "w1",
                        "workflow": {
                            "name": "Lead Sync",
                            "nodes": [{"type": "n8n-nodes-base.slack", "parameters": {"channel": "#x"}}],
                        },
                    },
                },
            ],
        },
        {"id": "3", "role": "assistant", "content": [{"type": "text", "text": "Anything else?"}]},
    ]
    rows = observe(messages)
    assert [r["marker"] for r in rows] == ["CRITICAL", "IMPORTANT", "INFO"]
    assert "'Lead Sync'" in rows[0]["text"]
    assert "slack" in rows[1]["text"]
    assert "#x" not in rows[1]["text"]  # parameter values never leak into IMPORTANT rows
