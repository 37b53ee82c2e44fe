"""Builds, clarifying questions, plans and edits, through an in-memory AgentContext."""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import FakeContext, Thread, approve, node, node_types, questions, reject
from threadcase.demo_instance.agent.protocol import HistoryMessage, ToolFailed

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
GMAIL = "n8n-nodes-base.gmail"


async def test_single_prompt_build_with_every_detail() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}]))
    reply = await thread.send('Every weekday at 9am post the sales summary to #sales on Slack. Call it "Sales digest".')
    assert thread.ctx.asks == []
    (workflow,) = thread.ctx.workflows.values()
    assert workflow["name"] == "Sales digest"
    assert node_types(workflow) == ["n8n-nodes-base.scheduleTrigger", SLACK]
    slack = node(workflow, SLACK)
    assert slack["parameters"]["channelId"]["value"] == "#sales"
    assert slack["credentials"] == {"slackApi": {"id": "c1", "name": "Team Slack"}}
    rule = node(workflow, "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert rule == {
        "field": "weeks",
        "weeksInterval": 1,
        "triggerAtDay": [1, 2, 3, 4, 5],
        "triggerAtHour": 9,
        "triggerAtMinute": 0,
    }
    assert workflow["connections"] == {"Schedule Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}}
    assert "Built “Sales digest”" in reply
    assert "#sales" in reply
    assert len(thread.ctx.said) >= 2, "the reply is streamed in several deltas"


async def test_one_widget_for_all_missing_details_and_never_again() -> None:
    ctx = FakeContext(
        credentials=[
            {"id": "c1", "name": "Team Slack", "type": "slackApi"},
            {"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"},
        ]
    )
    thread = Thread(ctx, mode="default")
    thread.answer(questions(slack_channel="#general", gmail_recipient="ceo@acme.com"))
    await thread.send("Every morning post a summary to Slack and email it")
    (ask,) = ctx.asks
    assert ask["inputType"] == "questions"
    assert [q["id"] for q in ask["questions"]] == ["slack_channel", "gmail_recipient"]
    (workflow,) = ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#general"
    assert node(workflow, GMAIL)["parameters"]["sendTo"] == "ceo@acme.com"

    # A later build needing the same detail reuses the answer instead of asking again.
    reply = await thread.send("Build a new workflow that posts to Slack every hour")
    assert len(ctx.asks) == 1
    assert "#general" in reply


async def test_skipped_detail_becomes_a_marked_placeholder() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}]))
    thread.answer(questions(slack_channel=None))
    reply = await thread.send("Post to Slack every morning")
    (workflow,) = thread.ctx.workflows.values()
    channel = node(workflow, SLACK)["parameters"]["channelId"]["value"]
    assert channel.startswith("<<SET ME")
    assert "skipped the Slack channel" in reply
    assert "placeholder" in reply
    assert "ready to run" not in reply
    # ... and the skipped question is not asked again either.
    await thread.send("Build another workflow that posts to Slack every hour")
    assert len(thread.ctx.asks) == 1


async def test_missing_trigger_is_asked_with_options() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}]))
    thread.answer(questions(trigger="When a webhook is called"))
    await thread.send("Post new orders to #orders in Slack")
    (ask,) = thread.ctx.asks
    (question,) = ask["questions"]
    assert question["id"] == "trigger"
    assert question["type"] == "single"
    assert question["options"]
    (workflow,) = thread.ctx.workflows.values()
    assert node_types(workflow)[0] == "n8n-nodes-base.webhook"


async def test_not_understood_says_so_and_builds_nothing() -> None:
    thread = Thread()
    reply = await thread.send("Make me a sandwich")
    assert "didn't understand" in reply
    assert thread.ctx.workflows == {}
    assert thread.ctx.asks == []


