"""What a server shutdown does to a turn in flight: the stored run, the stored messages, the event log.

A shutdown must end every run (cancelled, with its run-finish and assistant message stored) before
storage closes, and a server restarted on the same file must serve turns as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.demo.conftest import ScriptedAgent, chat, data, events, new_thread, server, session
from threadcase.demo_instance.storage import Store

pytestmark = pytest.mark.anyio


async def test_a_shutdown_mid_turn_ends_the_run_before_storage_closes(agent: ScriptedAgent, tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    async with server(agent, db_path=db) as url, session(url) as client:
        await new_thread(client, "t-down")
        async with events(client, "t-down") as reader:
            run_id = await chat(client, "t-down", [{"say": "working"}, {"sleep": 30}])
            await reader.until(lambda e: e["type"] == "text-delta")
    store = Store(db)
    try:
        run = store.get("runs", run_id)
        events_stored = [e["type"] for e in store.list("events", "t-down")]
        messages = [m["role"] for m in store.list("messages", "t-down")]
    finally:
        store.close()
    assert run is not None
    assert (run["status"], run["reason"]) == ("cancelled", "cancelled by the user")
    assert "finishedAt" in run
    assert events_stored == ["run-start", "text-block", "run-finish"]  # the deltas, kept as one block
    assert messages == ["user", "assistant"]


async def test_runs_started_after_a_restart_are_served_as_before(agent: ScriptedAgent, tmp_path: Path) -> None:
    """The run tasks of one app do not outlive it: a second server on the same file starts clean."""
    db = tmp_path / "demo.sqlite"
    for round in range(2):
        async with server(agent, db_path=db) as url, session(url) as client:
            thread_id = f"t-again-{round}"
            await new_thread(client, thread_id)
            async with events(client, thread_id) as reader:
                await chat(client, thread_id, "hello")
                seen = await reader.until(lambda e: e["type"] == "run-finish")
            assert seen[-1]["payload"]["status"] == "completed"
            status = data(await client.get(f"/rest/instance-ai/threads/{thread_id}/status"))
            assert (status["hasActiveRun"], status["isSuspended"]) == (False, False)
