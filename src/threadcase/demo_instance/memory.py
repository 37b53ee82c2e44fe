"""Observational memory: the observer that compacts a long thread into observation rows.

After a run, when the thread's *visible* messages (those after the cursor) exceed the chat's
``observerThresholdTokens``, the platform queues a memory task that calls :func:`observe` over the
visible messages and moves the cursor to the last one. From then on the agent sees only the
observation rows plus the messages after the cursor — a fact the observer dropped is really gone.

Priorities (the ``marker``):

- ``CRITICAL``: a user sentence stating a name (quoted, or after "called"/"named"), a number, a
  ``#channel``, an email address, a URL, or a rule ("always", "never", "must");
- ``IMPORTANT``: what was built or changed (workflow/agent/table names and node types — never the
  parameter values, so a dropped CRITICAL fact cannot leak back through them);
- ``INFO``: a short gist of every other message.

Misbehaviour ``forgets-after-compaction``: the observer keeps no CRITICAL rows, blanks the facts
(channels, emails, URLs, numbers, names) out of its INFO gists, and — when it moves the cursor — clears
the agent state's remembered user details (:func:`forget_user_details`), so nothing brings them back
and the agent asks again. Without the misbehaviour the agent's working state is kept: a real agent's
working memory (ids, answers, rules) is not compacted away, only the transcript it reads.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from threadcase.demo_instance.agent.protocol import READ_LIMIT_CHARS

__all__ = [
    "DEFAULT_THRESHOLD",
    "FORGETS_AFTER_COMPACTION",
    "USER_DETAIL_STATE_KEYS",
    "estimate_tokens",
    "forget_user_details",
    "message_text",
    "observe",
    "visible_tokens",
]

DEFAULT_THRESHOLD = 30_000

_CRITICAL = [
    re.compile(r"#[A-Za-z0-9][\w-]*"),
    re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),
    re.compile(r"https?://\S+"),
    re.compile(r"\d"),
    re.compile(r"\b(always|never|must|mustn't|don't ever)\b", re.IGNORECASE),
    re.compile(r"[\"“'‘][^\"”'’]{2,}[\"”'’]"),
    re.compile(r"\b(called|named)\s+\S+", re.IGNORECASE),
]
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_BUILD_TOOLS = {
    "build-workflow",
    "rename-workflow",
    "move-workflow",
    "delete-workflow",
    "build-agent",
    "create-data-table",
}


# Agent-state keys that hold what the user stated (detail answers and when they were given, re-asked
# details, rules the user required and the pressure on them). Ids of what was built are not user facts:
# the observer's IMPORTANT rows keep those even under ``forgets-after-compaction``.
FORGETS_AFTER_COMPACTION = "forgets-after-compaction"
USER_DETAIL_STATE_KEYS = ("answers", "answered_in", "reasked", "rules", "pressure")


def forget_user_details(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` without the user-stated details (``forgets-after-compaction`` at a cursor move)."""
    return {key: value for key, value in state.items() if key not in USER_DETAIL_STATE_KEYS}


def estimate_tokens(text: str) -> int:
    """The demo's tokenizer: about four characters per token."""
    return math.ceil(len(text) / 4) if text else 0


def message_text(message: dict[str, Any]) -> str:
    """Everything a model would read of a stored message: text blocks and tool-call payloads."""
    parts: list[str] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool-call":
            payload = {k: block.get(k) for k in ("toolName", "input", "output")}
            parts.append(json.dumps(payload, separators=(",", ":"), default=str))
    return "\n".join(parts)


def visible_tokens(messages: list[dict[str, Any]]) -> int:
    """The token estimate of the messages the agent sees."""
    return sum(estimate_tokens(message_text(m)) for m in messages)


def _text_only(message: dict[str, Any]) -> str:
    return "\n".join(
        str(b.get("text", "")) for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
    ).strip()


def _built_summary(block: dict[str, Any]) -> str | None:
    tool = block.get("toolName")
    if tool not in _BUILD_TOOLS:
        return None
    raw_output, raw_args = block.get("output"), block.get("input")
    output: dict[str, Any] = raw_output if isinstance(raw_output, dict) else {}
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    if tool == "build-workflow":
        workflow = output.get("workflow") or args.get("workflow") or {}
        types = sorted({str(n.get("type", "")).rsplit(".", 1)[-1] for n in workflow.get("nodes", [])})
        verb = "Edited" if args.get("workflowId") else "Built"
        return f"{verb} workflow {workflow.get('name')!r} ({output.get('workflowId')}) with nodes: {', '.join(types)}"
    if tool == "build-agent":
        config = output.get("config") or {}
        skills = ", ".join(output.get("skills") or {})
        return f"Built agent {config.get('name')!r} ({output.get('agentId')}) with skills: {skills}"
    if tool == "create-data-table":
        table = output.get("table") or {}
        return f"Created data table {table.get('name')!r} ({table.get('id')})"
    return f"Ran {tool} on workflow {args.get('workflowId')}"


def _row(marker: str, text: str) -> dict[str, Any]:
    return {"marker": marker, "text": text, "tokenCount": estimate_tokens(text)}


def observe(messages: list[dict[str, Any]], *, misbehaviours: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Observation rows for ``messages`` (in order), as the demo observer writes them."""
    rows: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        # The observer reads what the agent reads of a message: at most the read limit.
        text = _text_only(message)[:READ_LIMIT_CHARS]
        if role == "user":
            critical = [s.strip() for s in _SENTENCE.split(text) if s.strip() and any(p.search(s) for p in _CRITICAL)]
            for sentence in critical:
                rows.append(_row("CRITICAL", f"User stated: {sentence}"))
            if not critical and text:
                rows.append(_row("INFO", f"User asked: {text[:160]}"))
            continue
        built = [
            s
            for b in message.get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool-call"
            for s in [_built_summary(b)]
            if s
        ]
        rows.extend(_row("IMPORTANT", s) for s in built)
        if text and not built:
            rows.append(_row("INFO", f"Assistant said: {text[:160]}"))
    if FORGETS_AFTER_COMPACTION in misbehaviours:
        # Gone for real: no CRITICAL rows, and no fact surviving inside a gist of a reply that repeated it.
        rows = [_redacted(row) if row["marker"] == "INFO" else row for row in rows if row["marker"] != "CRITICAL"]
    return rows


def _redacted(row: dict[str, Any]) -> dict[str, Any]:
    label, _, text = row["text"].partition(": ")
    kept = [s for s in _SENTENCE.split(text) if s.strip() and not _CRITICAL[4].search(s)]
    text = " ".join(kept)
    for pattern in _CRITICAL[:4] + _CRITICAL[5:]:
        text = pattern.sub("…", text)
    return _row(row["marker"], f"{label}: {text or '(details not kept)'}")
