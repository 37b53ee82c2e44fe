"""Missing details: one clarifying widget with every missing detail, never asked twice.

A detail is keyed by what it is (``slack_channel``, ``gmail_recipient``, ``http_url``, ...). Its
answer — or the fact that the user skipped it — is kept in ``turn.state["answers"]`` so a later turn
reuses it instead of asking again (the ``reasks-answered`` misbehaviour breaks exactly that). A
skipped detail is built as a marked placeholder and said so; only ``ignores-declined`` invents one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent.parse import (
    CHANNEL_RE,
    EMAIL_RE,
    URL_RE,
    ActionSpec,
    ErrorHandlingSpec,
    TriggerSpec,
    parse_action_phrases,
    parse_trigger,
)
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.demo_instance.agent.talk import answer_values

__all__ = ["DetailResult", "declines", "fill_details"]

# (action kind, parameter) -> (detail key, question, what the placeholder says)
_ACTION_DETAILS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("slack", "channel"): ("slack_channel", "Which Slack channel should it post to?", "Slack channel"),
    ("gmail", "to"): ("gmail_recipient", "Which email address should it send to?", "recipient email"),
    ("http", "url"): ("http_url", "Which URL should the HTTP request call?", "URL"),
    ("github", "repo"): (
        "github_repo",
        "Which GitHub repository (owner/name) should the issue go in?",
        "GitHub repository",
    ),
    ("sheets", "document"): ("sheets_document", "Which Google Sheets spreadsheet should it append to?", "spreadsheet"),
    ("datatable", "table"): ("data_table", "Which data table should it use?", "data table"),
}
TRIGGER_OPTIONS = ["Every day at 9am", "Every hour", "When a webhook is called", "When a form is submitted", "Manually"]
_QUESTIONS = {
    "alert_channel": "Which Slack channel should failure alerts go to?",
    "trigger": "What should start this workflow?",
    "action": "What should the workflow do (for example post to a Slack channel or send an email)?",
}
_PLACEHOLDER_NAMES = {
    "alert_channel": "alert channel",
    "trigger": "trigger",
    **{key: label for key, _, label in _ACTION_DETAILS.values()},
}


@dataclass
class DetailResult:
    """The outcome of filling details: what to build with, and what to tell the user."""

    trigger: TriggerSpec | None = None
    extra_actions: list[ActionSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)


_DECLINE_RE = re.compile(
    r"^\W*(?:no|nope|none|nothing|n/?a|skip(?:\s+(?:it|that))?|later|not\s+now|not\s+yet|tbd|pass|dunno|"
    r"(?:i\s+)?don'?t\s+know|not\s+sure|no\s+idea)\W*$"
    r"|\b(?:rather\s+not|prefer\s+not|don'?t\s+want\s+to\s+(?:say|share|give|tell)|won'?t\s+(?:say|share|give|tell)|"
    r"not\s+(?:going|gonna)\s+to\s+(?:say|share|give|tell)|leave\s+it\s+(?:blank|empty|out|open)|skip\s+(?:it|that|this)|"
    r"fill\s+(?:it|that)\s+in\s+(?:myself|later)|decide\s+later|not\s+decided)\b",
    re.IGNORECASE,
)


def declines(value: str) -> bool:
    """The answer refuses or postpones the detail in words ("I'd rather not say", "skip it", "later")."""
    return _DECLINE_RE.search(value) is not None


def _normalise(key: str, value: str) -> str | None:
    """Read the detail out of the user's answer; None when it does not contain one."""
    if key in {"slack_channel", "alert_channel"}:
        match = CHANNEL_RE.search(value)
        word = re.fullmatch(r"\s*([A-Za-z0-9][\w-]*)\s*", value)
        return f"#{match.group(1)}" if match else (f"#{word.group(1)}" if word else None)
    if key == "gmail_recipient":
        email = EMAIL_RE.search(value)
        return email.group(0) if email else None
    if key == "http_url":
        url = URL_RE.search(value)
        return url.group(0).rstrip(".,;:!?") if url else None
    if key == "github_repo":
        repo = re.search(r"([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)", value)
        return repo.group(1) if repo else None
    return value.strip() or None


def _state(turn: TurnInput) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    answers: dict[str, Any] = turn.state.setdefault("answers", {})
    answered_in: dict[str, Any] = turn.state.setdefault("answered_in", {})
    reasked: list[str] = turn.state.setdefault("reasked", [])
    return answers, answered_in, reasked


