"""Collection reads back every agent the live turns touched, so the agent checks see seeded agents too."""

from __future__ import annotations

from typing import Any

from threadcase.harness.conversation_collect import built_ids
from threadcase.records import ToolCallRecord, Turn


def _call(name: str, result: dict[str, Any] | None = None, error: str | None = None, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(tool_call_id=name, tool_name=name, args=args, result=result, error=error)


def _turn(*calls: ToolCallRecord, seeded: bool = False) -> Turn:
    return Turn(index=0, role="assistant", tool_calls=list(calls), seeded=seeded)


def test_an_agent_only_read_or_edited_by_id_is_collected() -> None:
    """Regression: only build-agent *results* counted, so a seeded agent that was read (and an edit was
    claimed but never saved) or edited by a tool whose result omits the id was never read back."""
    turns = [
        _turn(_call("get-agent", {"config": {}}, agentId="seeded-read"), seeded=True),
        _turn(
            _call("get-agent", {"config": {}, "skills": {}}, agentId="a-read"),
            _call("update-agent-skill", {"ok": True}, agentId="a-edited"),
            _call("build-agent", {"agentId": "a-built"}),
            _call("get-agent", None, error="not found", agentId="a-missing"),
            _call("delete-agent", {"deleted": True}, agentId="a-gone"),
            _call("get-workflow", {"workflowId": "w9"}, agentId="not-an-agent-tool"),
        ),
    ]
    assert built_ids(turns)[1] == ["a-read", "a-edited", "a-built"]
