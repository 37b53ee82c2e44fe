"""Built-in answers for n8n's helper agents, so a script only has to say what the orchestrator does.

Each answer has the shape n8n parses (read from n8n 2.41's code) and is derived from the request:

- ``title``: the first line of the user's message, at most 60 characters.
- ``fixtures`` (build-time simulation) and ``eval-pin-data`` (mocked execution, phase 1.5): one item
  per node the prompt lists, with the top-level fields of the node's output schema when the prompt
  gives one (placeholder values by type), else ``{"ok": true}``.
- ``eval-hints`` (mocked execution, phase 1): a global context naming the scenario, a trigger payload
  with a timestamp (a webhook gets ``{headers, query, body}``), and one hint per listed node.
- ``eval-mock-responder`` (one mocked HTTP call): ``get_endpoint_quirks`` first, then
  ``submit_response`` with a 200 JSON body ``{"ok": true}``, then a short text.
- ``eval-completion-mock`` (an AI node inside a mocked execution): ``submit_agent_step`` with a short
  final answer (``{kind: "final", content: "Done."}``), then a short text.
- ``classifier`` (build-time verification: would running a node change an outside system?): every
  ``Node name:`` of the prompt classified ``simulate`` with low confidence — n8n's own answer when
  uncertain, so nothing is executed for real.
- ``observer``: one CRITICAL observation per user message of the transcript delta, so what the user
  said survives compaction; ``reflector``: drop nothing, merge nothing.

A script rule with the same ``agent`` overrides any of these.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from threadcase.standins.asks import Ask
from threadcase.standins.script import Reply

__all__ = ["builtin_reply", "placeholder_item"]

_MESSAGE_BLOCK = re.compile(r"<message>\s*(.*?)\s*</message>", re.DOTALL)
_FIXTURE_NODE = re.compile(r"^Node name: (.+)$", re.MULTILINE)
_PIN_NODE = re.compile(r"^### (.+?) \(([^()]+?) v[0-9.]+\)\s*$", re.MULTILINE)
_HINT_NODE = re.compile(r"^- (.+?) \(([A-Za-z0-9@/_.-]+\.[A-Za-z0-9_]+)\)", re.MULTILINE)
_JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
_OBSERVED_USER = re.compile(
    r"^\[(\d{4}-\d\d-\d\dT(\d\d):(\d\d)[^\]]*)\] user:\n(.*?)(?=^\[\d{4}-\d\d-\d\dT|\Z)", re.DOTALL | re.MULTILINE
)
_PLACEHOLDERS: dict[str, Any] = {"string": "sample", "number": 1, "integer": 1, "boolean": True, "array": []}


def _section(text: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next ``## `` heading."""
    start = text.find(f"## {heading}")
    if start < 0:
        return ""
    rest = text[start + len(heading) + 3 :]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


def placeholder_item(schema_text: str | None) -> dict[str, Any]:
    """A pin-data item: the schema's top-level fields with placeholder values, or ``{"ok": true}``."""
    try:
        schema = json.loads(schema_text) if schema_text else None
    except ValueError:
        schema = None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return {"json": {"ok": True}}
    fields: dict[str, Any] = {}
    for name, spec in properties.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        fields[name] = {"simulated": True} if kind == "object" else _PLACEHOLDERS.get(str(kind), "sample")
    return {"json": fields}


def _blocks_by_node(text: str, headers: list[re.Match[str]]) -> dict[str, str | None]:
    """Each node's first ```json block between its header and the next one."""
    out: dict[str, str | None] = {}
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        block = _JSON_BLOCK.search(text, header.end(), end)
        out[header.group(1).strip()] = block.group(1) if block else None
    return out


def _title(ask: Ask) -> Reply:
    found = _MESSAGE_BLOCK.search(ask.user_text)
    first = (found.group(1) if found else ask.user_text).strip().splitlines()
    title = (first[0] if first else "Conversation").strip()
    return Reply.model_validate({"text": title if len(title) <= 60 else title[:57].rstrip() + "..."})


