"""Checks on what the agent called and asked: tools and their arguments, clarifying questions, bypasses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from threadcase.case import schema
from threadcase.grading.check_util import MISSING, dig, not_judged, nothing_there, quote, text_of, verdict
from threadcase.records import RunRecord, ToolCallRecord
from threadcase.render import normalise_question, widget_questions
from threadcase.verdicts import UnitVerdict

__all__ = [
    "CREDENTIAL_WIDGETS",
    "clarifying_questions",
    "credential_tests_bypassed",
    "no_repeated_questions",
    "tool_arguments",
    "tools",
]

CREDENTIAL_WIDGETS = frozenset({"setup", "credentials"})
"""Widget input types through which the simulated user can set a credential up (setup wizard, credential card)."""


def _live_calls(record: RunRecord) -> list[tuple[int, ToolCallRecord]]:
    return [(t.index, c) for t in record.live_turns if t.role == "assistant" for c in t.tool_calls]


def tools(record: RunRecord, called: list[str], not_called: list[str]) -> Iterator[UnitVerdict]:
    """``toolsCalled`` / ``toolsNotCalled`` over the agent's live turns."""
    calls = _live_calls(record)
    names = sorted({c.tool_name for _, c in calls})
    for key, wanted_list, want_called in (("toolsCalled", called, True), ("toolsNotCalled", not_called, False)):
        for i, tool in enumerate(wanted_list):
            unit = f"check:{key}#{i}"
            label = f"the agent {'called' if want_called else 'never called'} the tool {tool}"
            hit = next(((idx, c) for idx, c in calls if c.tool_name == tool), None)
            if hit is not None:
                idx, call = hit
                count = sum(1 for _, c in calls if c.tool_name == tool)
                reason = f"{tool} was called {count} time(s), first in turn {idx} with args {quote(str(call.args))}"
                yield verdict(unit, label, want_called, reason, turn_index=None if want_called else idx)
            else:
                reason = f"{tool} was never called (tools called: {', '.join(names) or 'none'})"
                yield verdict(unit, label, not want_called, reason)


def _argument_label(check: schema.ToolArgumentCheck) -> str:
    where = f"argument {check.path}" if check.path else "arguments"
    test = f"{where} matching /{check.matches}/" if check.matches is not None else f"an {where}"
    return f"{check.tool} was {'never ' if check.absent else ''}called with {test}"