async def test_filter_set_and_error_handling_nodes() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}]), mode="default")
    await thread.send(
        "When a webhook is called on path /orders, set the status field to new and post to #orders, "
        "only if amount > 100. Continue on fail and alert #ops."
    )
    (workflow,) = thread.ctx.workflows.values()
    names = [x["name"] for x in workflow["nodes"]]
    assert names == ["Webhook", "If", "Edit Fields", "Slack", "Check for errors", "Alert on failure"]
    condition = node(workflow, "n8n-nodes-base.if")["parameters"]["conditions"]["conditions"][0]
    assert condition == {
        "leftValue": "={{ $json.amount }}",
        "rightValue": 100,
        "operator": {"type": "number", "operation": "gt"},
    }
    slack_nodes = [x for x in workflow["nodes"] if x["type"] == SLACK]
    assert slack_nodes[0]["onError"] == "continueRegularOutput"
    assert slack_nodes[1]["parameters"]["channelId"]["value"] == "#ops"
    conn = workflow["connections"]
    assert conn["Webhook"]["main"][0][0]["node"] == "If"
    assert conn["If"]["main"][0][0]["node"] == "Edit Fields"
    assert conn["Edit Fields"]["main"][0][0]["node"] == "Slack"
    assert conn["Slack"]["main"][0][0]["node"] == "Check for errors"
    assert conn["Check for errors"]["main"][0][0]["node"] == "Alert on failure"
    assignments = node(workflow, "n8n-nodes-base.set")["parameters"]["assignments"]["assignments"]
    assert assignments == [{"name": "status", "value": "new", "type": "string"}]


# --- plans ------------------------------------------------------------------------------------


async def test_progressive_multi_step_build_waits_for_plan_approval() -> None:
    ctx = FakeContext(
        credentials=[
            {"id": "c1", "name": "Team Slack", "type": "slackApi"},
            {"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"},
        ]
    )
    thread = Thread(ctx).answer(approve())
    await thread.send("Every morning post to #sales and email boss@acme.com")
    (ask,) = ctx.asks
    assert ask["inputType"] == "plan-review"
    assert [step["title"] for step in ask["plan"]] == ["Schedule Trigger", "Slack", "Gmail"]
    assert ctx.tool_names()[-1] == "build-workflow"


async def test_rejected_plan_applies_feedback_and_proposes_again() -> None:
    ctx = FakeContext(
        credentials=[
            {"id": "c1", "name": "Team Slack", "type": "slackApi"},
            {"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"},
        ]
    )
    thread = Thread(ctx).answer(reject("post to #general instead"), approve())
    await thread.send("Every morning post to #sales and email boss@acme.com")
    assert [a["inputType"] for a in ctx.asks] == ["plan-review", "plan-review"]
    assert "#general" in ctx.asks[1]["plan"][1]["detail"]
    assert "revised" in ctx.asks[1]["message"]
    (workflow,) = ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#general"


async def test_plan_rejected_three_times_builds_nothing() -> None:
    thread = Thread().answer(reject("post to #a"), reject("post to #b"), reject("post to #c"))
    reply = await thread.send("Every morning post to #sales and email boss@acme.com")
    assert len(thread.ctx.asks) == 3
    assert thread.ctx.workflows == {}
    assert "haven't built anything" in reply


async def test_single_step_progressive_build_has_no_plan_unless_asked() -> None:
    ctx = FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}])
    thread = Thread(ctx)
    await thread.send("Every morning post to #sales")
    assert ctx.asks == []
    thread.answer(approve())
    await thread.send("Show me a plan first: build a new workflow that posts to #ops every hour")
    assert [a["inputType"] for a in ctx.asks] == ["plan-review"]


# --- edits ------------------------------------------------------------------------------------


async def _built_thread(**kwargs: object) -> Thread:
    ctx = FakeContext(
        credentials=[
            {"id": "c1", "name": "Team Slack", "type": "slackApi"},
            {"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"},
        ],
        folders={"Archive": "f1", "ODW": "f2"},
    )
    thread = Thread(ctx, mode="default", **kwargs)  # type: ignore[arg-type]
    await thread.send('Every morning post the report to #sales. Call it "Daily digest".')
    return thread


async def test_change_request_edits_the_built_workflow_in_place() -> None:
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    reply = await thread.send("Post to #marketing instead")
    assert list(thread.ctx.workflows) == [workflow_id]
    name, args = thread.ctx.calls[-1]
    assert name == "build-workflow"
    assert args["workflowId"] == workflow_id
    assert node(thread.ctx.workflows[workflow_id], SLACK)["parameters"]["channelId"]["value"] == "#marketing"
    assert "#marketing" in reply


