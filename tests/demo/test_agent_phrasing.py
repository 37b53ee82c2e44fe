"""The demo agent reads ordinary phrasing of what its README says it does, and never substitutes silently.

Each test is a class of phrasing that used to be misread: a sentence's full stop kept in a value, a
webhook path replaced by a default or lower-cased, a name of several words cut to one, a question
about the workflow taken for a change request, an old value taken for the new one.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import ONE_CREDENTIAL_EACH, FakeContext, Thread, node
from threadcase.demo_instance.agent.parse import parse_build, parse_name, webhook_path

pytestmark = pytest.mark.anyio


def _thread() -> Thread:
    return Thread(FakeContext(credentials=list(ONE_CREDENTIAL_EACH)), mode="default")


def _only(thread: Thread) -> dict[str, Any]:
    (workflow,) = thread.ctx.workflows.values()
    return workflow


def _condition(workflow: dict[str, Any]) -> dict[str, Any]:
    return dict(node(workflow, "n8n-nodes-base.if")["parameters"]["conditions"]["conditions"][0])


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("Every hour fetch https://status.acme.dev/api and alert #ops only if status is down.", "down"),
        ("Every hour fetch https://status.acme.dev/api and alert #ops if state equals degraded!", "degraded"),
        ('Every hour fetch https://status.acme.dev/api and alert #ops if status is "down."', "down."),
    ],
)
async def test_a_filter_value_never_keeps_the_sentences_punctuation(message: str, value: str) -> None:
    thread = _thread()
    await thread.send(message)
    assert _condition(_only(thread))["rightValue"] == value


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ("When a webhook is called at /Signups/New, post to #growth", "Signups/New"),
        ("Set up a webhook with path intake-form that posts to #growth", "intake-form"),
        ("When a request comes in on /hooks/billing-v2 post it to #billing", "hooks/billing-v2"),
    ],
)
async def test_a_webhook_path_the_user_named_is_kept_as_written(message: str, path: str) -> None:
    thread = _thread()
    await thread.send(message)
    assert node(_only(thread), "n8n-nodes-base.webhook")["parameters"]["path"] == path


async def test_a_webhook_path_can_be_changed_without_saying_webhook() -> None:
    thread = _thread()
    await thread.send("When a webhook is called at /orders, post to #orders")
    reply = await thread.send("Use /orders-v2 as the path from now on")
    assert node(_only(thread), "n8n-nodes-base.webhook")["parameters"]["path"] == "orders-v2"
    assert "/orders-v2" in reply


def test_urls_and_owner_repo_are_never_a_webhook_path() -> None:
    assert webhook_path("When a webhook is called, open an issue in acme/app and call https://x.io/hook") is None


@pytest.mark.parametrize(
    ("message", "node_type", "key", "name"),
    [
        (
            "Every morning insert the rows into the beta signups data table",
            "n8n-nodes-base.dataTable",
            "dataTableName",
            "beta signups",
        ),
        (
            "Every weekday at 7 append a row to the Q3 leads sheet",
            "n8n-nodes-base.googleSheets",
            "documentId",
            "Q3 leads",
        ),
        ("Every day append a row to the leads spreadsheet", "n8n-nodes-base.googleSheets", "documentId", "leads"),
    ],
)
async def test_names_of_several_words_are_kept_whole(message: str, node_type: str, key: str, name: str) -> None:
    thread = _thread()
    await thread.send(message)
    assert node(_only(thread), node_type)["parameters"][key] == name


@pytest.mark.parametrize(
    ("message", "name"),
    [
        ("Every day at 8 post to #x, call it Beta signups digest", "Beta signups digest"),
        ("Build a workflow named Weekly KPIs that posts to #kpis every monday", "Weekly KPIs"),
        ('Every day post to #x and call it "ops: nightly"', "ops: nightly"),
        ("Every day insert into a data table called Beta Signups", None),
        ("Every day post what is called out in standup to #x", None),
    ],
)
def test_a_workflow_name_quoted_or_not(message: str, name: str | None) -> None:
    assert parse_name(message) == name


async def test_an_unquoted_name_is_not_read_as_steps() -> None:
    thread = _thread()
    await thread.send("Every hour post to #x, name it Daily Slack email report")
    workflow = _only(thread)
    assert workflow["name"] == "Daily Slack email report"
    assert [x["type"] for x in workflow["nodes"]] == ["n8n-nodes-base.scheduleTrigger", "n8n-nodes-base.slack"]
    assert parse_build("Every hour post to #x, name it Daily Slack email report").trigger is not None


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Can I turn it on now?", "Yes — I don't see anything blocking"),
        ("Will it post on weekends?", "it runs every day at 09:00"),
        ("Should I change anything before it goes live?", "Yes — I don't see anything blocking"),
        ("Why does it post to #sales?", "it posts to #sales"),
    ],
)
async def test_a_question_about_the_workflow_is_answered_as_a_question(question: str, answer: str) -> None:
    thread = _thread()
    await thread.send("Every morning post the report to #sales")
    before = str(_only(thread))
    reply = await thread.send(question)
    assert answer in reply
    assert "I didn't understand" not in reply
    assert str(_only(thread)) == before


async def test_the_old_value_a_message_replaces_is_never_applied() -> None:
    thread = _thread()
    await thread.send("Every Friday at 4pm post the sprint recap to #eng")
    reply = await thread.send("Make it Thursdays, same time, and ping #eng-leads rather than #eng")
    workflow = _only(thread)
    rule = node(workflow, "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert (rule["triggerAtDay"], rule["triggerAtHour"]) == ([4], 16)
    assert node(workflow, "n8n-nodes-base.slack")["parameters"]["channelId"]["value"] == "#eng-leads"
    assert "#eng." not in reply
    assert "I didn't understand" not in reply
    await thread.send("Switch from #eng-leads to #eng-core")
    assert node(_only(thread), "n8n-nodes-base.slack")["parameters"]["channelId"]["value"] == "#eng-core"


async def test_changing_only_the_days_keeps_the_time() -> None:
    thread = _thread()
    await thread.send("Every morning at 7 post the report to #sales")
    await thread.send("make it weekdays only")
    rule = node(_only(thread), "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert (rule["triggerAtDay"], rule["triggerAtHour"]) == ([1, 2, 3, 4, 5], 7)


async def test_a_message_naming_an_existing_workflow_is_an_edit_of_it() -> None:
    ctx = FakeContext(credentials=list(ONE_CREDENTIAL_EACH))
    thread = Thread(ctx, mode="default")
    await thread.send('Every 6 hours post the stock levels to #warehouse, call it "Stock sync"')
    reply = await Thread(ctx, mode="default").send("In the Stock sync workflow, go to every 15 minutes.")
    rule = node(_only(thread), "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert rule == {"field": "minutes", "minutesInterval": 15}
    assert reply.startswith("Updated “Stock sync”")


@pytest.mark.parametrize(
    "message", ["Please rename this workflow to Launch digest.", "rename this one to Launch digest"]
)
async def test_rename_this_workflow(message: str) -> None:
    thread = _thread()
    await thread.send("Every morning post the launch report to #sales")
    await thread.send(message)
    assert _only(thread)["name"] == "Launch digest"


async def test_a_recall_answers_the_clause_asked_about_not_the_whole_note() -> None:
    thread = _thread()
    thread.compact(["User stated: alerts go to #ops-escalations, and the on-call address is oncall@acme.dev."])
    channel = await thread.send("What did I say the alerts channel was?")
    email = await thread.send("What did I say the on-call email was?")
    assert "#ops-escalations" in channel
    assert "oncall@acme.dev" not in channel
    assert "oncall@acme.dev" in email
    assert "#ops-escalations" not in email
