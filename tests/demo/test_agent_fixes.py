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