async def test_numbered_changes_are_all_applied_in_one_edit_and_listed() -> None:
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    calls_before = len(thread.ctx.calls)
    reply = await thread.send(
        "Please make these changes:\n1. change the channel to #general\n2. run it every weekday at 8am\n"
        "3. add an email to boss@acme.com"
    )
    builds = [c for c in thread.ctx.calls[calls_before:] if c[0] == "build-workflow"]
    assert len(builds) == 1
    workflow = thread.ctx.workflows[workflow_id]
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#general"
    rule = node(workflow, "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert rule["triggerAtDay"] == [1, 2, 3, 4, 5]
    assert rule["triggerAtHour"] == 8
    assert node(workflow, GMAIL)["parameters"]["sendTo"] == "boss@acme.com"
    assert "1. Changed the Slack channel to #general" in reply
    assert "2. Changed the trigger to run on weekdays at 08:00" in reply
    assert "3. Added a Gmail step" in reply


async def test_attached_workflow_is_the_edit_target() -> None:
    thread = await _built_thread()
    other = thread.ctx.add_workflow(
        {
            "name": "Other",
            "nodes": [
                {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
                {"name": "Slack", "type": SLACK, "parameters": {"channel": "#old"}},
            ],
            "connections": {"Manual Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
        }
    )
    await thread.send("Change the channel to #new", attachments=[{"type": "workflow", "id": other, "name": "Other"}])
    assert node(thread.ctx.workflows[other], SLACK)["parameters"]["channelId"]["value"] == "#new"


async def test_named_workflow_is_found_by_listing() -> None:
    thread = await _built_thread()
    thread.state.clear()  # a new conversation about an existing workflow
    await thread.send("In the Daily digest workflow, change the channel to #ops")
    assert ("list-workflows", {"query": "Daily digest"}) in thread.ctx.calls
    (workflow,) = thread.ctx.workflows.values()
    assert node(workflow, SLACK)["parameters"]["channelId"]["value"] == "#ops"
    assert node_types(workflow)[0] == "n8n-nodes-base.scheduleTrigger", "the name is not read as a daily schedule"


async def test_rename_move_delete_and_folder_listing() -> None:
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    await thread.send('Rename it to "Morning report"')
    assert thread.ctx.workflows[workflow_id]["name"] == "Morning report"
    await thread.send("Move it into the Archive folder")
    assert thread.ctx.calls[-1] == ("move-workflow", {"workflowId": workflow_id, "folderPath": "Archive"})
    thread.ctx.add_workflow({"name": "ODW intake", "nodes": [], "connections": {}}, folder="ODW")
    thread.ctx.add_workflow({"name": "ODW export", "nodes": [], "connections": {}}, folder="ODW")
    reply = await thread.send("What's in the ODW folder?")
    assert thread.ctx.calls[-1] == ("list-workflows", {"folderPath": "ODW"})
    assert "“ODW intake”" in reply
    assert "“ODW export”" in reply
    assert "Morning report" not in reply
    assert thread.ctx.asks == []
    await thread.send("Delete it")
    assert workflow_id not in thread.ctx.workflows


async def test_add_filter_remove_step_and_error_handling_edits() -> None:
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    await thread.send("Only post if amount > 500")
    await thread.send("Add error handling: continue on fail and alert #ops")
    workflow = thread.ctx.workflows[workflow_id]
    assert [x["name"] for x in workflow["nodes"]][:3] == ["Schedule Trigger", "Slack", "If"]
    assert node(workflow, "n8n-nodes-base.if")["parameters"]["conditions"]["conditions"][0]["rightValue"] == 500
    assert any(x["name"] == "Alert on failure" for x in workflow["nodes"])
    await thread.send("Change the threshold to 750")
    workflow = thread.ctx.workflows[workflow_id]
    assert node(workflow, "n8n-nodes-base.if")["parameters"]["conditions"]["conditions"][0]["rightValue"] == 750
    await thread.send("Remove the filter step")
    workflow = thread.ctx.workflows[workflow_id]
    assert "n8n-nodes-base.if" not in [x["type"] for x in workflow["nodes"] if x["name"] != "Check for errors"]
    assert workflow["connections"]["Schedule Trigger"]["main"][0][0]["node"] == "Slack"


async def test_answers_questions_about_what_it_built() -> None:
    thread = await _built_thread()
    assert "#sales" in await thread.send("What channel does it post to?")
    assert "09:00" in await thread.send("When does it run?")


async def test_not_understood_part_is_said_and_the_rest_is_built() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"}]))
    thread.answer(questions(gmail_recipient="me@acme.com"))
    reply = await thread.send(
        "Build me a workflow that checks the weather in Lisbon every morning and emails me a summary"
    )
    assert "I didn't understand “checks the weather in Lisbon every morning”" in reply
    assert "ready to run" not in reply
    (workflow,) = thread.ctx.workflows.values()
    assert node_types(workflow) == ["n8n-nodes-base.scheduleTrigger", GMAIL]


async def test_time_only_change_keeps_the_days() -> None:
    thread = await _built_thread()
    await thread.send("Run it on weekdays at 8am")
    reply = await thread.send("Send it at 07:30 instead")
    (workflow,) = thread.ctx.workflows.values()
    rule = node(workflow, "n8n-nodes-base.scheduleTrigger")["parameters"]["rule"]["interval"][0]
    assert (rule["triggerAtDay"], rule["triggerAtHour"], rule["triggerAtMinute"]) == ([1, 2, 3, 4, 5], 7, 30)
    assert "07:30" in reply
    await thread.send("Run it at 6pm")
    rule = node(thread.ctx.workflows[next(iter(thread.ctx.workflows))], "n8n-nodes-base.scheduleTrigger")
    assert rule["parameters"]["rule"]["interval"][0]["triggerAtDay"] == [1, 2, 3, 4, 5]
    assert rule["parameters"]["rule"]["interval"][0]["triggerAtHour"] == 18


async def test_handoff_without_a_message_reports_what_blocks_the_workflow() -> None:
    ctx = FakeContext()
    workflow_id = ctx.add_workflow(
        {
            "name": "Generate leads",
            "nodes": [
                {"name": "Form", "type": "n8n-nodes-base.formTrigger", "parameters": {}},
                {"name": "Normalise", "type": "n8n-nodes-base.code", "parameters": {"jsCode": "return []"}},
                {"name": "Slack", "type": SLACK, "parameters": {"channel": "<<SET ME: Slack channel>>"}},
            ],
            "connections": {
                "Form": {"main": [[{"node": "Normalise", "type": "main", "index": 0}]]},
                "Normalise": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]},
            },
        }
    )
    reply = await Thread(ctx).send("", attachments=[{"type": "workflow", "id": workflow_id, "name": "Generate leads"}])
    assert "I opened “Generate leads”" in reply
    assert "the Slack node still has placeholders (channel)" in reply
    assert "the Slack node has no Slack credential" in reply
    assert "Normalise node (n8n-nodes-base.code) is outside what I can check or fix" in reply
    assert ctx.tool_names() == ["get-workflow"]


async def test_a_named_workflow_that_does_not_exist_is_said() -> None:
    thread = Thread()
    reply = await thread.send("Speed up the report query in the Reports workflow.")
    assert reply == "I couldn't find a workflow called “Reports” in this project."


async def test_a_filter_on_fetched_data_goes_after_the_fetch() -> None:
    thread = Thread(FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}]), mode="default")
    await thread.send(
        "Every 30 minutes, fetch https://api.example.com/status and alert #ops on Slack if status is down"
    )
    (workflow,) = thread.ctx.workflows.values()
    assert [x["name"] for x in workflow["nodes"]] == ["Schedule Trigger", "HTTP Request", "If", "Slack"]
    assert not any(x.get("onError") for x in workflow["nodes"]), "an alert without an error phrase is a Slack step"
    assert workflow["connections"]["HTTP Request"]["main"][0][0]["node"] == "If"


