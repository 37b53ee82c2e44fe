"""A note's topic is kept as its author names it, and matched against the agent's questions by its words.

The scripted user answers (or declines) the question a note names — by its words, their stems and
plurals, spelling variants and compounds ("time zone" ~ "timezone", "organisation" ~ "organization"),
or by the kind of detail those words name — and never the question a value's shape suggests
("Europe/Lisbon" looks like ``owner/repo``). Of two questions in one widget, a note goes to the one
naming its words; a question close to a note's topic that does not name it is reported, never guessed.
"""

from __future__ import annotations

import pytest

from threadcase.case.notes import Script
from threadcase.user_proxy.follow import Director

_OPENER = "Every Monday at 8 open a GitHub issue and post a summary to Slack"


def _director(note: str) -> Director:
    return Director(Script.from_texts([("user", _OPENER), ("user", f"[{note}]")]))


def _answers(note: str, questions: list[str]) -> list[str | None]:
    director = _director(note)
    return [director.value_for("r1", q, [], questions).value for q in questions]


@pytest.mark.parametrize(
    ("note", "question", "value"),
    [
        # a topic outside any vocabulary, with its value's shape pointing elsewhere
        (
            "When it asks which time zone to use, say America/Denver",
            "Which timezone should the schedule use?",
            "America/Denver",
        ),
        ("If asked about the timezone, reply Asia/Kolkata", "What time zone are you in?", "Asia/Kolkata"),
        ("If it asks about the time-zone, answer UTC", "Which timezone should it run in?", "UTC"),
        ("When asked for the retention periods, say 30 days", "How long is the retention period for logs?", "30 days"),
        ("If it asks about the organisation, say Initech", "Which organization should own the workflow?", "Initech"),
        ("If asked for the Jira project key, say OPS", "Which Jira project key should the ticket use?", "OPS"),
        ("If it wants the locale, go with pt-BR", "Which locales should the digest support?", "pt-BR"),
        # a topic naming a kind of detail: any question of that kind
        (
            "If asked for the finance inbox, give ap@initech.example",
            "Which email address should it send to?",
            "ap@initech.example",
        ),
        ("If it asks for the Slack channel, answer #ship-room", "Which channel should it post to?", "#ship-room"),
        # the head noun names the kind, not a word before it
        (
            "If it asks for the destination spreadsheet, say Leads 2026",
            "Which Google Sheets spreadsheet should it append to?",
            "Leads 2026",
        ),
        (
            "When asked for the sheet name, answer Q2 Board",
            "Which Google Sheets spreadsheet should it append to?",
            "Q2 Board",
        ),
        # no topic: any question
        ("If it asks, say sometime next week", "When do you need this by?", "sometime next week"),
    ],
)
def test_a_question_naming_the_note_s_topic_gets_its_value(note: str, question: str, value: str) -> None:
    assert _answers(note, [question]) == [value]


@pytest.mark.parametrize(
    ("note", "question"),
    [
        # the value's shape never decides: "ops/logs" is no repository, "America/Denver" no schedule
        (
            "If it asks where the logs should go, answer ops/logs",
            "Which GitHub repository (owner/name) should the issue go in?",
        ),
        ("When it asks which time zone to use, say America/Denver", "What should start this workflow?"),
        ("If asked about the timezone, reply Asia/Kolkata", "How often should it run?"),
        # a kind whose word says little: the note's own words decide
        ("If asked for the phone number, say +1 555 0100", "How many issues should it open at most?"),
        ("If it asks for the sender name, say Ops Bot", "What should the workflow be called?"),
        # a word before the head noun is no kind: an e-mail subject is not an e-mail address
        ("If it asks about the email subject, say Weekly numbers", "Which email address should it send to?"),
        ("If it asks for the destination spreadsheet, say Leads 2026", "Which email address should it send to?"),
        # words of the topic missing
        ("If asked for the Jira project key, say OPS", "What is the project key?"),
        ("If it asks about the Slack step, say drop it", "Which Slack channel should it post to?"),
    ],
)
def test_a_question_the_note_does_not_name_never_gets_its_value(note: str, question: str) -> None:
    (value,) = _answers(note, [question])
    assert value is not None
    director = _director(note)
    reading = director.script.user_turns[1].readings[0]
    note_value = reading.directives[0].value  # type: ignore[union-attr]
    assert value != note_value


def test_of_two_questions_of_a_kind_the_note_goes_to_the_one_naming_its_words() -> None:
    post = "Which Slack channel should it post to?"
    alerts = "Which Slack channel should failure alerts go to?"
    assert _answers("When asked for the alert channel, answer #pager", [post, alerts]) == [
        "#placeholder-channel",
        "#pager",
    ]
    assert _answers("When asked for the alert channel, answer #pager", [alerts, post]) == [
        "#pager",
        "#placeholder-channel",
    ]
    # A note that names only the kind answers both, as it says.
    assert _answers("When asked for the channel, answer #ops", [post, alerts]) == ["#ops", "#ops"]


def test_a_decline_keeps_its_topic() -> None:
    note = "Don't share the staging password"
    assert _answers(note, ["What is the password for staging?"]) == [None]
    assert _answers(note, ["What is the production password?"]) != [None]


def test_a_question_close_to_a_note_but_not_naming_it_is_reported_not_guessed() -> None:
    director = _director("If asked for the Jira project key, say OPS")
    choice = director.value_for("r1", "What is the project key?", [])
    assert choice.value != "OPS"
    delivery = director.delivery(ended_by="done", follow_ups=1, budget=None)
    assert any('the agent asked "What is the project key?" instead' in f for f in delivery.faults), delivery.faults


def test_a_note_that_answered_its_question_is_no_near_miss_for_the_sibling() -> None:
    director = _director("When asked for the alert channel, answer #pager")
    questions = ["Which Slack channel should it post to?", "Which Slack channel should failure alerts go to?"]
    for question in questions:
        director.value_for("r1", question, [], questions)
    assert director.delivery(ended_by="done", follow_ups=1, budget=None).faults == []
