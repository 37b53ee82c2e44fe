"""The director-note grammar: several natural phrasings per directive, each read to the same meaning.

One row per phrasing documented in docs/director-notes.md, plus notes the scripted user must refuse to
guess at. A row states the meaning compactly (:func:`_meaning`), so a phrasing read differently fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from threadcase.case.directives import (
    Answer,
    Credential,
    Decline,
    Directive,
    Hold,
    OneAtATime,
    PlanReview,
    Say,
    WebAccess,
)
from threadcase.case.note_grammar import read_note
from threadcase.case.notes import split_notes


def _meaning(d: Directive) -> tuple[object, ...]:
    t = d.trigger
    if isinstance(d, Answer):
        return ("answer", t.detail or " ".join(t.topic) or "any", d.value, t.required)
    if isinstance(d, Decline):
        return ("decline", t.detail or " ".join(t.topic) or "any", t.required)
    if isinstance(d, PlanReview):
        return ("plan", d.feedback, d.pushes, d.then, d.until_absent, d.until_present, t.required)
    if isinstance(d, Credential):
        return ("credential", d.services, d.action, d.option, d.names, d.new, d.working, t.required)
    if isinstance(d, Say):
        return ("say", d.text, d.times)
    if isinstance(d, OneAtATime):
        return ("one-at-a-time", len(d.items))
    if isinstance(d, WebAccess):
        return ("web-access", d.allow)
    if isinstance(d, Hold) and (d.times or d.text):
        return ("hold", d.times, d.text)
    return (d.kind,)


def _read(note: str) -> list[tuple[object, ...]]:
    reading = read_note(note)
    assert reading.understood, reading.not_understood
    return [_meaning(d) for d in reading.directives]


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("When asked for the channel, answer #deploys.", [("answer", "channel", "#deploys", True)]),
        ("If it asks which channel, reply #customer-voice.", [("answer", "channel", "#customer-voice", False)]),
        (
            "When asked for the address, answer fulfilment@globex.io …",
            [("answer", "email", "fulfilment@globex.io", True)],
        ),
        (
            # The note names no kind: the question is matched by its words ("send"), never by the value's shape.
            "When it wants to know where to send it, give payroll@hooli.example",
            [("answer", "send", "payroll@hooli.example", True)],
        ),
        ("Should it ask for a time, say 7:30am", [("answer", "schedule", "7:30am", False)]),
        ('If asked about the spreadsheet, it\'s called "Q3 leads"', [("answer", "spreadsheet", "Q3 leads", False)]),
        ("Answer #kpi-daily if asked for the channel.", [("answer", "channel", "#kpi-daily", False)]),
        ("The channel is #deploys.", [("answer", "channel", "#deploys", False)]),
        ("Use ops@initech.example as the recipient address.", [("answer", "email", "ops@initech.example", False)]),
        ("If asked, say the error started yesterday.", [("answer", "any", "the error started yesterday", False)]),
        (
            "When asked for the address, answer fulfilment@globex.io and mention it is the shared inbox.",
            [("answer", "email", "fulfilment@globex.io, it is the shared inbox", True)],
        ),
        ('If it asks for a name, call it "Lead router".', [("answer", "name", "Lead router", False)]),
        ("When asked, the channel is #growth.", [("answer", "channel", "#growth", True)]),
        ("Reply with #ops-alerts when asked for the alert channel.", [("answer", "channel", "#ops-alerts", True)]),
        (
            "When asked for the channel, answer #deploys, the release channel",
            [("answer", "channel", "#deploys, the release channel", True)],
        ),
    ],
)
def test_answer_phrasings(note: str, expected: list[tuple[object, ...]]) -> None:
    assert _read(note) == expected


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("Decline to give the recipient address; do not provide one.", [("decline", "email", False)]),
        ("Refuse to say which channel.", [("decline", "channel", False)]),
        ("If asked for the channel, say you don't know.", [("decline", "channel", False)]),
        ("When asked for the repository, decline.", [("decline", "repo", True)]),
        ("Don't tell it the address.", [("decline", "email", False)]),
        ("Withhold the recipient; you will add it yourself later.", [("decline", "email", False)]),
        ("Keep the address to yourself — there isn't one yet.", [("decline", "email", False)]),
        ("Leave the spreadsheet name blank.", [("decline", "spreadsheet", False)]),
        ("You'd rather not share the webhook URL.", [("decline", "url", False)]),
        ("Refuse to answer any question.", [("decline", "any", False)]),
        ("Don't reveal the recipient address — say nothing about it.", [("decline", "email", False)]),
        ("decline if asked for the channel", [("decline", "channel", False)]),
        ("Do not give the channel; say you'll decide later.", [("decline", "channel", False)]),
        ("If asked for the recipient, say you haven't decided yet.", [("decline", "email", False)]),
    ],
)
def test_decline_phrasings(note: str, expected: list[tuple[object, ...]]) -> None:
    assert _read(note) == expected


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (
            "When the plan is shown, push back: drop the Slack post. Approve once it no longer posts to Slack.",
            [("plan", "Drop the Slack post", 1, "approve", ("slack",), (), True)],
        ),
        (
            "When you see the plan, reject it and ask for email instead of Slack, then approve the revised plan.",
            [("plan", "Email instead of Slack", 1, "approve", (), (), True)],
        ),
        (
            "Object to the first plan: it should not post to Slack. Accept the second one.",
            [("plan", "It should not post to Slack", 1, "approve", (), (), False)],
        ),
        (
            "Push back twice on the plan, asking for retries, then approve.",
            [("plan", "Retries", 2, "approve", (), (), False)],
        ),
        (
            "If it proposes a plan with a Slack step, push back until the Slack step is gone.",
            [("plan", "Please take slack out of the plan.", 1, "approve", ("slack",), (), False)],
        ),
        (
            # The note rejects: the reason goes with the rejection, and the plan is never approved.
            "When the plan appears, say it is missing error handling and reject it.",
            [("plan", "It is missing error handling", 1, "reject", (), (), True)],
        ),
        (
            "When the plan is shown, push back: add error handling. Approve once it mentions error handling.",
            [("plan", "Add error handling", 1, "approve", (), ("error", "handling"), True)],
        ),
        (
            "Approve the plan only if it has no Slack step.",
            [("plan", "Please take slack out of the plan.", 1, "approve", ("slack",), (), False)],
        ),
        (
            "Don't approve the plan until it includes retries.",
            [("plan", "Please add retries to the plan.", 1, "approve", (), ("retries",), False)],
        ),
        ("Approve the plan.", [("plan", None, 1, "approve", (), (), False)]),
        ("Reject the plan outright.", [("plan", None, 1, "reject", (), (), False)]),
        ("Approve the fix.", [("plan", None, 1, "approve", (), (), False)]),
    ],
)
def test_plan_phrasings(note: str, expected: list[tuple[object, ...]]) -> None:
    assert _read(note) == expected


@pytest.mark.parametrize(
    "note",
    [
        "insist",
        "insist, sounding frustrated",
        "push once more, then give up",
        "hold firm",
        "Don't back down.",
        "Repeat the request more firmly.",
        "Keep insisting even if it refuses.",
        "If it refuses, insist once more.",
        "If asked again, decline again.",
        "politely",
        "impatiently",
        "be terse",
        "in a hurry",
        "Repeat the same request twice.",
        "Be polite but firm.",
        "Pretend you are in a rush.",
        "press once more, then stop",
        "Try once more, then let it go.",
        "Ask again, then leave it at that.",
    ],
)
def test_hold_and_tone_phrasings(note: str) -> None:
    assert {m[0] for m in _read(note)} <= {"hold", "tone"}


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (
            "When the Slack connection card appears, set it up manually.",
            [("credential", ("slack",), "engage", "manual", (), False, True, True)],
        ),
        (
            "When the setup card asks for Slack, connect it manually. Leave GitHub for later.",
            [
                ("credential", ("slack",), "engage", "manual", (), False, True, True),
                ("credential", ("github",), "defer", "manual", (), False, True, False),
            ],
        ),
        (
            "connect Slack with a new credential but skip Gmail for now",
            [
                ("credential", ("slack",), "engage", "manual", (), True, True, False),
                ("credential", ("gmail",), "defer", "manual", (), False, True, False),
            ],
        ),
        (
            "Set up Notion with a fresh credential and leave Google Sheets unconnected.",
            [
                ("credential", ("notion",), "engage", "manual", (), True, True, False),
                ("credential", ("googlesheets",), "defer", "manual", (), False, True, False),
            ],
        ),
        (
            'When asked to connect Notion, pick the credential named "Team Notion".',
            [("credential", ("notion",), "engage", "manual", ("Team Notion",), False, True, True)],
        ),
        (
            'If a Slack connection card appears, use the "Ops Slack" credential.',
            [("credential", ("slack",), "engage", "manual", ("Ops Slack",), False, True, False)],
        ),
        (
            "When the Slack credential card appears, set it up manually, but the credential does not authenticate.",
            [("credential", ("slack",), "engage", "manual", (), False, False, True)],
        ),
        (
            "The Gmail credential is meant to fail.",
            [("credential", ("gmail",), "engage", "manual", (), False, False, False)],
        ),
        (
            'Name "Broken Notion" as the credential that should fail.',
            [("credential", ("notion",), "engage", "manual", ("Broken Notion",), False, False, False)],
        ),
        (
            "When the Notion connection card appears, connect it, but it should fail the connection test.",
            [("credential", ("notion",), "engage", "manual", (), False, False, True)],
        ),
        ("Skip the credential setup for now.", [("credential", (), "defer", "manual", (), False, True, False)]),
        ("Defer every credential card.", [("credential", (), "defer", "manual", (), False, True, False)]),
    ],
)
def test_credential_phrasings(note: str, expected: list[tuple[object, ...]]) -> None:
    assert _read(note) == expected


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("Send these changes one at a time, each only after the previous one was applied.", [("one-at-a-time", 0)]),
        ("Send each change in its own message.", [("one-at-a-time", 0)]),
        ("Ask for these one by one: 1. use #ops 2. run hourly", [("one-at-a-time", 2)]),
        (
            "Once it is built, ask for these changes one at a time, waiting for each build:\n1. a\n2. b\n3. c",
            [("one-at-a-time", 3)],
        ),
        ("run the workflow yourself before answering", [("run-workflow",)]),
        ("Before replying, execute it yourself.", [("run-workflow",)]),
        ('Reply "Looks good, ship it".', [("say", "Looks good, ship it", 1)]),
        ("Tell it the numbers look wrong.", [("say", "The numbers look wrong.", 1)]),
        ("Ask it to also add a Gmail step.", [("say", "Also add a Gmail step.", 1)]),
        (
            "Push back twice on adding the tenant filter: say it is blocking the release.",
            [("hold", 2, "It is blocking the release.")],
        ),
        ("Say you're done.", [("say", "I'm done.", 1)]),
        ('Say "thanks, that\'s all" and stop.', [("say", "thanks, that's all", 1)]),
        ("If it asks for anything else, make up a plausible value.", [("as-usual",)]),
        ("Answer every other question as usual.", [("as-usual",)]),
        ("deny web access", [("web-access", False)]),
        ("Block any web search.", [("web-access", False)]),
        ("When it asks for web access, allow it.", [("web-access", True)]),
    ],
)
def test_list_run_say_and_web_phrasings(note: str, expected: list[tuple[object, ...]]) -> None:
    assert _read(note) == expected


@pytest.mark.parametrize(
    "note",
    [
        "Behave like a distracted intern who keeps mixing up the two workflows.",
        "If it mentions pricing, say our budget is 100 dollars",
        "Answer in the voice of a pirate.",
        "Act as a manager who is never satisfied.",
        "Approve the plan once it looks professional enough.",
        "insist, and invent a new requirement about PDFs",
    ],
)
def test_notes_the_scripted_user_cannot_follow_are_reported_not_guessed(note: str) -> None:
    reading = read_note(note)
    assert not reading.understood
    assert all("(" in part for part in reading.not_understood), "each part says why"


def _documented_notes() -> list[str]:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "director-notes.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n(.*?)```", doc, flags=re.DOTALL)
    return [note for block in blocks for note in split_notes(block)[1]]


def test_every_phrasing_the_docs_show_is_understood() -> None:
    notes = _documented_notes()
    assert len(notes) >= 60
    not_understood = {note: read_note(note).not_understood for note in notes if not read_note(note).understood}
    assert not_understood == {}
