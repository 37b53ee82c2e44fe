"""What the instance already told us is not asked again; an instance that tells less (n8n) is asked.

The demo adds threadcase extensions: ``run-finish`` carries the thread's status and the run's steps, and
the debug run list carries each run's steps. With them a conversation needs no status request, no run
list, no per-run debug request and (no memory task ever ran) no memory read; without them the client
asks, as it must on n8n.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.conversation.helpers import drive, echo_agent, make_case
from threadcase import wire
from threadcase.demo_instance.events import EventLog
from threadcase.instance import InstanceClient

pytestmark = pytest.mark.anyio


def _count_calls(monkeypatch: pytest.MonkeyPatch, calls: Counter[str], *names: str) -> None:
    for name in names:
        original = getattr(InstanceClient, name)

        def make(original: Any, name: str) -> Any:
            async def recording(self: InstanceClient, *args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                return await original(self, *args, **kwargs)

            return recording

        monkeypatch.setattr(InstanceClient, name, make(original, name))


async def test_the_demo_extensions_spare_status_run_debug_and_memory_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[str] = Counter()
    _count_calls(monkeypatch, calls, "thread_status", "run_debug", "thread_runs", "thread_memory")
    out = await drive(make_case(["build a flow", "rename it"]), agent=echo_agent)
    record = out.record
    assert record.ended_by == "script-exhausted"
    run_ids = [rid for t in record.turns if t.role == "assistant" for rid in t.run_ids]
    assert len(run_ids) == 2
    # Token numbers of every run, from the run-finish events.
    assert list(record.usage) == run_ids
    assert all(steps and steps[0].inputTokens > 0 for steps in record.usage.values())
    assert calls["thread_runs"] == 0
    assert calls["run_debug"] == 0
    # drive() itself reads the status once after the conversation; the conversation never asked.
    assert calls["thread_status"] == 1
    assert calls["thread_memory"] == 0
    assert record.memory is None


async def test_an_instance_without_the_extensions_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on n8n: no status on run-finish, no steps in the run list."""
    original_append = EventLog.append

    def plain_append(self: EventLog, type: str, payload: dict[str, Any], *, extra: Any = None, **where: Any) -> Any:
        return original_append(self, type, payload, **where)

    monkeypatch.setattr(EventLog, "append", plain_append)
    original_runs = InstanceClient.thread_runs

    async def runs_without_steps(self: InstanceClient, thread_id: str) -> list[wire.RunSummary]:
        return [r.model_copy(update={"steps": None}) for r in await original_runs(self, thread_id)]

    monkeypatch.setattr(InstanceClient, "thread_runs", runs_without_steps)
    calls: Counter[str] = Counter()
    _count_calls(monkeypatch, calls, "thread_status", "run_debug", "thread_memory")
    out = await drive(make_case(["build a flow", "rename it"]), agent=echo_agent)
    record = out.record
    run_ids = [rid for t in record.turns if t.role == "assistant" for rid in t.run_ids]
    assert list(record.usage) == run_ids
    assert all(steps and steps[0].inputTokens > 0 for steps in record.usage.values())
    assert calls["run_debug"] == 2
    assert calls["thread_status"] >= 3  # one after each run-finish, one by drive()
    assert calls["thread_memory"] == 1
    assert record.memory is not None
