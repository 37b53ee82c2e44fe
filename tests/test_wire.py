"""The wire models read n8n 2.41's answers as it sends them (payloads as observed on the real n8n,
``docs/n8n-local.md``); each of these failed to parse, or parsed wrong, before the models followed n8n."""

from __future__ import annotations

from typing import Any

import pytest

from threadcase import wire
from threadcase.harness.turn_text import TurnText

STEP_OUTPUT_USAGE = {
    "inputTokens": 5000,
    "inputTokenDetails": {"noCacheTokens": 1200, "cacheReadTokens": 3800},
    "outputTokens": 90,
    "outputTokenDetails": {"textTokens": 90, "reasoningTokens": 0},
    "totalTokens": 5090,
    "raw": {"prompt_tokens": 5000, "completion_tokens": 90, "total_tokens": 5090},
}


def test_thread_status_has_no_status_field_and_settles_on_n8ns_flags() -> None:
    idle = wire.ThreadStatus.model_validate(
        {"hasActiveRun": False, "isSuspended": False, "backgroundTasks": [], "memoryTasks": []}
    )
    assert idle.settled
    running = wire.ThreadStatus.model_validate({"hasActiveRun": True, "isSuspended": False, "runId": "run_1"})
    suspended = wire.ThreadStatus.model_validate({"hasActiveRun": False, "isSuspended": True, "runId": "run_1"})
    observing = wire.ThreadStatus.model_validate(
        {
            "hasActiveRun": False,
            "isSuspended": False,
            "memoryTasks": [{"taskId": "m", "taskKind": "observer", "status": "running", "startedAt": 1796193321069}],
        }
    )
    background = wire.ThreadStatus.model_validate(
        {
            "hasActiveRun": False,
            "isSuspended": False,
            "backgroundTasks": [
                {"taskId": "b", "role": "builder", "agentId": "a", "status": "running", "startedAt": 1}
            ],
            "promptConfiguration": {"version": "default@1", "systemPromptVersion": "instance-agent@1"},
        }
    )
    assert not any(s.settled for s in (running, suspended, observing, background))
    assert background.promptConfiguration == {"version": "default@1", "systemPromptVersion": "instance-agent@1"}


def test_run_debug_reads_epoch_ms_and_steps_with_and_without_output() -> None:
    summary = wire.RunSummary.model_validate(
        {
            "runId": "run_1",
            "threadId": "t",
            "startedAt": 1796193321069,
            "stepCount": 2,
            "workflowCodeCount": 0,
            "label": "hi",
        }
    )
    assert (summary.startedAt, summary.stepCount, summary.steps) == (1796193321069, 2, None)
    debug = wire.RunDebug.model_validate(
        {
            "threadId": "t",
            "runId": "run_1",
            "startedAt": 1796193321069,
            "label": "hi",
            "nextStepIndex": 1,
            "steps": [
                {
                    "stepNumber": 0,
                    "input": {"modelId": "m"},
                    "output": {"usage": STEP_OUTPUT_USAGE, "finishReason": "stop"},
                },
                {"stepNumber": 1, "input": {"modelId": "m"}},  # its model call failed: no output, no usage
            ],
            "workflowCode": [],
        }
    )
    assert [s.usage for s in debug.steps][1] is None
    assert wire.step_usages(debug.steps) == [
        wire.TokenUsage(inputTokens=5000, outputTokens=90, cachedInputTokens=3800, cacheWriteTokens=0)
    ]


def test_token_usage_reads_cache_writes_where_the_provider_reports_them() -> None:
    usage = wire.TokenUsage.from_step_usage(
        {"inputTokens": 900, "inputTokenDetails": {"cacheReadTokens": 0, "cacheWriteTokens": 850}, "outputTokens": 4}
    )
    assert (usage.cachedInputTokens, usage.cacheWriteTokens) == (0, 850)