async def fill_details(
    turn: TurnInput,
    ctx: AgentContext,
    actions: list[ActionSpec],
    *,
    error_spec: ErrorHandlingSpec | None = None,
    need_trigger: bool = False,
    need_action: bool = False,
) -> DetailResult:
    """Fill every missing detail of ``actions`` (mutated in place) with one widget at most."""
    result = DetailResult()
    answers, answered_in, reasked = _state(turn)
    wanted: list[tuple[str, str]] = []  # (key, question)
    for action in actions:
        for (kind, param), (key, question, _) in _ACTION_DETAILS.items():
            if action.kind == kind and action.params.get(param) is None:
                wanted.append((key, question))
    if error_spec is not None and error_spec.alert_requested and error_spec.alert_channel is None:
        wanted.append(("alert_channel", _QUESTIONS["alert_channel"]))
    if need_trigger:
        wanted.append(("trigger", _QUESTIONS["trigger"]))
    if need_action:
        wanted.append(("action", _QUESTIONS["action"]))
    wanted = list(dict.fromkeys(wanted))

    to_ask = [(key, q) for key, q in wanted if key not in answers]
    if mb.ASKS_WHAT_WAS_GIVEN in turn.misbehaviours:
        # The defect: a detail the user gave is asked for anyway (once per detail), and then not used.
        asked_given: list[str] = turn.state.setdefault("asked_given", [])
        for action in actions:
            for (kind, param), (key, question, _) in _ACTION_DETAILS.items():
                if action.kind == kind and action.params.get(param) is not None and key not in asked_given:
                    asked_given.append(key)
                    to_ask.append((key, question))
    if mb.REASKS_ANSWERED in turn.misbehaviours:
        # The defect: an answer from an earlier turn is asked for again (once per question).
        for key, value in list(answers.items()):
            if value is not None and answered_in.get(key) != turn.run_id and key not in reasked:
                reasked.append(key)
                to_ask.append((key, _QUESTIONS.get(key) or _question_for(key)))
    asking = {key for key, _ in to_ask}
    for key, _ in wanted:
        if key not in asking and answers.get(key) is not None:
            result.notes.append(
                f"Using {answers[key]} for the {_PLACEHOLDER_NAMES.get(key, key)}, as you told me earlier."
            )

    if to_ask:
        questions = [_question(key, question) for key, question in to_ask]
        if any(q["id"] == "data_table" for q in questions):
            tables = (await ctx.call_tool("list-data-tables", {})).get("dataTables", [])
            for q in questions:
                if q["id"] == "data_table" and tables:
                    q["options"] = [str(t.get("name", "")) for t in tables]
        values = answer_values(await ctx.ask({"inputType": "questions", "questions": questions}))
        for key, _ in to_ask:
            if key in turn.state.get("asked_given", ()) and key not in {k for k, _ in wanted}:
                result.asked.append(key)
                continue  # asks-what-was-given: the answer is not used
            answers[key] = _read_answer(key, values.get(key), result)
            answered_in[key] = turn.run_id
            result.asked.append(key)

    for action in actions:
        for (kind, param), (key, _, label) in _ACTION_DETAILS.items():
            if action.kind != kind or action.params.get(param) is not None:
                continue
            value = _resolved(turn, key, answers, result, label)
            action.params[param] = value
    if error_spec is not None and error_spec.alert_requested and error_spec.alert_channel is None:
        value = _resolved(turn, "alert_channel", answers, result, "alert channel")
        error_spec.alert_channel = value if value is not None else None
    if need_trigger:
        raw = _resolved(turn, "trigger", answers, result, "trigger", say=False)
        result.trigger = _trigger_from(raw, result)
    if need_action:
        raw = _resolved(turn, "action", answers, result, "action", say=False)
        result.extra_actions = parse_action_phrases(raw) if raw else []
        if raw and not result.extra_actions:
            result.notes.append(f"I didn't understand “{raw}” as a step.")
    return result


_MUST_PARSE = {"slack_channel", "alert_channel", "gmail_recipient", "http_url", "github_repo"}
"""Details with a shape (a channel, an address, a URL, owner/repo): an answer without one gives nothing."""


def _read_answer(key: str, raw: str | None, result: DetailResult) -> str | None:
    """The detail in the user's answer; None when it was skipped, declined in words, or not there.

    A declined detail is the same as a skipped one, whatever the words; an answer that holds no value of
    the detail's shape is said back rather than used as the value (it would become a broken parameter).
    """
    if raw is None or declines(raw):
        return None
    value = _normalise(key, raw)
    if value is None and key in _MUST_PARSE:
        label = _PLACEHOLDER_NAMES.get(key, key)
        result.notes.append(f"I couldn't find a {label} in your answer “{raw.strip()}”.")
        return None
    return value or raw.strip()


def _question_for(key: str) -> str:
    return next((q for k, q, _ in _ACTION_DETAILS.values() if k == key), f"What is the {key}?")


def _question(key: str, question: str) -> dict[str, Any]:
    if key == "trigger":
        return {"id": key, "question": question, "type": "single", "options": list(TRIGGER_OPTIONS)}
    return {"id": key, "question": question, "type": "text", "options": []}


def _resolved(
    turn: TurnInput, key: str, answers: dict[str, Any], result: DetailResult, label: str, *, say: bool = True
) -> Any:
    value = answers.get(key)
    if value is not None:
        return value
    if key in answers and mb.IGNORES_DECLINED in turn.misbehaviours:
        # The defect: a declined detail silently becomes a made-up, plausible value.
        invented = mb.INVENTED_VALUES.get(key)
        if invented is not None:
            return invented
    if say and label not in result.placeholders:
        result.placeholders.append(label)
    return None


def _trigger_from(raw: str | None, result: DetailResult) -> TriggerSpec:
    if raw is None:
        result.placeholders.append("trigger")
        return TriggerSpec(kind="manual", placeholder=True)
    low = raw.lower()
    trigger = parse_trigger(raw)
    if trigger is None and "hour" in low:
        trigger = TriggerSpec(kind="schedule", interval_field="hours", interval=1)
    if trigger is None and re.search(r"\bday\b", low):
        trigger = TriggerSpec(kind="schedule", hour=9)
    if trigger is None:
        result.notes.append(f"I didn't understand “{raw}” as a trigger, so I used a manual trigger for now.")
        result.placeholders.append("trigger")
        return TriggerSpec(kind="manual", placeholder=True)
    return trigger
