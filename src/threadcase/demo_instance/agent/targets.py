"""Which workflow a change, a question or a refused request is about.

In order: the attached workflow, a hand-off's ``workflowId``, a workflow named in the message ("the
Daily digest workflow"), the thread's current one (``state["workflow_id"]``), the last one a build in
the visible history returned, and finally — for a seeded or compacted thread with no working memory
yet — the workflow the history last mentions by name. Never "the project's only workflow": the
project is shared with other threads.
"""

from __future__ import annotations

from typing import Any

from threadcase.demo_instance.agent.edits import named_workflow
from threadcase.demo_instance.agent.protocol import AgentContext, ToolFailed, TurnInput

__all__ = ["find_target", "has_target_hint", "remember", "workflow_by_name"]


def has_target_hint(turn: TurnInput, text: str) -> bool:
    """Something in the thread or the message points at an existing workflow."""
    return bool(
        any(a.get("type") == "workflow" for a in turn.attachments)
        or turn.state.get("workflow_id")
        or named_workflow(text)
        or _history_workflow_id(turn)
    )


def _history_workflow_id(turn: TurnInput) -> str | None:
    for message in reversed(turn.history):
        for call in reversed(message.tool_calls):
            result = call.get("result")
            if call.get("toolName") == "build-workflow" and isinstance(result, dict) and result.get("workflowId"):
                return str(result["workflowId"])
    return None


async def workflow_by_name(ctx: AgentContext, name: str) -> str | None:
    """The id of the workflow with that name (exactly, else containing it, ignoring case), or None."""
    found = (await ctx.call_tool("list-workflows", {"query": name})).get("workflows", [])
    exact = [w for w in found if str(w.get("name", "")).casefold() == name.casefold()]
    pick = exact or [w for w in found if name.casefold() in str(w.get("name", "")).casefold()]
    return str(pick[0]["id"]) if pick else None


async def find_target(turn: TurnInput, ctx: AgentContext, text: str) -> tuple[str, dict[str, Any]] | None:
    """The workflow a change or question is about, with its current JSON (see the module docstring)."""
    state = turn.state
    workflow_id: str | None = next((str(a["id"]) for a in turn.attachments if a.get("type") == "workflow"), None)
    if workflow_id is None and turn.context and turn.context.get("workflowId"):
        workflow_id = str(turn.context["workflowId"])
    named = named_workflow(text)
    if workflow_id is None and named is not None:
        workflow_id = await workflow_by_name(ctx, named)
        if workflow_id is None:
            return None
    workflow_id = workflow_id or state.get("workflow_id") or _history_workflow_id(turn)
    if workflow_id is None:
        workflow_id = await _mentioned_workflow(turn, ctx)
    if workflow_id is None:
        return None
    try:
        workflow = (await ctx.call_tool("get-workflow", {"workflowId": workflow_id})).get("workflow")
    except ToolFailed:
        # Deleted or replaced since: re-find the thread's workflow by the name we remember.
        remembered = state.get("workflow_name")
        retry = await workflow_by_name(ctx, str(remembered)) if remembered else None
        if retry is None or retry == workflow_id:
            return None
        workflow_id = retry
        workflow = (await ctx.call_tool("get-workflow", {"workflowId": workflow_id})).get("workflow")
    if not isinstance(workflow, dict):
        return None
    return workflow_id, workflow


async def _mentioned_workflow(turn: TurnInput, ctx: AgentContext) -> str | None:
    """A seeded or compacted thread has no working memory yet: the workflow its history last mentions.

    Never "the project's only workflow": the project is shared with other threads, and editing a
    workflow this conversation never mentioned would be a cross-thread leak.
    """
    texts = [m.text for m in turn.history] + [o.text for o in turn.observations]
    if not any(texts):
        return None
    workflows = (await ctx.call_tool("list-workflows", {})).get("workflows", [])
    # Longest names first, so "Leads [seed 1a2b]" wins over another thread's plain "Leads".
    workflows.sort(key=lambda w: len(str(w.get("name", ""))), reverse=True)
    for text in reversed(texts):
        for workflow in workflows:
            if str(workflow.get("name", "")) and str(workflow["name"]) in text:
                return str(workflow["id"])
    return None


def remember(turn: TurnInput, workflow_id: str, name: str) -> None:
    """Make this workflow the thread's current one (the default target of the next change)."""
    turn.state["workflow_id"] = workflow_id
    turn.state["workflow_name"] = name
