"""Pick the rule that answers a request and fill its templates; fall back to the built-in helpers.

The first rule (in script order) whose every condition holds answers. With none, n8n's helper agents
(title, fixtures, mocked-execution hints, pin data, HTTP mocks, memory observer and reflector) get a
built-in answer (:mod:`.helpers`) and the orchestrator or a sub-agent gets a text that says no rule
matched and what was asked — visible in the transcript, so a script gap is never silent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from threadcase.standins import helpers
from threadcase.standins.asks import Ask, ToolResult
from threadcase.standins.script import Failure, ModelScript, Reply, Rule, Usage

__all__ = ["Answer", "TemplateError", "answer", "fill", "matches"]

_TEMPLATE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


class TemplateError(Exception):
    """A template named something the request does not hold."""


@dataclass
class Answer:
    """What to send back, and why (the rule that answered, or the built-in)."""

    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: Failure | None = None
    usage: Usage | None = None
    delay_ms: int = 0
    source: str = ""
    """``rule:<id>``, ``builtin:<agent>`` or ``unmatched``."""
    problem: str | None = None
    """A template that could not be filled (the answer then says so in its text)."""


def matches(rule: Rule, ask: Ask) -> dict[str, str] | None:
    """The rule's regex captures when every condition of its ``when`` holds, else None."""
    when = rule.when
    if when.agent != ask.agent:
        return None
    if when.after is not None and when.after != ask.after:
        return None
    if when.user_turn is not None and len(ask.user_texts) != when.user_turn:
        return None
    seen = {r.tool for r in ask.results}
    since = {r.tool for r in ask.results_since_user}
    if not set(when.seen) <= seen or set(when.not_seen) & seen:
        return None
    if not set(when.seen_since_user) <= since or set(when.not_seen_since_user) & since:
        return None
    captures: dict[str, str] = {}
    latest = ask.latest()
    for condition, text in (
        (when.user_text, ask.user_text),
        (when.first_user_text, ask.first_user_text),
        (when.result, latest.text if latest else None),
        (when.system, ask.system),
    ):
        if condition is None:
            continue
        if text is None:
            return None
        found = condition.search(text)
        if found is None:
            return None
        captures.update(found)
    return captures


def _walk(value: Any, path: list[str], name: str) -> Any:
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.lstrip("-").isdigit() and -len(value) <= int(key) < len(value):
            value = value[int(key)]
        else:
            raise TemplateError(f"{{{{{name}}}}}: no {key!r} in {_preview(value)}")
    return value


def _preview(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _answer_text(result: ToolResult | None, question_id: str) -> str:
    answers = result.value.get("answers") if result and isinstance(result.value, dict) else None
    for entry in answers or []:
        if isinstance(entry, dict) and entry.get("questionId") == question_id:
            if entry.get("customText"):
                return str(entry["customText"])
            return ", ".join(str(o) for o in entry.get("selectedOptions") or [])
    raise TemplateError(f"{{{{answer.{question_id}}}}}: no answer to question {question_id!r} in the conversation")


def _lookup(name: str, ask: Ask, captures: dict[str, str]) -> Any:
    head, _, rest = name.partition(".")
    path = rest.split(".") if rest else []
    if head == "user" and not path:
        return ask.user_text
    if head == "firstUser" and not path:
        return ask.first_user_text
    if head == "match" and len(path) == 1:
        if path[0] not in captures:
            raise TemplateError(f"{{{{{name}}}}}: no regex group {path[0]!r} matched")
        return captures[path[0]]
    if head == "answer" and len(path) == 1:
        return _answer_text(ask.latest("ask-user"), path[0])
    if head == "result":
        latest = ask.latest()
        if latest is None:
            raise TemplateError(f"{{{{{name}}}}}: the conversation has no tool result yet")
        return _walk(latest.value, path, name)
    if head == "results" and path:
        result = ask.latest(path[0])
        if result is None:
            raise TemplateError(f"{{{{{name}}}}}: no {path[0]!r} result in the conversation")
        return _walk(result.value, path[1:], name)
    raise TemplateError(
        f"{{{{{name}}}}}: unknown template (use user, firstUser, match.NAME, answer.ID, result.PATH, results.TOOL.PATH)"
    )


def _resolve(expression: str, ask: Ask, captures: dict[str, str]) -> Any:
    """One template's value; ``NAME|fallback`` gives the fallback text when NAME has no value."""
    name, bar, fallback = expression.partition("|")
    try:
        return _lookup(name.strip(), ask, captures)
    except TemplateError:
        if bar:
            return fallback.strip()
        raise


def fill(value: Any, ask: Ask, captures: dict[str, str]) -> Any:
    """``value`` with every template filled; ``{"$json": V}`` becomes the JSON text of V."""
    if isinstance(value, str):
        whole = _TEMPLATE.fullmatch(value)
        if whole:
            # A lone template keeps its value's type (a number stays a number inside "$json").
            return _resolve(whole.group(1), ask, captures)
        return _TEMPLATE.sub(lambda m: _as_text(_resolve(m.group(1), ask, captures)), value)
    if isinstance(value, list):
        return [fill(item, ask, captures) for item in value]
    if isinstance(value, dict):
        if set(value) == {"$json"}:
            return json.dumps(fill(value["$json"], ask, captures))
        return {key: fill(item, ask, captures) for key, item in value.items()}
    return value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _from_reply(reply: Reply, ask: Ask, captures: dict[str, str], source: str) -> Answer:
    out = Answer(usage=reply.usage, delay_ms=reply.delay_ms, error=reply.error, source=source)
    try:
        if reply.json_ is not None:
            out.text = json.dumps(fill(reply.json_, ask, captures))
        else:
            out.text = fill(reply.text, ask, captures) if reply.text is not None else None
            out.tool_calls = [(call.name, fill(call.arguments, ask, captures)) for call in reply.tool_calls]
    except TemplateError as exc:
        out.problem = f"{source}: {exc}"
        out.text = f"[threadcase scripted model] {out.problem}"
        out.tool_calls = []
    return out


def answer(script: ModelScript, ask: Ask) -> Answer:
    """The answer to ``ask``: the first matching rule, else the built-in for its agent."""
    for rule in script.rules:
        captures = matches(rule, ask)
        if captures is not None:
            return _from_reply(rule.reply, ask, captures, f"rule:{rule.id}")
    builtin = helpers.builtin_reply(ask)
    if builtin is not None:
        return _from_reply(builtin, ask, {}, f"builtin:{ask.agent}")
    snippet = ask.user_text.replace("\n", " ")[:160]
    return Answer(
        text=(
            f"[threadcase scripted model] no rule matched: agent={ask.agent}, after={ask.after or '-'}, "
            f"user text {snippet!r}"
        ),
        source="unmatched",
    )
