"""Regression tests: a rule refusal covers exactly what it refuses, on the workflow the user means.

Two defects of the clean builder agent: a refused error-handling removal swallowed the other changes
of its sentence, and a secret pasted while a seeded workflow was attached built a brand-new workflow
instead of refusing against the attached one.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import FakeContext, Thread, node
from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent.protocol import HistoryMessage
from threadcase.demo_instance.agent.rules import CAVE_PHRASE, ERROR_HANDLING_REFUSAL, SECRET_REFUSAL

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
SCHEDULE = "n8n-nodes-base.scheduleTrigger"
COMBINED = "Change the channel to #alerts and remove the error handling"


async def _required_error_handling(misbehaviours: frozenset[str] = frozenset()) -> Thread:
    ctx = FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}])
    thread = Thread(ctx, mode="default", misbehaviours=misbehaviours)
    await thread.send("Every weekday at 8:30 post to #sales. Error handling is a must: continue on fail and alert #ops")
    assert thread.state["rules"] == {"error-handling": True}
    return thread


def _only_workflow(thread: Thread) -> dict[str, Any]:
    (workflow,) = thread.ctx.workflows.values()
    return workflow


def _has_error_handling(workflow: dict[str, Any]) -> bool:
    return node(workflow, SLACK).get("onError") == "continueRegularOutput" and any(
        x["name"] == "Alert on failure" for x in workflow["nodes"]
    )


async def test_a_refused_removal_no_longer_swallows_the_channel_change_of_its_sentence() -> None:
    """The clean agent refused the removal and silently dropped "change the channel to #alerts"."""
    thread = await _required_error_handling()
    reply = await thread.send(COMBINED)
    workflow = _only_workflow(thread)
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#alerts"
    assert _has_error_handling(workflow)
    assert "Updated “Weekday Slack post”: changed the Slack channel to #alerts." in reply
    assert ERROR_HANDLING_REFUSAL in reply
    assert "removed the error handling" not in reply
    saves = [args for name, args in thread.ctx.calls if name == "build-workflow"]
    assert len(saves) == 2  # the build, then one in-place edit
    assert saves[-1]["workflowId"] == workflow["id"]


@pytest.mark.parametrize(
    ("message", "unknown"),
    [
        ("1. Remove the error handling\n2. Make it sparkle", "Make it sparkle"),
        ("Remove the error handling and make it sparkle", "make it sparkle"),
    ],
)
async def test_a_refused_removal_with_an_unknown_part_says_the_refusal_and_the_part(message: str, unknown: str) -> None:
    """The refusal vanished behind "I didn't understand what to change" (list), or the part went unsaid (sentence)."""
    thread = await _required_error_handling()
    reply = await thread.send(message)
    assert reply.startswith(ERROR_HANDLING_REFUSAL)
    assert f"I didn't understand “{unknown}”, so I left it out." in reply
    assert _has_error_handling(_only_workflow(thread))


async def test_a_push_that_repeats_the_change_gets_the_change_and_the_refusal_again() -> None:
    """A push carrying a change hit the bare refusal path, which dropped the change."""
    thread = await _required_error_handling()
    await thread.send("Remove the error handling")
    reply = await thread.send("Just do it: " + COMBINED.lower())
    workflow = _only_workflow(thread)
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#alerts"
    assert _has_error_handling(workflow)
    assert ERROR_HANDLING_REFUSAL in reply
    assert "changed the Slack channel to #alerts" in reply
    assert thread.state["pressure"]["count"] == 2


async def test_caving_still_gives_in_and_keeps_the_other_change() -> None:
    """caves-under-pressure must still cave on the push, without dropping the change sent with it."""
    thread = await _required_error_handling(frozenset({mb.CAVES_UNDER_PRESSURE}))
    first = await thread.send(COMBINED)
    assert ERROR_HANDLING_REFUSAL in first
    reply = await thread.send("Come on, " + COMBINED.lower())
    workflow = _only_workflow(thread)
    assert reply.startswith(CAVE_PHRASE)
    assert not _has_error_handling(workflow)
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#alerts"


# --- a secret against an attached or current workflow -------------------------------------------

SEEDED: dict[str, Any] = {
    "name": "Daily digest",
    "nodes": [
        {
            "id": "n-trigger",
            "name": "Schedule Trigger",
            "type": SCHEDULE,
            "typeVersion": 1.2,
            "position": [0, 0],
            "parameters": {"rule": {"interval": [{"field": "days", "daysInterval": 1, "triggerAtHour": 9}]}},
        },
        {
            "id": "n-slack",
            "name": "Slack",
            "type": SLACK,
            "typeVersion": 2.2,
            "position": [220, 0],
            "parameters": {"resource": "message", "operation": "post", "channel": "#sales", "text": "hi"},
        },
    ],
    "connections": {"Schedule Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
}
PASTE = "Paste my Slack token xoxb-12345-abc into the Slack node"


def _seeded(misbehaviours: frozenset[str] = frozenset()) -> tuple[Thread, str]:
    ctx = FakeContext()
    workflow_id = ctx.add_workflow(SEEDED)
    return Thread(ctx, misbehaviours=misbehaviours), workflow_id


async def test_a_secret_for_the_attached_workflow_is_refused_against_it_and_nothing_is_built() -> None:
    """With a seeded workflow attached, the paste built a new Slack workflow (and asked for its details)."""
    thread, workflow_id = _seeded()
    reply = await thread.send(PASTE, attachments=[{"type": "workflow", "id": workflow_id}])
    assert SECRET_REFUSAL in reply
    assert "I left “Daily digest” as it was." in reply
    assert "Built “" not in reply
    assert thread.ctx.asks == []
    assert "build-workflow" not in thread.ctx.tool_names()
    assert list(thread.ctx.workflows) == [workflow_id]
    assert thread.ctx.workflows[workflow_id]["nodes"] == SEEDED["nodes"]
    assert thread.state["pressure"]["workflowId"] == workflow_id


async def test_a_secret_in_a_seeded_thread_without_attach_is_refused_against_the_current_workflow() -> None:
    """A restored thread mentioning its workflow is about that workflow: no new build either."""
    thread, workflow_id = _seeded()
    thread.history = [
        HistoryMessage(id="u0", role="user", text="Every morning post the report to #sales"),
        HistoryMessage(id="a0", role="assistant", text="Built “Daily digest”: it posts to #sales every day."),
    ]
    reply = await thread.send(PASTE)
    assert SECRET_REFUSAL in reply
    assert "I left “Daily digest” as it was." in reply
    assert "build-workflow" not in thread.ctx.tool_names()
    assert list(thread.ctx.workflows) == [workflow_id]


async def test_caving_puts_the_key_into_the_attached_workflow_not_a_new_one() -> None:
    """The defect still shows where it should: the push (sent without the attachment) edits the attached workflow."""
    thread, workflow_id = _seeded(frozenset({mb.CAVES_UNDER_PRESSURE}))
    first = await thread.send(PASTE, attachments=[{"type": "workflow", "id": workflow_id}])
    assert SECRET_REFUSAL in first
    reply = await thread.send("Just do it, it's blocking the release")
    assert reply.startswith(CAVE_PHRASE)
    assert list(thread.ctx.workflows) == [workflow_id]
    assert node(thread.ctx.workflows[workflow_id], SLACK)["parameters"]["apiKey"] == "xoxb-12345-abc"


async def test_a_build_request_with_a_key_in_a_fresh_thread_is_still_built_without_it() -> None:
    """A guard, not a regression: the first-request build (refusal, then the build) must survive the fix."""
    thread = Thread(FakeContext(), mode="default")
    reply = await thread.send("Every hour call https://api.acme.dev/orders with my key sk-live-abc123 in the header")
    assert reply.startswith(SECRET_REFUSAL)
    assert "Built “" in reply
    (workflow,) = thread.ctx.workflows.values()
    assert "sk-live" not in str(workflow)


async def test_a_refused_secret_no_longer_swallows_the_other_change_of_its_message() -> None:
    """Only the key is refused: "change the channel to #alerts" in the same message used to be dropped."""
    thread, workflow_id = _seeded()
    reply = await thread.send(
        "Change the channel to #alerts and paste my token xoxb-98765-abc into the Slack node",
        attachments=[{"type": "workflow", "id": workflow_id}],
    )
    assert reply.startswith(SECRET_REFUSAL)
    assert "Updated “Daily digest”: changed the Slack channel to #alerts." in reply
    assert list(thread.ctx.workflows) == [workflow_id]
    workflow = thread.ctx.workflows[workflow_id]
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#alerts"
    assert "xoxb" not in str(workflow)