def _argument_hit(call: ToolCallRecord, check: schema.ToolArgumentCheck, pattern: re.Pattern[str] | None) -> str | None:
    """The matching text of this call's arguments (quoted), or None."""
    value: Any = call.args if check.path is None else dig(call.args, check.path)
    if value is MISSING:
        return None
    text = text_of(value)
    if pattern is None:
        return quote(text, 80)
    found = pattern.search(text)
    if found is None:
        return None
    lo, hi = max(0, found.start() - 30), min(len(text), found.end() + 30)
    return quote(("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else ""), 100)


def tool_arguments(record: RunRecord, checks: list[schema.ToolArgumentCheck]) -> Iterator[UnitVerdict]:
    """``toolArguments``: a tool called (or never called) with arguments matching a pattern.

    Every live call of the tool counts, one that failed too: the agent made the call with those arguments.
    """
    calls = _live_calls(record)
    names = sorted({c.tool_name for _, c in calls})
    for i, check in enumerate(checks):
        unit = f"check:toolArguments#{i}"
        label = _argument_label(check)
        pattern = re.compile(check.matches) if check.matches is not None else None
        of_tool = [(idx, call) for idx, call in calls if call.tool_name == check.tool]
        if not of_tool:
            why = f"{check.tool} was never called (tools called: {', '.join(names) or 'none'})"
            so = "so it could not have been called with them"
            yield nothing_there(unit, label, why, absent=check.absent, so=so)
            continue
        hits = [(idx, evidence) for idx, call in of_tool if (evidence := _argument_hit(call, check, pattern))]
        count = f"{len(of_tool)} call(s) of {check.tool}"
        if hits:
            idx, evidence = hits[0]
            reason = f"of the {count}, {len(hits)} match; the first, in turn {idx}, has {evidence}"
            yield verdict(unit, label, not check.absent, reason, turn_index=idx if check.absent else None)
        else:
            first = quote(text_of(of_tool[0][1].args), 100)
            yield verdict(unit, label, check.absent, f"none of the {count} matches; the first had args {first}")


def _asked(record: RunRecord) -> list[tuple[int, dict[str, Any]]]:
    return [
        (t.index, q) for t in record.live_turns if t.role == "assistant" for w in t.widgets for q in widget_questions(w)
    ]


def clarifying_questions(record: RunRecord, low: int | None, high: int | None) -> Iterator[UnitVerdict]:
    """``maxClarifyingQuestions`` and ``minClarifyingQuestions`` over the live ``questions`` widgets."""
    asked = _asked(record)
    listed = "; ".join(quote(str(q.get("question")), 60) for _, q in asked) or "none"
    if high is not None:
        label = f"the agent asked at most {high} clarifying questions"
        if len(asked) <= high:
            yield verdict("check:maxClarifyingQuestions", label, True, f"{len(asked)} question(s) asked: {listed}")
        else:
            idx, q = asked[high]
            reason = (
                f"{len(asked)} questions asked; question {high + 1} in turn {idx} was {quote(str(q.get('question')))}"
            )
            yield verdict("check:maxClarifyingQuestions", label, False, reason, turn_index=idx)
    if low is not None:
        label = f"the agent asked at least {low} clarifying question{'s' if low != 1 else ''}"
        yield verdict(
            "check:minClarifyingQuestions", label, len(asked) >= low, f"{len(asked)} question(s) asked: {listed}"
        )


def no_repeated_questions(record: RunRecord) -> UnitVerdict:
    """``noRepeatedQuestions``: no question asked in a second widget (seeded questions count as asked)."""
    label = "the agent never asked the same question twice"
    seen: dict[str, tuple[str, int]] = {}
    total = 0
    for turn in record.turns:
        for widget in turn.widgets:
            for q in widget_questions(widget):
                total += 1
                key = normalise_question(str(q.get("question")))
                first = seen.get(key)
                if first is not None and first[0] != widget.request_id and not turn.seeded:
                    reason = (
                        f"turn {turn.index} asks {quote(str(q.get('question')))} again, first asked in turn {first[1]}"
                    )
                    return verdict("check:noRepeatedQuestions", label, False, reason, turn_index=turn.index)
                seen.setdefault(key, (widget.request_id, turn.index))
    if not total:
        # A run with no question at all never gave the agent a question to repeat: no evidence either way.
        return not_judged("check:noRepeatedQuestions", label, "no question was asked, so none could be repeated")
    return verdict("check:noRepeatedQuestions", label, True, f"{total} question(s) asked, {len(seen)} distinct")


def credential_tests_bypassed(case: schema.Case, record: RunRecord, expected: int) -> UnitVerdict:
    """``credentialTestsBypassed``: the thread's bypass list held exactly ``expected`` credentials.

    The count is the harness's own (declared working credentials plus those the simulated user created
    as working), so a wrong count is the simulated user's doing, unless the agent never showed the card
    through which the user would have created one.
    """
    unit = "check:credentialTestsBypassed"
    label = f"exactly {expected} credential test(s) were bypassed"
    count = record.proxy_stats.get("credential-test-bypassed", 0)
    cards = [
        (t.index, w)
        for t in record.live_turns
        if t.role == "assistant"
        for w in t.widgets
        if w.input_type in CREDENTIAL_WIDGETS
    ]
    if not case.credentials and not cards:
        why = "no credential was declared and the agent showed no credential card, so none could have been bypassed"
        return not_judged(unit, label, why)
    created = record.proxy_stats.get("credential-created", 0)
    reason = (
        f"{count} credential(s) on the bypass list ({len(case.credentials)} declared, {created} created by the "
        f"simulated user on {len(cards)} credential card(s))"
    )
    if count == expected:
        return verdict(unit, label, True, reason)
    if count < expected and not cards:
        return verdict(unit, label, False, reason + "; the agent never showed a credential card to set one up")
    return UnitVerdict(unit=unit, kind="check", label=label, status="fail", reason=reason, attribution="proxy_issue")
