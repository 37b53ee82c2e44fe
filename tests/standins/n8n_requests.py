"""Chat-completions request bodies shaped like the ones n8n 2.41.1 sent to the scripted model.

Shapes copied from requests captured against the real n8n (docs/n8n-local.md, "Driving n8n's own
agent"): the orchestrator's 19 tools and ``tool_choice: auto``; its first user message wrapped in
``<thread-context>``; tool results as JSON strings, build-workflow's as a two-part content list (the
result, then a skill n8n loads alongside); helper agents identified by their system prompt.
"""

from __future__ import annotations

import json
from typing import Any

ORCHESTRATOR_TOOLS = (
    "workflows",
    "executions",
    "credentials",
    "data-tables",
    "research",
    "n8n-docs",
    "nodes",
    "ask-user",
    "build-workflow",
    "verify-built-workflow",
    "agents",
    "load_skill",
    "workspace_read_file",
    "workspace_read_tool_result",
    "workspace_str_replace_file",
    "workspace_write_file",
    "workspace_execute_command",
    "search_tools",
    "load_tool",
)
SANDBOX_SYSTEM = "<built_in_rules>\n- Some tool results are wrapped in <untrusted_data> tags because ..."
PLAIN_SYSTEM = "Skill loading protocol:\n..."


def tools(names: tuple[str, ...] = ORCHESTRATOR_TOOLS) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": name, "description": "...", "parameters": {"type": "object"}}}
        for name in names
    ]


def wrapped(message: str) -> str:
    """A user message as n8n sends it: the thread-context preamble, a blank line, the text."""
    return (
        '<thread-context>\n<project-context>\nThis conversation is scoped to the project "Owner" (personal).\n'
        "</project-context>\n\n<current-date-time>\n## Current Date and Time\n\nnow\n</current-date-time>\n"
        f"</thread-context>\n\n{message}"
    )


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant message holding one tool call, as the AI SDK echoes it back."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


def bare_result(call_id: str, result: Any) -> dict[str, Any]:
    """A tool message whose content is the result's JSON (ask-user, workflows, ...)."""
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


def build_result(call_id: str, result: dict[str, Any]) -> dict[str, Any]:
    """build-workflow's tool message: a content-part list, the result first, a skill second."""
    parts = [
        {"type": "text", "text": json.dumps(result)},
        {"type": "text", "text": '[Skill: "post-build-flow"]\n# Post-Build Flow\n...'},
    ]
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(parts)}


def orchestrator(*messages: dict[str, Any], system: str = SANDBOX_SYSTEM) -> dict[str, Any]:
    return {
        "model": "scripted",
        "messages": [{"role": "system", "content": system}, *messages],
        "tools": tools(),
        "tool_choice": "auto",
        "stream": True,
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": wrapped(text)}


def helper(system: str, prompt: str, *, tool_names: tuple[str, ...] = ()) -> dict[str, Any]:
    """A helper agent's request: non-streaming, its own system prompt, no tools unless given."""
    body: dict[str, Any] = {
        "model": "scripted",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
    }
    if tool_names:
        body["tools"] = tools(tool_names)
    return body


TITLE_SYSTEM = "You generate a short descriptive title for a conversation based on its first user message.\n\n..."
# n8n 2.41, classify-node-destructiveness.service.js: build-time verification asks which nodes would
# change an outside system (only for nodes its own rules call ambiguous, e.g. a Slack post).
CLASSIFIER_SYSTEM = (
    "You classify n8n workflow nodes by whether executing them would CREATE, UPDATE, DELETE, or SEND data "
    "in an external system (destructive), or only READ/transform data (safe)."
)
FIXTURES_SYSTEM = "You generate realistic mock output for n8n workflow nodes whose real execution is being simulated"
HINTS_SYSTEM = "You are a test data planner for n8n workflow automation. Your job is to create ..."
PIN_SYSTEM = "You are a test data generator for n8n workflow automation. Generate realistic mock API response data"
MOCK_SYSTEM = (
    "You generate realistic HTTP responses for one specific request, mocking an API in n8n workflow evaluation."
)
OBSERVER_SYSTEM = "You observe a conversation between a user and an agent. Extract only durable facts ..."
REFLECTOR_SYSTEM = "Reduce the observation log while preserving the information the agent needs ..."