def _pin_items(text: str, pattern: re.Pattern[str]) -> Reply:
    nodes = _blocks_by_node(text, list(pattern.finditer(text)))
    return Reply.model_validate({"json": {name: [placeholder_item(schema)] for name, schema in nodes.items()}})


def _hints(ask: Ask) -> Reply:
    scenario = _section(ask.user_text, "Test Scenario").strip()
    nodes = _HINT_NODE.findall(_section(ask.user_text, "Workflow Nodes"))
    trigger: dict[str, Any] = {"timestamp": datetime.now(UTC).isoformat(timespec="seconds")}
    if any("webhook" in node_type.lower() for _, node_type in nodes):
        trigger = {"headers": {}, "query": {}, "body": {"scenario": scenario or "default"}}
    return Reply.model_validate(
        {
            "json": {
                "globalContext": f"threadcase scripted test data. Scenario: {scenario or 'none given'}",
                "triggerContent": trigger,
                "nodeHints": {name: f"Return a successful, minimal response for {name}." for name, _ in nodes},
            }
        }
    )


def _mock_responder(ask: Ask) -> Reply:
    if ask.after == "get_endpoint_quirks":
        call = {"name": "submit_response", "arguments": {"type": "json", "statusCode": 200, "body": {"ok": True}}}
        return Reply.model_validate({"toolCalls": [call]})
    latest = ask.latest()
    if ask.after == "submit_response" and latest is not None and latest.text.startswith("Invalid:"):
        # n8n rejected the shape: submit a bare empty object, which every provider check accepts.
        call = {"name": "submit_response", "arguments": {"type": "json", "statusCode": 200, "body": {}}}
        return Reply.model_validate({"toolCalls": [call]})
    if ask.after in ("", "user") and "get_endpoint_quirks" in ask.tools:
        return Reply.model_validate({"toolCalls": [{"name": "get_endpoint_quirks", "arguments": {}}]})
    return Reply.model_validate({"text": "Response submitted."})


def _observations(ask: Ask) -> Reply:
    delta = ask.user_text.split("New transcript delta since the last observation:", 1)[-1]
    bullets = []
    for _stamp, hour, minute, said in _OBSERVED_USER.findall(delta):
        line = " ".join(said.split())
        if line:
            bullets.append(f"* CRITICAL ({hour}:{minute}) User said: {line[:400]}")
    return Reply.model_validate({"text": "\n".join(bullets) if bullets else "NO_OBSERVATIONS"})


def _classify(ask: Ask) -> Reply:
    verdict = {"verdict": "simulate", "reason": "May write to an outside system.", "confidence": "low"}
    return Reply.model_validate({"json": {name.strip(): verdict for name in _FIXTURE_NODE.findall(ask.user_text)}})


def builtin_reply(ask: Ask) -> Reply | None:
    """The built-in answer for a helper agent's request, or None for the orchestrator and sub-agents."""
    if ask.agent == "title":
        return _title(ask)
    if ask.agent == "fixtures":
        return _pin_items(ask.user_text, _FIXTURE_NODE)
    if ask.agent == "eval-pin-data":
        return _pin_items(_section(ask.user_text, "Nodes Requiring Mock Data"), _PIN_NODE)
    if ask.agent == "eval-hints":
        return _hints(ask)
    if ask.agent == "eval-mock-responder":
        return _mock_responder(ask)
    if ask.agent == "eval-completion-mock":
        if ask.after in ("", "user") and "submit_agent_step" in ask.tools:
            step = {"name": "submit_agent_step", "arguments": {"kind": "final", "content": "Done."}}
            return Reply.model_validate({"toolCalls": [step]})
        return Reply.model_validate({"text": "Step submitted."})
    if ask.agent == "classifier":
        return _classify(ask)
    if ask.agent == "observer":
        return _observations(ask)
    if ask.agent == "reflector":
        return Reply.model_validate({"json": {"drop": [], "merge": []}})
    return None
