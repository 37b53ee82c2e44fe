"""Pure parts of post-conversation collection: which artifacts the live conversation touched."""

from __future__ import annotations

from typing import Any

from threadcase.harness.conversation_collect import built_ids, saved_workflows
from threadcase.records import ToolCallRecord, Turn


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
