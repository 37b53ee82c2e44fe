"""The builder writes n8n 2.41's Slack v2.2 shape: its build tool refuses a flat ``channel``
("``parameters.select`` must be ``channel``", ``docs/n8n-local.md`` item 22), so a demo that wrote one
let cases pass here that the real n8n would fail."""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import FakeContext, Thread, node, questions
from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent.answers import blocking_problems
from threadcase.demo_instance.slack import slack_channel

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
ONE_SLACK = [{"id": "c1", "name": "Team Slack", "type": "slackApi"}]


def _n8n_shape(channel: str, text: str) -> dict[str, Any]:
    # As the n8n suite's scripted builds send it (cases/n8n/model/script.json), which n8n accepted.
    return {
        "select": "channel",
        "channelId": {"__rl": True, "value": channel, "mode": "name"},
        "text": text,
        "otherOptions": {},
    }


def _only(thread: Thread) -> dict[str, Any]:
    (workflow,) = thread.ctx.workflows.values()
    return workflow


async def test_a_built_slack_node_has_exactly_n8ns_shape() -> None:
    thread = Thread(FakeContext(credentials=ONE_SLACK))
    await thread.send('Every weekday at 9am post to #sales on Slack saying "Standup in 5"')
    slack = node(_only(thread), SLACK)
    assert slack["typeVersion"] == 2.2
    assert slack["parameters"] == _n8n_shape("#sales", "Standup in 5")


async def test_the_failure_alert_is_a_slack_node_of_the_same_shape() -> None:
    thread = Thread(FakeContext(credentials=ONE_SLACK), mode="default")
    await thread.send("When a webhook is called, post it to #orders on Slack. Continue on fail and alert #ops.")
    alert = next(x for x in _only(thread)["nodes"] if x["name"] == "Alert on failure")
    assert alert["type"] == SLACK
    assert alert["parameters"] == _n8n_shape(
        "#ops", "=Workflow step failed: {{ $json.error.message ?? 'unknown error' }}"
    )


async def test_a_skipped_channel_is_a_placeholder_in_the_locator() -> None:
    thread = Thread(FakeContext(credentials=ONE_SLACK)).answer(
        {"kind": "questions", "answers": [{"questionId": "slack_channel", "skipped": True}]}
    )
    await thread.send("Every morning post the report to Slack")
    workflow = _only(thread)
    params = node(workflow, SLACK)["parameters"]
    assert "channel" not in params
    assert params["channelId"]["value"] == "<<SET ME: Slack channel>>"
    assert "the Slack node still has placeholders (channel)" in blocking_problems(workflow)


async def test_an_edit_of_a_flat_seed_writes_n8ns_shape() -> None:
    thread = Thread(FakeContext(credentials=ONE_SLACK))
    seeded = thread.ctx.add_workflow(
        {
            "name": "Old digest",
            "nodes": [
                {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
                {"name": "Slack", "type": SLACK, "parameters": {"channel": "#old", "text": "hi"}},
            ],
            "connections": {"Manual Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
        }
    )
    reply = await thread.send("Which channel does it post to?", attachments=[{"type": "workflow", "id": seeded}])
    assert "#old" in reply, "the flat shape is still read"
    await thread.send("Change the channel to #new", attachments=[{"type": "workflow", "id": seeded}])
    params = node(thread.ctx.workflows[seeded], SLACK)["parameters"]
    assert params == {"text": "hi", "select": "channel", "channelId": {"__rl": True, "value": "#new", "mode": "name"}}


async def test_invented_and_answered_channels_land_in_the_locator() -> None:
    thread = Thread(FakeContext(credentials=ONE_SLACK), misbehaviours=frozenset({mb.IGNORES_DECLINED})).answer(
        {"kind": "questions", "answers": [{"questionId": "slack_channel", "skipped": True}]}
    )
    await thread.send("Every morning post the report to Slack")
    assert slack_channel(node(_only(thread), SLACK)["parameters"]) == "#general"
    assert "channel" not in node(_only(thread), SLACK)["parameters"]
    answered = Thread(FakeContext(credentials=ONE_SLACK), mode="default").answer(questions(slack_channel="#kpis"))
    await answered.send("Every morning post the report to Slack")
    assert node(_only(answered), SLACK)["parameters"]["channelId"]["value"] == "#kpis"
