"""Post-conversation collection: which artifacts the live conversation touched, and an instance
without a memory route."""

from __future__ import annotations

from typing import Any

import pytest

from threadcase.errors import MissingRouteError
from threadcase.harness.conversation_collect import built_ids, collect_after_conversation, saved_workflows
from threadcase.instance.models import InstanceFeatures
from threadcase.records import RunRecord, ToolCallRecord, Turn


def _call(name: str, result: dict[str, Any] | None = None, error: str | None = None, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(tool_call_id=name, tool_name=name, args=args, result=result, error=error)


def _turn(*calls: ToolCallRecord, seeded: bool = False) -> Turn:
    return Turn(index=0, role="assistant", tool_calls=list(calls), seeded=seeded)


def test_saved_workflows_follow_builds_renames_and_deletes() -> None:
    turns = [
        _turn(_call("build-workflow", {"workflowId": "w1", "workflow": {"name": "One"}})),
        _turn(_call("build-workflow", {"workflowId": "w2", "workflow": {"name": "Two"}})),
        _turn(_call("rename-workflow", {"workflowId": "w1", "name": "Uno"})),
        _turn(_call("delete-workflow", {"deleted": True}, workflowId="w2")),
        _turn(_call("build-workflow", None, error="boom", workflowId="w3")),
    ]
    assert [(w.id, w.name) for w in saved_workflows(turns)] == [("w1", "Uno")]


def test_built_ids_ignore_seeded_turns_and_failed_calls() -> None:
    turns = [
        _turn(_call("build-workflow", {"workflowId": "seeded"}), seeded=True),
        _turn(
            _call("build-workflow", {"workflowId": "w1"}),
            _call("build-agent", {"agentId": "a1"}),
            _call("build-agent", {"agentId": "a1"}),
            _call("create-data-table", {"table": {"id": "t1", "name": "T"}}),
            _call("create-data-table", None, error="exists"),
        ),
    ]
    assert built_ids(turns) == (["w1"], ["a1"], ["t1"])


class _NoMemoryRoute:
    """An instance like n8n 2.41: no memory route; the other collection reads answer nothing."""

    def __init__(self) -> None:
        self.features = InstanceFeatures()
        self.memory_asks = 0

    async def thread_memory(self, thread_id: str) -> Any:
        self.memory_asks += 1
        self.features.memory_route = False
        raise MissingRouteError("the instance has no route GET .../memory", status=404)

    async def thread_runs(self, thread_id: str) -> list[Any]:
        return []


@pytest.mark.anyio
async def test_an_instance_without_a_memory_route_is_noted_not_warned() -> None:
    """n8n 2.41 has no memory route: that is a fact about the instance (the compaction premise says it),
    not a failure of this run to warn about."""
    client: Any = _NoMemoryRoute()
    record = RunRecord(case_slug="c", thread_id="t1", mode="multi-turn")
    await collect_after_conversation(client, record, thread_id="t1", project_id="p1", read_memory=True)
    assert (record.memory, record.memory_unavailable) == (None, "this instance exposes no memory route")
    assert record.warnings == []
    assert client.memory_asks == 1
