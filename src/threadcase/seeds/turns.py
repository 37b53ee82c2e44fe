"""The seeded prefix of a transcript: restored messages as :class:`~threadcase.records.Turn`.

The judge reads the whole conversation as one, so the seeded history is rendered with the same
turn shape as the live one: user text; assistant text plus its tool calls (a ``questions``-style
tool or a confirmation pair shows up as the tool call it was).
"""

from __future__ import annotations

from typing import Any

from threadcase.records import ToolCallRecord, Turn

__all__ = ["seeded_turns"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(p for p in parts if p)


def _tool_calls(content: Any) -> list[ToolCallRecord]:
    calls: list[ToolCallRecord] = []
    if not isinstance(content, list):
        return calls
    for index, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "tool-call":
            continue
        args = block.get("input", block.get("args"))
        error = block.get("error")
        calls.append(
            ToolCallRecord(
                tool_call_id=str(block.get("toolCallId") or f"seed-call-{index}"),
                tool_name=str(block.get("toolName") or "unknown"),
                args=args if isinstance(args, dict) else ({} if args is None else {"input": args}),
                result=block.get("output", block.get("result")),
                error=None if error is None else str(error),
            )
        )
    return calls


def seeded_turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """One turn per user or assistant message, in order, marked ``seeded`` and ``sent_by="seed"``.

    Messages without a user/assistant role (``custom`` store entries, system notes) are not turns.
    """
    turns: list[Turn] = []
    for message in messages:
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        content = message.get("content")
        turns.append(
            Turn(
                index=len(turns),
                role=role,
                text=_text(content),
                seeded=True,
                sent_by="seed",
                tool_calls=_tool_calls(content) if role == "assistant" else [],
            )
        )
    return turns
