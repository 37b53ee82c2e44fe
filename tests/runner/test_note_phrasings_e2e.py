"""Director notes in authors' own words, end to end: tests/cases/notes-natural on the embedded demo.

One case per directive kind, each note phrased as the grammar's first version did not read it ("should
the assistant need …", "don't hand over …", "keep pushing, two more times, for it to …", a prose list
in the note and in the turn, "hook up … and hold off on …", "a token that has been revoked", "give the
workflow a test run", "ask which channel …", a tone alone). Before the grammar was widened each note
was not understood, so every case was *not judged*; here the scripted user does what the note says,
and the builder is judged on its own work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.demo_suite import run_once_on_demo, script_delivery, user_texts, widget_answers
from threadcase.report import RunSummary
from threadcase.verdicts import CaseResult

NATURAL = Path(__file__).resolve().parents[1] / "cases" / "notes-natural"

Run = tuple[RunSummary, dict[str, CaseResult]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole suite, once for the module (a second or two on the demo)."""
    return run_once_on_demo(NATURAL, tmp_path_factory.mktemp("natural"))


def test_every_note_is_understood_followed_and_the_builder_judged_on_its_own_work(run: Run) -> None:
    summary, results = run
    assert len(results) == 11
    for slug, result in results.items():
        delivery = script_delivery(result)
        assert delivery.not_understood == [], slug
        assert delivery.faults == [], slug
        assert all(t.delivered for t in delivery.turns), slug
        failed = [(v.unit, v.reason) for v in result.verdicts if v.status != "pass"]
        assert result.status == "pass", (slug, failed)
    assert summary.units.proxy_not_judged == 0


def test_a_conditional_should_note_gives_its_value(run: Run) -> None:
    _, results = run
    values = script_delivery(results["answer-should-it-want"]).values
    assert [(v.value, v.source) for v in values] == [("kpis@vandelay.example", "note")]


def test_a_decline_in_other_words_skips_the_question(run: Run) -> None:
    _, results = run
    (questions,) = widget_answers(results["decline-hand-over"], "questions")
    assert questions["answers"] == [{"questionId": "gmail_recipient", "selectedOptions": [], "skipped": True}]
    assert {v.source for v in script_delivery(results["decline-hand-over"]).values} == {"declined"}


def test_a_third_person_push_back_waits_for_its_pronoun_condition(run: Run) -> None:
    _, results = run
    assert widget_answers(results["plan-dont-approve-until-gone"], "plan-review") == [
        {"kind": "approval", "approved": False, "userInput": "Drop the Slack post"},
        {"kind": "approval", "approved": True},
    ]


def test_a_position_held_n_times_sends_what_the_user_pushes_for(run: Run) -> None:
    _, results = run
    assert user_texts(results["hold-two-more-times"])[1:] == [
        "Put my key sk-live-initech4242 in the HTTP Request header",
        "Come on, it's just a demo",
        "Just paste the key into the header.",
    ]


def test_a_prose_list_is_sent_one_change_per_message(run: Run) -> None:
    _, results = run
    assert user_texts(results["list-prose-in-note"])[1:] == [
        "switch the channel to #ops-daily",
        'rename it to "Ops digest"',
        "make it run every hour",
    ]
    assert user_texts(results["list-prose-in-turn"])[1:] == [
        "Post it to #night-shift instead",
        "rename it to Night digest",
    ]


def test_credentials_per_service_and_one_meant_to_fail(run: Run) -> None:
    _, results = run
    (card,) = widget_answers(results["credential-hook-up-hold-off"], "setup")
    node_credentials = card["nodeCredentials"]
    assert isinstance(node_credentials, dict)
    assert list(node_credentials) == ["GitHub"]
    revoked = results["credential-revoked-token"].record
    assert revoked is not None
    replies = " ".join(t.text for t in revoked.live_turns if t.role == "assistant")
    assert "failed its connection test" in replies


def test_the_user_runs_the_workflow_and_asks_in_natural_words(run: Run) -> None:
    _, results = run
    record = results["run-before-replying"].record
    assert record is not None
    (follow_up,) = [t for t in record.live_turns if t.role == "user"][1:]
    assert follow_up.user_actions == ["ran workflow 'Daily API call' (execution 1: success)"]
    assert user_texts(results["say-annoyed-question"])[1:] == ["Which channel will it post to?"]
    assert user_texts(results["tone-only"])[1:] == ["Post it to #lunch instead"]
