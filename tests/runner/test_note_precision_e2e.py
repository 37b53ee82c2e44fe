"""A note's topic and action are kept, end to end: tests/cases/notes-precision on the embedded demo.

Before the precision round, a note's topic could be replaced by a kind guessed from its value's shape
(a note about the failure alerts answered — or declined — every channel question of the widget; a
value shaped like ``owner/repo`` answered the repository question), and a plan rejection with its
reason was read as "push back, then approve" (the revised plan was approved and built). Here the
scripted user does what each note says, and the builder is judged on its own work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.demo_suite import run_once_on_demo, script_delivery, widget_answers
from threadcase.report import RunSummary
from threadcase.verdicts import CaseResult

PRECISION = Path(__file__).resolve().parents[1] / "cases" / "notes-precision"

Run = tuple[RunSummary, dict[str, CaseResult]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole suite, once for the module (a second or two on the demo)."""
    return run_once_on_demo(PRECISION, tmp_path_factory.mktemp("precision"))


def test_every_note_is_followed_and_the_builder_judged_on_its_own_work(run: Run) -> None:
    summary, results = run
    assert len(results) == 6
    for slug, result in results.items():
        delivery = script_delivery(result)
        assert delivery.not_understood == [], slug
        assert delivery.faults == [], slug
        failed = [(v.unit, v.reason) for v in result.verdicts if v.status != "pass"]
        assert result.status == "pass", (slug, failed)
    assert summary.units.proxy_not_judged == 0


def test_each_channel_question_gets_the_note_that_names_it(run: Run) -> None:
    _, results = run
    (questions,) = widget_answers(results["topic-two-channels-two-notes"], "questions")
    assert questions["answers"] == [
        {"questionId": "slack_channel", "selectedOptions": [], "customText": "#queue-digest", "skipped": False},
        {"questionId": "alert_channel", "selectedOptions": [], "customText": "#ops-pager", "skipped": False},
    ]


def test_a_decline_skips_only_the_question_it_names(run: Run) -> None:
    _, results = run
    (questions,) = widget_answers(results["topic-decline-names-its-channel"], "questions")
    assert questions["answers"] == [
        {"questionId": "slack_channel", "selectedOptions": [], "customText": "#queue-digest", "skipped": False},
        {"questionId": "alert_channel", "selectedOptions": [], "skipped": True},
    ]


def test_a_value_shaped_like_a_repository_answers_only_its_own_topic(run: Run) -> None:
    _, results = run
    values = script_delivery(results["topic-named-outside-vocabulary"]).values
    assert [(v.value, v.source) for v in values] == [("initech/triage-board", "note")]


@pytest.mark.parametrize(
    ("slug", "reason"),
    [
        ("plan-reject-outright-with-reason", "They wanted the stock report in Airtable, not Slack"),
        ("plan-say-no-reason-next-sentence", "The team wants one weekly summary, not a daily post"),
    ],
)
def test_a_rejected_plan_is_never_approved(run: Run, slug: str, reason: str) -> None:
    _, results = run
    reviews = widget_answers(results[slug], "plan-review")
    assert reviews[0] == {"kind": "approval", "approved": False, "userInput": reason}
    assert len(reviews) >= 2, "the revised plan was shown again"
    assert all(r.get("approved") is False for r in reviews[1:])
    record = results[slug].record
    assert record is not None
    assert record.artifacts.workflows == []


def test_a_push_back_is_followed_by_approval_of_the_revised_plan(run: Run) -> None:
    _, results = run
    assert widget_answers(results["plan-push-back-then-approve"], "plan-review") == [
        {"kind": "approval", "approved": False, "userInput": "Drop the Slack post"},
        {"kind": "approval", "approved": True},
    ]