def test_messages_are_a_string_when_rich_and_blocks_when_raw() -> None:
    rich = wire.ThreadMessage.model_validate(
        {"id": "m1", "role": "assistant", "createdAt": "2026-12-02T06:35:21.273Z", "content": "Done.", "runId": "run_1"}
    )
    raw = wire.ThreadMessage.model_validate(
        {
            "id": "m1",
            "role": "assistant",
            "type": "llm",
            "createdAt": "2026-12-02T06:35:21.273Z",
            "content": [
                {"type": "text", "text": "Done."},
                {
                    "type": "tool-call",
                    "toolCallId": "c",
                    "toolName": "workflows",
                    "input": {},
                    "state": "resolved",
                    "output": {},
                },
            ],
        }
    )
    assert (rich.text, raw.text) == ("Done.", "Done.")
    assert rich.blocks == [{"type": "text", "text": "Done."}]
    assert [b["type"] for b in raw.blocks] == ["text", "tool-call"]


@pytest.mark.parametrize(
    ("payload", "text", "status", "provider"),
    [
        (
            {"content": "Incorrect API key", "statusCode": 401, "technicalDetails": "{...}"},
            "Incorrect API key",
            401,
            True,
        ),
        (
            {"content": "Failed after 3 attempts. Last error: AI_APICallError: bad port"},
            "Failed after 3 attempts. Last error: AI_APICallError: bad port",
            None,
            True,
        ),
        ({"content": "No credits left", "code": "quota_exhausted"}, "No credits left", None, True),
        ({"content": "The tool failed"}, "The tool failed", None, False),
        ({"message": "an older instance's words", "status": 503}, "an older instance's words", 503, True),
    ],
)
def test_error_payloads_read_content_and_tell_a_provider_failure(
    payload: dict[str, Any], text: str, status: int | None, provider: bool
) -> None:
    error = wire.ErrorPayload.model_validate(payload)
    assert (error.text, error.status, error.from_model_provider) == (text, status, provider)


def test_a_setup_card_carries_the_node_object_and_lists_of_issues_and_no_input_type() -> None:
    card = wire.ConfirmationRequest.model_validate(
        {
            "requestId": "r1",
            "toolCallId": "c1",
            "toolName": "workflows",
            "args": {},
            "severity": "info",
            "message": "Configure credentials for your workflow",
            "setupRequests": [
                {
                    "node": {
                        "name": "Post to Slack",
                        "type": "n8n-nodes-base.slack",
                        "typeVersion": 2.2,
                        "parameters": {"channel": ""},
                        "position": [440, 0],
                        "id": "n1",
                    },
                    "credentialType": "slackApi",
                    "existingCredentials": [{"id": "c9", "name": "Slack"}],
                    "isTrigger": False,
                    "parameterIssues": {"channel": ['Parameter "channel" is required.', "It must start with #."]},
                }
            ],
            "workflowId": "wf1",
        }
    )
    (setup,) = card.setupRequests
    assert (card.kind, setup.node_name, setup.node_type) == ("setup", "Post to Slack", "n8n-nodes-base.slack")
    assert setup.issue_text("channel") == 'Parameter "channel" is required.; It must start with #.'
    assert not setup.credential_only


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        (
            {"credentialRequests": [{"credentialType": "slackApi", "reason": "r", "existingCredentials": []}]},
            "credentials",
        ),
        ({"inputType": "questions", "questions": [{"id": "q", "question": "?", "type": "text"}]}, "questions"),
        ({"inputType": "plan-review", "planItems": []}, "plan-review"),
        ({"domainAccess": {"url": "https://x.io", "host": "x.io"}}, "domain-access"),
        ({"message": "Delete the workflow?"}, "approval"),  # n8n's default input type
    ],
)
def test_the_widget_kind_comes_from_the_payload_when_n8n_sends_no_input_type(
    payload: dict[str, Any], kind: str
) -> None:
    assert wire.ConfirmationRequest.model_validate({"requestId": "r", **payload}).kind == kind


