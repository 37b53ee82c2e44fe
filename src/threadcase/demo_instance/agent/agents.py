"""Agents: "build an agent that ..." and skill edits on an attached or seeded agent.

A new agent is built by a spawned ``agent-builder`` sub-agent (``agent-spawned`` / ``agent-completed``
events around one ``build-agent`` call). A skill edit fetches the agent with ``get-agent``, changes
only the named skill (or appends a new one) and saves with ``build-agent {agentId, ...}``; every other
skill is sent back exactly as it was read, so it stays byte-identical.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from threadcase.demo_instance.agent.parse import parse_name
from threadcase.demo_instance.agent.protocol import AgentContext, ToolFailed, TurnInput

__all__ = ["AGENT_MODEL", "build_agent", "edit_skill", "is_agent_request", "is_skill_request", "target_agent_id"]

AGENT_MODEL = "anthropic/claude-sonnet-4-6"
"""The model every demo-built agent is configured with (a config value; nothing calls it)."""

_AGENT_RE = re.compile(
    r"\b(?:build|create|make|set\s+up|spin\s+up)\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+)?(?:ai\s+)?agent\b", re.I
)
_ADD_SKILL_RE = re.compile(
    r"\badd\s+(?:a|another|one\s+more|a\s+new)?\s*skill\s*(?:called\s+|named\s+)?[\"“']?([^\"”']*?)[\"”']?\s*"
    r"(?:that|which|to|for|so\s+(?:it|that))\s+(.+)$",
    re.I,
)
_CHANGE_SKILL_RE = re.compile(
    r"\b(?:change|update|edit|modify|rewrite|adjust)\s+(?:the\s+)?[\"“']?(.+?)[\"”']?\s+skill\b\s*(?:so\s+(?:that\s+)?(?:it\s+)?|to\s+|:\s*)?(.*)$",
    re.I,
)


def is_agent_request(text: str) -> bool:
    """The message asks to build an AI agent (not a workflow)."""
    return bool(_AGENT_RE.search(text))


def is_skill_request(text: str) -> bool:
    """The message asks to add or change a skill of an agent."""
    return bool(_ADD_SKILL_RE.search(text) or _CHANGE_SKILL_RE.search(text))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "skill"


def _purpose(text: str) -> str:
    match = re.search(
        r"\bagent\b\s*(?:that|which|who|to|for)?\s*(.+?)(?:\s+with\s+(?:a\s+|the\s+)?skills?\b.*)?$", text, re.I
    )
    purpose = match.group(1) if match else text
    return re.sub(r"\s*[\"“'][^\"”']*[\"”']\s*", " ", re.sub(r"\b(?:called|named)\s+", "", purpose)).strip(" .") or text


def _skill_names(text: str, purpose: str) -> list[str]:
    match = re.search(r"\bwith\s+(?:a\s+|the\s+)?skills?\s+(?:for|to|called|named)?\s*(.+?)\.?$", text, re.I)
    if not match:
        return [purpose]
    parts = re.split(r",\s*(?:and\s+)?|(?<!\s)\s+and\s+", match.group(1))
    return [p.strip(" .\"“”'") for p in parts if p.strip(" .\"“”'")]


async def build_agent(turn: TurnInput, ctx: AgentContext) -> str:
    """Build a new agent through the agent-builder sub-agent; returns the reply text."""
    text = turn.message
    purpose = _purpose(text)
    name = parse_name(text) or " ".join(w.capitalize() for w in purpose.split()[:3]) + " Agent"
    skills: dict[str, dict[str, Any]] = {}
    for skill_name in _skill_names(text, purpose):
        skill_id = _slug(skill_name)
        skills[skill_id] = {
            "name": skill_name[:1].upper() + skill_name[1:],
            "description": f"Use when the task is to {skill_name}.",
            "instructions": f"When asked to {skill_name}, do it step by step and report the result briefly.",
        }
    config = {
        "name": name,
        "model": AGENT_MODEL,
        "instructions": f"You are {name}. Your job: {purpose}. Use your skills; ask when a detail is missing.",
        "skills": [{"type": "skill", "id": skill_id} for skill_id in skills],
        "tools": [],
    }
    sub_agent = await ctx.spawn("agent-builder", {"type": "agent"})
    try:
        result = await ctx.call_tool("build-agent", {"config": config, "skills": skills})
    except ToolFailed as exc:
        await ctx.complete(sub_agent)
        return f"I couldn't build the agent: {exc}"
    await ctx.complete(sub_agent)
    agent_id = str(result.get("agentId", ""))
    turn.state["agent_id"] = agent_id
    turn.state["agent_name"] = name
    listed = ", ".join(s["name"] for s in skills.values())
    return f"Built the agent “{name}” with {len(skills)} skill{'s' if len(skills) != 1 else ''}: {listed}."


def target_agent_id(turn: TurnInput) -> str | None:
    """The attached agent, else the one built or edited earlier in this thread."""
    for attachment in turn.attachments:
        if attachment.get("type") == "agent" and attachment.get("id"):
            return str(attachment["id"])
    agent_id = turn.state.get("agent_id")
    if agent_id:
        return str(agent_id)
    # A seeded thread: the agent built earlier shows in the visible history's tool calls.
    for message in reversed(turn.history):
        for call in reversed(message.tool_calls):
            result = call.get("result")
            if call.get("toolName") == "build-agent" and isinstance(result, dict) and result.get("agentId"):
                return str(result["agentId"])
    return None


async def edit_skill(turn: TurnInput, ctx: AgentContext) -> str:
    """Add one skill or change one skill of the target agent, leaving the others untouched."""
    agent_id = target_agent_id(turn)
    if agent_id is None:
        return "Which agent should I change? Attach it to your message and ask again."
    current = await ctx.call_tool("get-agent", {"agentId": agent_id})
    config = copy.deepcopy(current.get("config", {}))
    skills: dict[str, Any] = copy.deepcopy(current.get("skills", {}))
    text = turn.message.strip()
    change = _CHANGE_SKILL_RE.search(text)
    add = _ADD_SKILL_RE.search(text)
    if change and not add:
        wanted, instruction = change.group(1).strip(), change.group(2).strip(" .")
        skill_id = next(
            (
                sid
                for sid, skill in skills.items()
                if wanted.lower() in {sid.lower(), str(skill.get("name", "")).lower()}
                or wanted.lower() in str(skill.get("name", "")).lower()
            ),
            None,
        )
        if skill_id is None:
            names = ", ".join(str(s.get("name", sid)) for sid, s in skills.items()) or "none"
            return f"I couldn't find a skill called “{wanted}” on this agent (its skills: {names})."
        if not instruction:
            return f"What should change in the {skills[skill_id].get('name', skill_id)} skill?"
        skills[skill_id] = {**skills[skill_id], "instructions": instruction[:1].upper() + instruction[1:] + "."}
        summary = f"Updated the {skills[skill_id].get('name', skill_id)} skill; the other skills are unchanged."
    elif add:
        label = add.group(1).strip() or add.group(2).strip(" .")
        skill_id = _slug(label)
        while skill_id in skills:
            skill_id += "-2"
        task = add.group(2).strip(" .")
        skills[skill_id] = {
            "name": label[:1].upper() + label[1:],
            "description": f"Use when the task is to {task}.",
            "instructions": f"When asked to {task}, do it step by step and report the result briefly.",
        }
        config.setdefault("skills", []).append({"type": "skill", "id": skill_id})
        summary = f"Added the {skills[skill_id]['name']} skill; the existing skills are unchanged."
    else:
        return "I didn't understand which skill to change. Say “add a skill that …” or “change the X skill to …”."
    await ctx.call_tool("build-agent", {"agentId": agent_id, "config": config, "skills": skills})
    turn.state["agent_id"] = agent_id
    return summary
