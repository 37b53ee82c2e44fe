"""What a chat-completions request from n8n asks: which of n8n's agents is calling, and the facts a rule reads.

n8n 2.41 calls its model from several places, all through the Vercel AI SDK's OpenAI-compatible
provider, all with the same model id:

| caller | how it is told apart |
|---|---|
| the orchestrator (the agent the user talks to) | ``tools`` holds both ``ask-user`` and ``build-workflow`` |
| a sub-agent (a delegated builder or helper) | ``tools`` present, without that pair |
| the thread-title generator | system prompt "You generate a short descriptive title …" |
| build-time simulation fixtures | "You generate realistic mock output for n8n workflow nodes …" |
| mocked execution: hints, pin data | "You are a test data planner …", "You are a test data generator …" |
| build-time verification: which nodes to simulate | "You classify n8n workflow nodes by whether executing them …" |
| mocked execution: HTTP mocks, AI-node mocks | "You generate realistic HTTP responses …", "You simulate ONE …" |
| the memory observer / reflector | "You observe a conversation …" / "Reduce the observation log …" |

The system prompt's opening is stable for the helpers (they are constants in n8n's code) but not for
the orchestrator (it changes with the sandbox), hence ``tools`` there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Ask", "ToolResult", "classify", "read_ask"]

_HELPER_PROMPTS: tuple[tuple[str, str], ...] = (
    ("title", "You generate a short descriptive title"),
    ("fixtures", "You generate realistic mock output for n8n workflow nodes"),
    ("classifier", "You classify n8n workflow nodes by whether executing them"),
    ("eval-hints", "You are a test data planner"),
    ("eval-pin-data", "You are a test data generator"),
    ("eval-mock-responder", "You generate realistic HTTP responses"),
    ("eval-completion-mock", "You simulate ONE response from the LLM"),
    ("observer", "You observe a conversation between a user and an agent"),
    ("reflector", "Reduce the observation log"),
)
_ORCHESTRATOR_TOOLS = frozenset({"ask-user", "build-workflow"})
_THREAD_CONTEXT = re.compile(r"^\s*<thread-context>.*?</thread-context>\s*", re.DOTALL)
_UNTRUSTED = re.compile(r"^\s*<untrusted_data\b[^>]*>\n?(.*?)\n?</untrusted_data>\s*$", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class ToolResult:
    """One tool result in the conversation: the tool, its raw text, and the parsed value."""

    tool: str
    call_id: str
    text: str
    value: Any
    """The result parsed from JSON (n8n's content-part list and ``<untrusted_data>`` wrapper removed);
    the text itself when it is not JSON."""


@dataclass(frozen=True)
class Ask:
    """One request, read: who asks, and the conversation's facts."""

    agent: str
    model: str
    stream: bool
    system: str
    tools: tuple[str, ...]
    user_texts: tuple[str, ...]
    """Every user message's text, in order (the ``<thread-context>`` preamble removed)."""
    results: tuple[ToolResult, ...]
    """Every tool result, in order."""
    results_since_user: tuple[ToolResult, ...]
    after: str
    """``"user"`` when the last message is the user's, the tool's name when it is a tool result, else ""."""
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def user_text(self) -> str:
        return self.user_texts[-1] if self.user_texts else ""

    @property
    def first_user_text(self) -> str:
        return self.user_texts[0] if self.user_texts else ""

    def latest(self, tool: str | None = None) -> ToolResult | None:
        """The latest tool result (of ``tool`` when given)."""
        for result in reversed(self.results):
            if tool is None or result.tool == tool:
                return result
        return None

    def size_chars(self) -> int:
        """Characters n8n sent: messages and tool schemas (the basis of the token estimate)."""
        return len(json.dumps(self.raw.get("messages", []))) + len(json.dumps(self.raw.get("tools", [])))


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _parse_result(text: str) -> tuple[str, Any]:
    """The readable text of a tool message and its parsed value.

    n8n sends some results as the JSON of a content-part list (``[{"type": "text", "text": …}]``) and
    some as bare JSON; external data may sit in an ``<untrusted_data>`` wrapper.
    """
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, list) and value and all(isinstance(p, dict) and p.get("type") == "text" for p in value):
        # build-workflow answers [{text: <JSON result>}, {text: <a skill n8n loads alongside>}]: the
        # value is the first part; the text is all of them.
        parts = [str(p.get("text", "")) for p in value]
        text = "\n".join(parts)
        try:
            value = json.loads(parts[0])
        except ValueError:
            value = text
    if isinstance(value, str):
        unwrapped = _UNTRUSTED.match(value)
        if unwrapped:
            text = unwrapped.group(1)
            try:
                value = json.loads(text)
            except ValueError:
                value = text
    return text, value


def classify(system: str, tools: tuple[str, ...]) -> str:
    """Which of n8n's model callers sent a request with this system prompt and these tools."""
    opening = system.lstrip()
    for agent, prefix in _HELPER_PROMPTS:
        if opening.startswith(prefix):
            return agent
    if set(tools) >= _ORCHESTRATOR_TOOLS:
        return "orchestrator"
    return "subagent" if tools else "other"


def read_ask(body: dict[str, Any]) -> Ask:
    """Read a chat-completions request body."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = tuple(
        str(t.get("function", {}).get("name", ""))
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    )
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    call_names: dict[str, str] = {}
    user_texts: list[str] = []
    results: list[ToolResult] = []
    since_user: list[ToolResult] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            user_texts.append(_THREAD_CONTEXT.sub("", _text(message.get("content")), count=1).strip())
            since_user = []
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                call_names[str(call.get("id"))] = str(function.get("name", ""))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            text, value = _parse_result(_text(message.get("content")))
            result = ToolResult(call_names.get(call_id, ""), call_id, text, value)
            results.append(result)
            since_user.append(result)
    last = messages[-1] if messages else {}
    if last.get("role") == "user":
        after = "user"
    elif last.get("role") == "tool":
        after = results[-1].tool if results else ""
    else:
        after = ""
    return Ask(
        agent=classify(system, tools),
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        system=system,
        tools=tools,
        user_texts=tuple(user_texts),
        results=tuple(results),
        results_since_user=tuple(since_user),
        after=after,
        raw=body,
    )