async def test_streamed_deltas_join_back_into_the_multi_line_reply() -> None:
    thread = await _built_thread()
    said_before = len(thread.ctx.said)
    reply = await thread.send("Please:\n1. change the channel to #general\n2. run it every hour")
    assert len(thread.ctx.said) - said_before >= 2
    assert reply.splitlines() == [
        "Updated “Daily digest”:",
        "1. Changed the Slack channel to #general.",
        "2. Changed the trigger to run every hour.",
    ]


@pytest.mark.parametrize("message", ["Thanks!", "Great, thanks", "Looks good, that's all", "ok thank you"])
async def test_acknowledgements_get_a_short_answer_and_no_tools(message: str) -> None:
    thread = Thread()
    reply = await thread.send(message)
    assert reply == "You're welcome — tell me if you'd like any other change."
    assert thread.ctx.calls == []


async def test_with_an_attachment_a_plain_instruction_is_an_edit() -> None:
    thread = await _built_thread()
    (workflow_id,) = thread.ctx.workflows
    await thread.send("Post to #eng", attachments=[{"type": "workflow", "id": workflow_id, "name": "Daily digest"}])
    assert list(thread.ctx.workflows) == [workflow_id]
    assert node(thread.ctx.workflows[workflow_id], SLACK)["parameters"]["channelId"]["value"] == "#eng"


