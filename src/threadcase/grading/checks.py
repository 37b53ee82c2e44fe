"""Deterministic checks (the case's ``checks`` key): no model, run in every mode.

Each check is one unit with a one-sentence reason that quotes its evidence; a failure is the agent's
(``builder_issue``). ``review`` criteria are printed beside the reply for a person and are
``reviewed``, never passed. A check that could not have failed on this run (a rule whose risk never
arose, a node check with nothing built, a turn that was never sent) is ``not_judged`` rather than a
free pass.

Text checks read the live agent messages only (seeded turns are the case's, not the agent's), or,
scoped to a turn, the agent's answer to that live user message; ``transcriptRules`` walk the whole
transcript, seeded turns included, because the risk may have been raised before the live turn.

This module is the entry point and the text checks; what was built is graded in
:mod:`.check_build`, what was called and asked in :mod:`.check_calls`, agents in :mod:`.check_agents`,
tokens spent per turn in :mod:`.check_tokens`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from threadcase.case import schema
from threadcase.grading.check_agents import agent_checks, declares_agent_checks
from threadcase.grading.check_build import identity_checks, node_credentials, node_parameters, node_types
from threadcase.grading.check_calls import (
    clarifying_questions,
    credential_tests_bypassed,
    no_repeated_questions,
    tool_arguments,
    tools,
)
from threadcase.grading.check_tokens import token_budgets
from threadcase.grading.check_util import QUOTE_LIMIT, around, live_agent_turns, not_judged, quote, verdict
from threadcase.records import RunRecord, Turn
from threadcase.verdicts import UnitVerdict

__all__ = ["EVENT_CHECKS", "evaluate_rule", "event_units", "run_checks"]

EVENT_CHECKS = (
    "check:mustNotContain",
    "check:toolsNotCalled",
    "check:maxLines",
    "check:transcriptRules",
    "check:maxClarifyingQuestions",
    "check:noRepeatedQuestions",
    "check:workflowsUnchanged",
    "check:maxNewWorkflows",
    "check:maxInputTokensPerTurn",
    "check:maxOutputTokensPerTurn",
)
"""Unit-id prefixes of checks that fail on something the agent already did (said, called, asked, changed, spent).

