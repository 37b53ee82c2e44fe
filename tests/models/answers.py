"""Answers an echoing fake model server computes from each request (``FakeOpenAI.responder``)."""

from __future__ import annotations

import json
import re
from typing import Any

_NUMBERED = re.compile(r"^(\d+)\. ", re.MULTILINE)


def _text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content))
    return "\n".join(parts)


DONE = {"decision": {"action": "declare_done"}}
"""The user proxy's answer between runs: nothing left to ask."""


def follow_up(message: str) -> dict[str, Any]:
    """The user proxy's answer between runs: say ``message``."""
    return {
        "decision": {
            "action": "send_follow_up_message",
            "message": message,
            "renameWorkflowTo": None,
            "runWorkflowId": None,
        }
    }


def schema_name(body: dict[str, Any]) -> str:
    return str(body.get("response_format", {}).get("json_schema", {}).get("name", ""))


def echo(body: dict[str, Any]) -> Any:
    """A plausible answer of the right shape for any threadcase request: the judge and the verifier
    pass everything (quoting the expectation's number), the user proxy declares done between runs and
    approves what is on screen."""
    name = schema_name(body)
    text = _text(body)
    if name == "expectation_verdicts":
        expectations = text.split("## Expectations", 1)[-1]
        indexes = sorted({int(n) for n in _NUMBERED.findall(expectations)})
        return {
            "results": [
                {"index": i, "reason": f"expectation {i} is met in the transcript", "pass": True} for i in indexes
            ]
        }
    if name == "scenario_verdict":
        return {"reasoning": "the execution did what the criterion says", "pass": True, "failureCategory": None}
    if name == "UserTurnDecision":
        return {"decision": {"action": "declare_done"}}
    if name == "ConfirmationDecision":
        return {"decision": {"action": "approve_or_reject", "approved": True, "userInput": None}}
    return json.dumps({"unexpected": name})
