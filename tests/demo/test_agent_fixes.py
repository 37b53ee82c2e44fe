"""Regression tests for the builder agent's audit findings (issue 3 review)."""

from __future__ import annotations

import pytest

from tests.demo._agent_fake import FakeContext, Thread, node

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
SCHEDULE = "n8n-nodes-base.scheduleTrigger"


async def _built_thread() -> Thread:
    ctx = FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}])
    thread = Thread(ctx, mode="default")
    await thread.send("Every weekday at 8:30 post to #sales")
    return thread


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("Change the channel to #ops and run it every hour", {"field": "hours", "hoursInterval": 1}),
        ("Run it every hour and change the channel to #ops", {"field": "hours", "hoursInterval": 1}),
        ("Switch to #ops and make it run at 7am", {"triggerAtDay": [1, 2, 3, 4, 5], "triggerAtHour": 7}),
    ],
)
async def test_two_changes_in_one_sentence_are_both_applied(message: str, rule: dict[str, object]) -> None:
    """The clean agent used to apply only the schedule and silently drop the bare channel."""
    thread = await _built_thread()
    reply = await thread.send(message)
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channel"] == "#ops"
    interval = node(workflow, SCHEDULE)["parameters"]["rule"]["interval"][0]
    assert {k: interval.get(k) for k in rule} == rule
    assert "Changed the Slack channel to #ops" in reply
    assert "Changed the trigger" in reply


async def test_a_part_of_the_sentence_naming_no_change_is_said_back() -> None:
    """A clause left over after parsing was silently skipped; now the reply names it."""
    thread = await _built_thread()
    reply = await thread.send("Change the channel to #ops and make it much faster, thanks")
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channel"] == "#ops"
    assert "I didn't understand “make it much faster”" in reply
    assert "thanks" not in reply


async def test_a_value_an_added_step_uses_is_not_also_a_bare_change() -> None:
    """The channel of an added Slack step must not also overwrite the existing Slack node."""
    thread = await _built_thread()
    await thread.send("Also post to #alerts")
    (workflow,) = thread.ctx.workflows.values()
    channels = sorted(x["parameters"]["channel"] for x in workflow["nodes"] if x["type"] == SLACK)
    assert channels == ["#alerts", "#sales"]


async def test_a_silently_attached_credential_is_tested_and_a_failure_said() -> None:
    """Exactly one pinned credential was attached without a connection test; the reply claimed ready."""
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}], working=set()))
    reply = await thread.send("Every morning post the report to #sales")
    assert ("test-credential", {"credentialId": "c1"}) in thread.ctx.calls
    assert "The Slack credential “Team Slack” failed its connection test (Invalid access token)" in reply
    assert "ready to run" not in reply


async def test_a_credential_picked_from_the_which_question_is_tested() -> None:
    """A credential chosen in the "which credential" question was never tested."""
    creds = [{"id": f"c{i}", "name": f"Slack {i}", "type": "slackApi"} for i in (1, 2)]
    thread = Thread(FakeContext(credentials=creds, working={"c1"}))
    thread.answer(
        {"kind": "questions", "answers": [{"questionId": "credential:slackApi", "selectedOptions": ["Slack 2"]}]}
    )
    reply = await thread.send("Every morning post the report to #sales")
    assert ("test-credential", {"credentialId": "c2"}) in thread.ctx.calls
    assert "The Slack credential “Slack 2” failed its connection test" in reply
    assert "ready to run" not in reply


async def test_a_working_attached_credential_still_ends_ready_to_run() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}], working={"c1"}))
    reply = await thread.send("Every morning post the report to #sales")
    assert reply.endswith("It's ready to run.")