def test_mocked_execution_outputs_are_n8n_items_and_a_framework_issue_is_found() -> None:
    result = wire.ExecutionResult.model_validate(
        {
            "executionId": "1",
            "success": True,
            "nodeResults": {
                "Start": {
                    "outputs": {"main": [[{"json": {"n": 1}, "pairedItem": {"item": 0}}], [{"json": {"n": 2}}]]},
                    "outputCount": 2,
                    "iterationCount": 1,
                    "interceptedRequests": [],
                    "executionMode": "real",
                    "startTime": 1796196364860,
                }
            },
            "errors": [],
        }
    )
    assert result.nodeResults["Start"].items == [{"n": 1}, {"n": 2}]
    assert result.framework_issue is None
    issue = "FRAMEWORK ISSUE: Phase 1.5 pin data generation failed: the mock model has no key"
    failed = wire.ExecutionResult.model_validate({"executionId": "x", "success": False, "errors": [issue]})
    assert failed.framework_issue == issue


def test_mocked_credentials_are_n8ns_objects() -> None:
    # n8n 2.41 (eval-mocked-credentials-helper): {nodeName, credentialType, credentialId}, the id absent
    # when the node referenced no id; a list of strings would refuse the whole execution result.
    result = wire.ExecutionResult.model_validate(
        {
            "executionId": "9",
            "success": True,
            "mockedCredentials": [
                {"nodeName": "Slack", "credentialType": "slackApi"},
                {"nodeName": "Gmail", "credentialType": "gmailOAuth2", "credentialId": "c-7"},
            ],
            "rewrittenCredentials": [],
        }
    )
    assert [c.describe() for c in result.mockedCredentials] == [
        "Slack (slackApi, none attached)",
        "Gmail (gmailOAuth2, id c-7)",
    ]


def test_a_workflow_takes_its_folder_and_project_from_n8ns_objects() -> None:
    workflow = wire.Workflow.model_validate(
        {
            "id": "wf1",
            "name": "Digest",
            "isArchived": True,
            "parentFolder": {"id": "f1", "name": "Ops", "parentFolderId": None},
            "homeProject": {"id": "p1", "type": "personal", "name": "Owner"},
        }
    )
    assert (workflow.parentFolderId, workflow.projectId, workflow.isArchived) == ("f1", "p1", True)


def test_events_carry_agent_and_response_ids_at_the_top() -> None:
    event = wire.Event.model_validate(
        {
            "type": "text-delta",
            "runId": "run_1",
            "agentId": "orchestrator-run_1",
            "responseId": "run_1:step:1",
            "payload": {"text": "Hi"},
            "ts": 1796193321214,
        }
    )
    assert (event.id, event.agentId, event.responseId) == (None, "orchestrator-run_1", "run_1:step:1")
    assert "text-delta" in wire.EPHEMERAL_EVENT_TYPES


def test_turn_text_replaces_what_a_block_or_a_resync_delta_covers() -> None:
    text = TurnText()
    first, second = ("r", "a", "s1"), ("r", "a", "s2")
    text.delta(first, "Look")
    text.delta(first, "ing up")
    text.block(first, "Looking up the rota.")  # the whole response, replacing its deltas
    text.delta(second, "Posting")
    text.reconnected()
    text.delta(second, "Posting to #ops")  # after a resume: the open response's text so far
    text.delta(second, ".")
    assert text.text == "Looking up the rota.\n\nPosting to #ops."
    joined = TurnText()
    joined.delta(first, "One. ")
    joined.delta(second, "Two.")
    assert joined.text == "One. Two."  # already spaced: nothing added


def test_a_journal_from_before_n8ns_shapes_still_reads() -> None:
    """Runs recorded before threadcase followed n8n 2.41 (outputs as bare branches, an ISO start time)
    must still load, so an old baseline can be compared and regraded."""
    old = wire.NodeResult.model_validate(
        {"outputs": [[{"ok": True}], [{"error": "x"}]], "outputCount": 2, "startTime": "2026-11-29T13:52:00.423Z"}
    )
    assert old.items == [{"ok": True}, {"error": "x"}]
    assert old.startTime == 1795960320423
