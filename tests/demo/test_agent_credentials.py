"""Credentials: silent attach, which-one question, setup card outcomes, standalone card."""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import FakeContext, Thread, node
from threadcase import wire

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
PROMPT = "Every morning post the report to #sales"


def _slack(*ids: str) -> list[dict[str, str]]:
    return [{"id": i, "name": f"Slack {i}", "type": "slackApi"} for i in ids]


async def test_exactly_one_credential_is_attached_without_asking() -> None:
    thread = Thread(FakeContext(credentials=_slack("c1")))
    reply = await thread.send(PROMPT)
    assert thread.ctx.asks == []
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["credentials"] == {"slackApi": {"id": "c1", "name": "Slack c1"}}
    assert "ready to run" in reply


async def test_two_credentials_ask_which_with_names_as_options() -> None:
    thread = Thread(FakeContext(credentials=_slack("c1", "c2")))
    thread.answer(
        {
            "kind": "questions",
            "answers": [{"questionId": "credential:slackApi", "selectedOptions": ["Slack c2"], "skipped": False}],
        }
    )
    await thread.send(PROMPT)
    (ask,) = thread.ctx.asks
    (question,) = ask["questions"]
    assert question["type"] == "single"
    assert question["options"] == ["Slack c1", "Slack c2"]
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["credentials"]["slackApi"]["id"] == "c2"


async def test_no_credential_shows_a_setup_card_and_deferral_is_said_plainly() -> None:
    thread = Thread(FakeContext())
    thread.answer({"kind": "approval", "approved": False})
    reply = await thread.send(PROMPT)
    (ask,) = thread.ctx.asks
    assert "inputType" not in ask  # as n8n: a setup card is told by its setupRequests
    (request,) = ask["setupRequests"]
    slack = node(next(iter(thread.ctx.workflows.values())), SLACK)
    # n8n's workflowSetupNodeSchema: the node itself (not its name), and problems as lists.
    assert request == {
        "node": {
            "name": "Slack",
            "type": SLACK,
            "typeVersion": slack["typeVersion"],
            "parameters": slack["parameters"],
            "position": slack["position"],
            "id": slack["id"],
        },
        "credentialType": "slackApi",
        "existingCredentials": [],
        "isTrigger": False,
        "parameterIssues": {},
    }
    assert wire.ConfirmationRequest.model_validate({**ask, "requestId": "r"}).kind == "setup"
    (workflow,) = thread.ctx.workflows.values()
    assert "credentials" not in node(workflow, SLACK)
    assert "I'll leave Slack unconnected — the workflow needs setup before it can run." in reply
    assert "ready to run" not in reply
    assert thread.state["deferred_credentials"] == ["slackApi"]


async def test_setup_card_skipped_detail_is_a_parameter_issue() -> None:
    thread = Thread(FakeContext())
    thread.answer(
        {"kind": "questions", "answers": [{"questionId": "slack_channel", "skipped": True}]},
        {"kind": "setupWorkflowApply", "nodeParameters": {"Slack": {"channelId": "#filled"}}, "nodeCredentials": {}},
    )
    await thread.send("Every morning post the report to Slack")
    request = thread.ctx.asks[1]["setupRequests"][0]
    # As n8n 2.41 names it: the Slack node's own parameter, its channel locator; a plain name answers it.
    assert request["parameterIssues"] == {"channelId": ["Not set — you skipped this detail"]}
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#filled"


async def test_setup_card_applied_credentials_are_attached_and_tested() -> None:
    ctx = FakeContext(working={"new-ok"})

    def create_and_apply(request: dict[str, Any]) -> dict[str, Any]:
        # The user creates a credential inside the card, as the proxy does mid-run.
        ctx.credentials.append({"id": "new-ok", "name": "My Slack", "type": "slackApi"})
        return {"kind": "setupWorkflowApply", "nodeCredentials": {"Slack": {"slackApi": "new-ok"}}}

    thread = Thread(ctx).answer(create_and_apply)
    reply = await thread.send(PROMPT)
    assert ("test-credential", {"credentialId": "new-ok"}) in ctx.calls
    (workflow,) = ctx.workflows.values()
    assert node(workflow, SLACK)["credentials"] == {"slackApi": {"id": "new-ok", "name": "My Slack"}}
    assert "Connected Slack with “My Slack” (connection test passed)." in reply


async def test_failed_connection_test_is_reported_by_name() -> None:
    ctx = FakeContext(credentials=[], working=set())

    def apply_broken(request: dict[str, Any]) -> dict[str, Any]:
        ctx.credentials.append({"id": "bad", "name": "Broken Slack", "type": "slackApi"})
        return {"kind": "setupWorkflowApply", "nodeCredentials": {"Slack": {"slackApi": "bad"}}}

    thread = Thread(ctx).answer(apply_broken)
    reply = await thread.send(PROMPT)
    assert "“Broken Slack” failed its connection test (Invalid access token)" in reply
    assert "ready to run" not in reply


async def test_credential_selection_answer_on_a_setup_card() -> None:
    ctx = FakeContext(working={"c9"})

    def select(request: dict[str, Any]) -> dict[str, Any]:
        ctx.credentials.append({"id": "c9", "name": "Picked", "type": "slackApi"})
        return {"kind": "credentialSelection", "credentials": {"slackApi": "c9"}}

    await Thread(ctx).answer(select).send(PROMPT)
    (workflow,) = ctx.workflows.values()
    assert node(workflow, SLACK)["credentials"]["slackApi"]["id"] == "c9"


async def test_connect_account_shows_the_standalone_credential_card() -> None:
    ctx = FakeContext(credentials=[{"id": "g1", "name": "Old GitHub", "type": "githubApi"}], working={"g1"})
    thread = Thread(ctx).answer({"kind": "credentialSelection", "credentials": {"githubApi": "g1"}})
    reply = await thread.send("Connect my GitHub account")
    (ask,) = ctx.asks
    assert "inputType" not in ask
    assert wire.ConfirmationRequest.model_validate({**ask, "requestId": "r"}).kind == "credentials"
    assert ask["credentialRequests"][0]["credentialType"] == "githubApi"
    assert ask["credentialRequests"][0]["existingCredentials"] == [{"id": "g1", "name": "Old GitHub"}]
    assert "GitHub is connected with “Old GitHub”" in reply
    assert ctx.workflows == {}


async def test_connect_account_deferred() -> None:
    thread = Thread().answer({"kind": "credentialSelection", "credentials": {}})
    reply = await thread.send("Connect my Notion account")
    assert "not connected yet" in reply