More time cannot undo such a failure, so it stays the builder's when a budget ends the conversation;
every other failing check (something missing or not yet right) could have passed with more time and
is blamed on the clock (``threadcase.grading``). Entries with ``absent: true`` are such checks too
(:func:`event_units`)."""


def event_units(checks: schema.Checks | None) -> frozenset[str]:
    """Unit ids of ``absent: true`` entries (``nodeParameters``, ``toolArguments``): failures by something done."""
    if checks is None:
        return frozenset()
    units = {f"check:nodeParameters#{i}" for i, c in enumerate(checks.node_parameters) if c.absent}
    units |= {f"check:toolArguments#{i}" for i, c in enumerate(checks.tool_arguments) if c.absent}
    return frozenset(units)


# --- text checks ------------------------------------------------------------------------------


def _answer(record: RunRecord, turn: int | str) -> tuple[list[Turn], str] | None:
    """The agent's live turns answering live user turn ``turn`` (1-based or 'last') and their joined text.

    None when that user turn was never sent.
    """
    users = [i for i, t in enumerate(record.turns) if t.role == "user" and not t.seeded]
    if not users:
        return None
    if turn == "last":
        position = len(users) - 1
    else:
        assert isinstance(turn, int)
        position = turn - 1
        if position >= len(users):
            return None
    start = users[position]
    end = users[position + 1] if position + 1 < len(users) else len(record.turns)
    answers = [t for t in record.turns[start + 1 : end] if t.role == "assistant" and not t.seeded and t.text]
    return answers, " ".join(t.text for t in answers)


def _never_sent(record: RunRecord, turn: int | str) -> str:
    sent = sum(1 for t in record.live_turns if t.role == "user")
    return f"live turn {turn} was never sent (the conversation had {sent} live user turn(s))"


def _must_contain(record: RunRecord, entries: list[schema.ScopedText]) -> Iterator[UnitVerdict]:
    joined = " ".join(record.agent_messages)
    for i, entry in enumerate(entries):
        unit = f"check:mustContain#{i}"
        needle = entry.text
        if entry.turn is not None:
            label = f"the agent's answer to live turn {entry.turn} contains {needle!r}"
            answer = _answer(record, entry.turn)
            if answer is None:
                yield not_judged(unit, label, _never_sent(record, entry.turn))
                continue
            turns, text = answer
            at = text.find(needle)
            if at >= 0:
                yield verdict(
                    unit, label, True, f"found {around(text, at, at + len(needle))}", turn_index=turns[0].index
                )
            else:
                said = quote(text) if text else "nothing"
                yield verdict(unit, label, False, f"{needle!r} is not in that answer, which says {said}")
            continue
        label = f"the agent's messages contain {needle!r}"
        at = joined.find(needle)
        if at >= 0:
            yield verdict(unit, label, True, f"found {around(joined, at, at + len(needle))}")
        else:
            where = f"{len(record.agent_messages)} live agent messages" if record.agent_messages else "no agent message"
            yield verdict(unit, label, False, f"{needle!r} appears in none of the {where}")


def _must_not_contain(record: RunRecord, entries: list[schema.ScopedText]) -> Iterator[UnitVerdict]:
    all_turns = live_agent_turns(record)
    for i, entry in enumerate(entries):
        unit = f"check:mustNotContain#{i}"
        needle = entry.text
        turns = all_turns
        label = f"the agent's messages never contain {needle!r}"
        if entry.turn is not None:
            label = f"the agent's answer to live turn {entry.turn} does not contain {needle!r}"
            answer = _answer(record, entry.turn)
            if answer is None:
                yield not_judged(unit, label, _never_sent(record, entry.turn))
                continue
            turns = answer[0]
        if not turns:
            # Silence contains nothing, but it is no evidence the agent would have avoided the text.
            reason = "the agent sent no live message there, so it could not have said it"
            yield not_judged(unit, label, reason)
            continue
        hit = next((t for t in turns if needle in t.text), None)
        if hit is None:
            joined = " ".join(t.text for t in turns)
            # A needle spanning two messages still counts: the check is over the messages joined with a space.
            at = joined.find(needle)
            if at < 0:
                reason = f"{needle!r} appears in none of the {len(turns)} live agent messages"
                yield verdict(unit, label, True, reason)
                continue
            reason = f"found {around(joined, at, at + len(needle))} across two agent messages"
            yield verdict(unit, label, False, reason)
            continue
        at = hit.text.find(needle)
        reason = f"turn {hit.index} says {around(hit.text, at, at + len(needle))}"
        yield verdict(unit, label, False, reason, turn_index=hit.index)


def _strip_trailing(text: str) -> str:
    """Trailing whitespace, emoji and their joiners/variation selectors removed."""
    chars = list(text.rstrip())
    while chars:
        ch = chars[-1]
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("So", "Sk", "Mn", "Cf") or ch in ("\u200d", "\ufe0f"):
            chars.pop()
            continue
        break
    return "".join(chars)


def _must_end_with_question(record: RunRecord, expected: bool) -> UnitVerdict:
    label = "the agent's last message ends with a question" + ("" if expected else " (must not)")
    turns = live_agent_turns(record)
    if not turns:
        return verdict("check:mustEndWithQuestion", label, False, "the agent sent no live message at all")
    last = turns[-1]
    stripped = _strip_trailing(last.text)
    is_question = stripped.endswith(("?", "？"))
    tail = quote(stripped[-QUOTE_LIMIT:])
    if is_question == expected:
        reason = f"turn {last.index} ends {'with' if is_question else 'without'} a question: {tail}"
    else:
        reason = (
            f"turn {last.index} ends {'with' if is_question else 'without'} a question, expected the opposite: {tail}"
        )
    return verdict("check:mustEndWithQuestion", label, is_question == expected, reason, turn_index=last.index)


def _max_lines(record: RunRecord, limit: int) -> UnitVerdict:
    label = f"no agent message is longer than {limit} lines"
    turns = live_agent_turns(record)
    if not turns:
        return not_judged("check:maxLines", label, "the agent sent no live message to measure")
    counts = [(len(t.text.strip("\n").splitlines()), t) for t in turns]
    worst, turn = max(counts, key=lambda pair: pair[0])
    over = next(((n, t) for n, t in counts if n > limit), None)
    if over is None:
        return verdict(
            "check:maxLines", label, True, f"the longest agent message (turn {turn.index}) has {worst} lines"
        )
    n, t = over
    reason = f"turn {t.index} has {n} lines: {quote(t.text)}"
    return verdict("check:maxLines", label, False, reason, turn_index=t.index)


def _review(record: RunRecord, criteria: list[str]) -> Iterator[UnitVerdict]:
    turns = live_agent_turns(record)
    reply = f"the reply to review is turn {turns[-1].index}: {quote(turns[-1].text)}" if turns else "no agent reply"
    for i, criterion in enumerate(criteria):
        yield UnitVerdict(unit=f"review#{i}", kind="review", label=criterion, status="reviewed", reason=reply)


# --- transcript rules -------------------------------------------------------------------------


def _walk_rule(rule: schema.TranscriptRule, turns: list[Turn]) -> tuple[int | None, list[int], bool]:
    """The state machine: (violating turn index or None, risk turns, whether a live agent turn was at risk)."""
    risk, clear, violation = rule.risk_pattern, rule.clear_pattern, rule.violation_pattern  # compiled at load
    at_risk = False
    exercised = False
    risk_turns: list[int] = []
    for turn in turns:
        if turn.role == "user":
            if risk.search(turn.text):
                at_risk = True
                risk_turns.append(turn.index)
            continue
        if at_risk and not turn.seeded:
            exercised = True
        if clear.search(turn.text):
            at_risk = False
            continue
        # A seeded agent turn was written by the case author: it may carry the risk forward, never violate.
        if at_risk and not turn.seeded and violation.search(turn.text):
            return turn.index, risk_turns, True
    return None, risk_turns, exercised


def evaluate_rule(rule: schema.TranscriptRule, turns: list[Turn]) -> tuple[int | None, list[int]]:
    """Walk ``turns`` with the rule's one bit of state; returns (violating turn index or None, risk turns).

    A user turn matching ``risk`` sets the bit; an agent turn matching ``clear`` resets it; an agent
    turn matching ``violation`` while the bit is set is the violation. Graded on the sequence: the same
    agent sentence with no unresolved risk before it is nothing at all. Seeded turns set and clear the
    bit like any other, but a seeded agent turn is authored by the case, so only a live one can violate.
    """
    violated, risk_turns, _ = _walk_rule(rule, turns)
    return violated, risk_turns


def _transcript_rule(record: RunRecord, rule: schema.TranscriptRule) -> UnitVerdict:
    unit = f"check:transcriptRules:{rule.name}"
    label = (
        f"transcript rule {rule.name!r}: after a user turn matching /{rule.risk}/, "
        f"no agent turn matches /{rule.violation}/ before one matches /{rule.clear}/"
    )
    violated, risks, exercised = _walk_rule(rule, record.turns)
    if violated is not None:
        turn = next(t for t in record.turns if t.index == violated)
        reason = f"turn {violated} says {quote(turn.text)} while the risk raised at turn {risks[-1]} was never cleared"
        return verdict(unit, label, False, reason, turn_index=violated)
    if not risks:
        return not_judged(unit, label, f"no user turn matched the risk /{rule.risk}/, so the rule was never exercised")
    if not exercised:
        reason = (
            f"the risk raised at turn(s) {risks} was never open on a live agent turn, so the rule was never exercised"
        )
        return not_judged(unit, label, reason)
    return verdict(unit, label, True, f"the risk raised at turn(s) {risks} never led to a violating agent turn")


# --- entry point ------------------------------------------------------------------------------


def run_checks(case: schema.Case, record: RunRecord) -> list[UnitVerdict]:
    """Every deterministic check the case declares, graded against the run; [] when it declares none."""
    checks = case.checks
    if checks is None:
        return []
    out: list[UnitVerdict] = []
    # Each family runs only when declared: an undeclared one yields nothing, but its set-up (the live
    # turns, the nodes, the tool calls, the final agent) was most of the grading of a typical case.
    if checks.must_contain:
        out.extend(_must_contain(record, checks.must_contain))
    if checks.must_not_contain:
        out.extend(_must_not_contain(record, checks.must_not_contain))
    if checks.must_end_with_question is not None:
        out.append(_must_end_with_question(record, checks.must_end_with_question))
    if checks.max_lines is not None:
        out.append(_max_lines(record, checks.max_lines))
    out.extend(_transcript_rule(record, rule) for rule in checks.transcript_rules)
    if checks.node_types_present or checks.node_types_absent:
        out.extend(node_types(record, checks.node_types_present, checks.node_types_absent))
    if checks.node_parameters:
        out.extend(node_parameters(record, checks.node_parameters))
    if checks.node_credentials:
        out.extend(node_credentials(record, checks.node_credentials))
    if checks.workflows_edited_in_place or checks.workflows_unchanged or checks.max_new_workflows is not None:
        out.extend(identity_checks(record, checks))
    if checks.tools_called or checks.tools_not_called:
        out.extend(tools(record, checks.tools_called, checks.tools_not_called))
    if checks.tool_arguments:
        out.extend(tool_arguments(record, checks.tool_arguments))
    if declares_agent_checks(checks):
        out.extend(agent_checks(case, record, checks))
    if checks.max_clarifying_questions is not None or checks.min_clarifying_questions is not None:
        out.extend(clarifying_questions(record, checks.min_clarifying_questions, checks.max_clarifying_questions))
    if checks.no_repeated_questions:
        out.append(no_repeated_questions(record))
    if checks.max_input_tokens_per_turn is not None or checks.max_output_tokens_per_turn is not None:
        out.extend(token_budgets(record, checks.max_input_tokens_per_turn, checks.max_output_tokens_per_turn))
    if checks.credential_tests_bypassed is not None:
        out.append(credential_tests_bypassed(case, record, checks.credential_tests_bypassed))
    if checks.review:
        out.extend(_review(record, checks.review))
    return out
