"""The simulated user's premises: its mistakes are its own, never the builder's.

A scripted user that gives a declined value, answers other than its note, invents a value the script
states, or approves a plan its note pushes back on is played here by a deliberately faulty subclass
driving the real demo agent: the audit of what it answered finds the mistake, and every unit of the
case is *not judged* with attribution ``proxy_issue`` — the check that "failed" is not counted
against the builder.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conversation.helpers import drive, make_case
from threadcase import wire
from threadcase.case.notes import Script
from threadcase.grading import grade_case
from threadcase.grading.premises import check_premises
from threadcase.harness import conversation
from threadcase.models import ModelSettings
from threadcase.records import RunRecord
from threadcase.user_proxy import ProxyStats, ScriptedProxy
from threadcase.user_proxy.actions import AnswerQuestions, ApproveOrReject, QuestionAnswerItem
from threadcase.user_proxy.scripted import ConfirmationChoice
from threadcase.verdicts import Attribution

pytestmark = pytest.mark.anyio


class _FaultyUser(ScriptedProxy):
    """Answers every question with ``value`` and approves every plan, whatever its notes say."""

    value = "invented@example.com"

    def scripted_confirmation(self, request: wire.ConfirmationRequest) -> ConfirmationChoice:
        if request.questions:
            answers = [
                QuestionAnswerItem(question_id=q.id, selected_options=[], custom_text=self.value, skipped=False)
                for q in request.questions
            ]
            return AnswerQuestions(action="answer_questions", answers=answers)
        if request.plan:
            return ApproveOrReject(action="approve_or_reject", approved=True, user_input=None)
        return super().scripted_confirmation(request)


@pytest.fixture
def faulty_user(monkeypatch: pytest.MonkeyPatch) -> type[_FaultyUser]:
    def make(
        script: Script, models: ModelSettings, *, stats: ProxyStats | None = None, case: str = ""
    ) -> ScriptedProxy:
        return _FaultyUser(script, stats)

    monkeypatch.setattr(conversation, "make_proxy", make)
    return _FaultyUser


async def _graded(turns: list[str], checks: dict[str, Any]) -> tuple[RunRecord, list[tuple[str, Attribution | None]]]:
    case = make_case(turns, checks=checks, processExpectations=[])
    record = (await drive(case)).record
    graded = await grade_case(case, record, client=None, models=ModelSettings())
    return record, [(v.status, v.attribution) for v in graded.verdicts]


@pytest.mark.usefixtures("faulty_user")
@pytest.mark.parametrize(
    ("turns", "fault"),
    [
        (
            ["Every morning send an email with the report", "[Decline to give the recipient address.] Thanks."],
            "answered \"Which email address should it send to?\" with 'invented@example.com' although "
            "conversation[1] declines it",
        ),
        (
            ["Every morning send an email with the report", "[When asked for the address, answer boss@initech.dev]"],
            "answered \"Which email address should it send to?\" with 'invented@example.com' where a note says "
            "'boss@initech.dev'",
        ),
        (
            ["Every morning send an email with the report", "The team uses reports@initech.dev. Thanks."],
            "answered \"Which email address should it send to?\" with 'invented@example.com', which the script "
            "does not give (it states 'reports@initech.dev')",
        ),
        (
            [
                "Every hour fetch https://api.initech.dev/status and post it to #status and email it to a@initech.dev",
                "[When the plan is shown, push back: remove the Slack step. Approve once it no longer posts to Slack.]",
            ],
            'approved a plan that still mentions slack, against "push back: remove the Slack step',
        ),
        (
            [
                "Every hour fetch https://api.initech.dev/status and post it to #status and email it to a@initech.dev",
                "[Once a plan appears, turn it down flatly: we wanted a weekly digest instead.]",
            ],
            'approved a plan that "turn it down flatly: we wanted a weekly digest instead" rejects',
        ),
    ],
)
async def test_a_user_that_does_not_follow_its_script_is_blamed_not_the_builder(turns: list[str], fault: str) -> None:
    record, verdicts = await _graded(turns, {"mustContain": ["You skipped the recipient email"]})
    premises = {p.name: p for p in check_premises(make_case(turns, processExpectations=["x"]), record)}
    followed = premises["user-followed-script"]
    assert not followed.held
    assert followed.attribution == "proxy_issue"
    assert fault in followed.reason
    assert verdicts == [("not_judged", "proxy_issue")]


async def test_the_same_cases_with_the_real_scripted_user_are_judged() -> None:
    turns = ["Every morning send an email with the report", "[Decline to give the recipient address.] Thanks."]
    record, verdicts = await _graded(turns, {"mustContain": ["You skipped the recipient email"]})
    assert record.script is not None
    assert record.script.faults == []
    assert verdicts == [("pass", None)]


async def test_a_named_credential_that_is_not_offered_is_the_user_s_fault() -> None:
    case = make_case(["Connect my Slack", '[When the Slack card appears, pick the credential named "Nonexistent".]'])
    record = (
        await drive(case, existing_credentials=(("slackApi", "Team Slack"), ("slackApi", "Marketing Slack")))
    ).record
    assert record.script is not None
    assert record.script.faults == [
        'conversation[1]: note "When the Slack card appears, pick the credential named "Nonexistent".": the note '
        "names 'Nonexistent', which is not among the credentials offered (Team Slack, Marketing Slack)"
    ]
    premise = next(p for p in check_premises(case, record) if p.name == "user-followed-script")
    assert (premise.held, premise.attribution) == (False, "proxy_issue")