async def test_another_threads_workflow_is_never_the_edit_target() -> None:
    ctx = FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}])
    foreign = ctx.add_workflow({"name": "Someone else's", "nodes": [], "connections": {}})
    thread = Thread(ctx)
    await thread.send("Use Slack to post the report to #x every morning")
    assert ctx.workflows[foreign]["nodes"] == []
    assert len(ctx.workflows) == 2


async def test_a_seeded_thread_edits_the_workflow_its_history_mentions() -> None:
    ctx = FakeContext(credentials=[{"id": "c1", "name": "Team Slack", "type": "slackApi"}])
    ctx.add_workflow({"name": "Leads", "nodes": [], "connections": {}})
    seeded = ctx.add_workflow(
        {
            "name": "Leads [seed 1a2b]",
            "nodes": [
                {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
                {"name": "Slack", "type": SLACK, "parameters": {"channel": "#old"}},
            ],
            "connections": {"Manual Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
        }
    )
    thread = Thread(ctx)
    thread.history.append(HistoryMessage(id="s1", role="assistant", text="I built Leads [seed 1a2b].", seeded=True))
    await thread.send("Change the channel to #new")
    assert node(ctx.workflows[seeded], SLACK)["parameters"]["channelId"]["value"] == "#new"


async def test_data_tables_are_resolved_created_or_reported() -> None:
    ctx = FakeContext(tables=[{"id": "dt-orders", "name": "Orders", "columns": []}])
    thread = Thread(ctx, mode="default")
    await thread.send("When the form is submitted insert into the orders data table")
    (workflow,) = ctx.workflows.values()
    table = node(workflow, "n8n-nodes-base.dataTable")["parameters"]
    assert table == {"operation": "insert", "dataTableId": "dt-orders", "dataTableName": "Orders"}

    reply = await thread.send("Build a new workflow that runs every hour and inserts into the leads data table")
    assert ("create-data-table", {"name": "leads", "columns": [{"name": "data", "type": "string"}]}) in ctx.calls
    assert "I created the data table “leads”." in reply

    reply = await thread.send("Build a new workflow that runs every hour and reads rows from the missing data table")
    assert "I couldn't find a data table called “missing”" in reply
    assert "ready to run" not in reply


async def test_a_table_created_concurrently_by_another_thread_is_used() -> None:
    ctx = FakeContext()
    original = ctx._tool

    def racing(name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "create-data-table":
            ctx.tables.append({"id": "dt-other", "name": "leads", "columns": []})
            raise ToolFailed("a data table named 'leads' already exists in this project")
        return original(name, args)

    ctx._tool = racing  # type: ignore[method-assign]
    await Thread(ctx, mode="default").send("Every hour insert into the leads data table")
    (workflow,) = ctx.workflows.values()
    assert node(workflow, "n8n-nodes-base.dataTable")["parameters"]["dataTableId"] == "dt-other"
