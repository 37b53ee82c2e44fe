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
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#ops"
    interval = node(workflow, SCHEDULE)["parameters"]["rule"]["interval"][0]
    assert {k: interval.get(k) for k in rule} == rule
    assert "Changed the Slack channel to #ops" in reply
    assert "Changed the trigger" in reply


async def test_a_part_of_the_sentence_naming_no_change_is_said_back() -> None:
    """A clause left over after parsing was silently skipped; now the reply names it."""
    thread = await _built_thread()
    reply = await thread.send("Change the channel to #ops and make it much faster, thanks")
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#ops"
    assert "I didn't understand “make it much faster”" in reply
    assert "thanks" not in reply


async def test_a_value_an_added_step_uses_is_not_also_a_bare_change() -> None:
    """The channel of an added Slack step must not also overwrite the existing Slack node."""
    thread = await _built_thread()
    await thread.send("Also post to #alerts")
    (workflow,) = thread.ctx.workflows.values()
    channels = sorted(x["parameters"]["channelId"]["value"] for x in workflow["nodes"] if x["type"] == SLACK)
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


async def test_an_empty_rename_is_refused_not_a_quote_character() -> None:
    """``rename it to ""`` renamed the workflow to a lone quote."""
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    reply = await thread.send('rename it to ""')
    assert thread.ctx.workflows[workflow_id]["name"] == "Weekday Slack post"
    assert "rename-workflow" not in thread.ctx.tool_names()
    assert reply == "I left “Weekday Slack post” as it was.\nA workflow name can't be empty, so I kept the current one."


@pytest.mark.parametrize(
    "message", ["Every day at 25:99 post to #x", "every 0 minutes post to #x", "Run at 13pm, post to #x"]
)
async def test_an_impossible_schedule_builds_nothing_and_says_so(message: str) -> None:
    """25:99 silently became 09:00 and "every 0 minutes" became every minute."""
    thread = Thread(FakeContext(), mode="default")
    reply = await thread.send(message)
    assert thread.ctx.workflows == {}
    assert "is not a schedule I can set" in reply
    assert "haven't built anything" in reply


async def test_an_impossible_time_in_an_edit_leaves_the_trigger() -> None:
    thread = await _built_thread()
    reply = await thread.send("Change the channel to #b and run it every 0 hours")
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#b"
    assert node(workflow, SCHEDULE)["parameters"]["rule"]["interval"][0]["triggerAtHour"] == 8
    assert "“every 0 hours” is not a schedule I can set" in reply


async def test_a_change_list_without_a_workflow_builds_nothing() -> None:
    """A numbered change list on an empty thread built an unrequested workflow from the list."""
    thread = Thread(FakeContext(), mode="default")
    reply = await thread.send("1. change the channel to #a\n2. run it every 2 hours\n3. add error handling")
    assert thread.ctx.workflows == {}
    assert thread.ctx.asks == []
    assert reply == "I don't see a workflow to change yet — tell me what to build first."


async def test_removing_a_step_that_does_not_exist_is_said_once_without_an_update_header() -> None:
    thread = await _built_thread()
    reply = await thread.send("Remove the Gmail step")
    assert reply == "I left “Weekday Slack post” as it was.\nThere is no Gmail step to remove."
    assert reply.count("no Gmail step") == 1


async def test_added_step_summaries_use_the_right_article() -> None:
    thread = await _built_thread()
    assert "added an Edit Fields step" in await thread.send("Set the status field to new")
    assert "added an HTTP Request step" in await thread.send("Also call https://x.io/a")
    thread.answer({"kind": "approval", "approved": False})  # the Gmail setup card: deferred
    assert "added a Gmail step" in await thread.send("Also email boss@acme.com")


@pytest.mark.parametrize("message", ["use Bearer abc", "Put Bearer abc123 in the header"])
async def test_a_short_bearer_value_is_a_secret(message: str) -> None:
    """The README lists ``Bearer …`` as a secret, but values under 8 characters were not caught."""
    thread = await _built_thread()
    reply = await thread.send(message)
    assert "I won't put a secret in plain text in a node parameter" in reply


async def test_a_bearer_token_credential_is_not_a_secret_value() -> None:
    thread = await _built_thread()
    reply = await thread.send("Which channel does it post to? I use a Bearer token credential for it.")
    assert "I won't put a secret" not in reply


async def test_a_removal_next_to_another_change_applies_both() -> None:
    """The removal pattern took the rest of the sentence, so "and run it every hour" was dropped silently."""
    thread = await _built_thread()
    thread.answer({"kind": "approval", "approved": False})  # the Gmail setup card: deferred
    await thread.send("Also email a@b.co")
    reply = await thread.send("Remove the Slack step and run it every hour")
    (workflow,) = thread.ctx.workflows.values()
    assert [x["name"] for x in workflow["nodes"]] == ["Schedule Trigger", "Gmail"]
    assert node(workflow, SCHEDULE)["parameters"]["rule"]["interval"][0] == {"field": "hours", "hoursInterval": 1}
    assert "1. Removed the Slack step." in reply
    assert "2. Changed the trigger to run every hour." in reply


async def test_an_unquoted_name_with_and_is_still_one_rename() -> None:
    thread = await _built_thread()
    reply = await thread.send("rename it to Sales and Marketing")
    assert reply == "Updated “Sales and Marketing”: renamed it to “Sales and Marketing”."
