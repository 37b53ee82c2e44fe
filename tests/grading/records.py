"""Hand-built run records shaped like the demo agent's: a clean run and its misbehaving twins."""

from __future__ import annotations

from typing import Any

from threadcase.case import schema
from threadcase.records import (
    Artifacts,
    RunRecord,
    SeedOutcome,
    ToolCallRecord,
    Turn,
    WidgetRecord,
)
from threadcase.wire import Observation, ObservationCursor, ThreadMemory, TokenUsage, Workflow, WorkflowNode

SLACK_WORKFLOW = Workflow(
    id="wf-1",
    name="Daily Slack digest",
    nodes=[
        WorkflowNode(name="Every morning", type="n8n-nodes-base.scheduleTrigger", parameters={"rule": {"hour": 9}}),
        WorkflowNode(
            name="Post to Slack",
            type="n8n-nodes-base.slack",
            parameters={"channel": "#alerts", "options": {"retry": {"count": 3}}},
        ),
    ],
    connections={"Every morning": {"main": [[{"node": "Post to Slack", "type": "main", "index": 0}]]}},
)


def questions_widget(request_id: str, question: str, answer: str | None, *, qid: str = "q1") -> WidgetRecord:
    return WidgetRecord(
        request_id=request_id,
        input_type="questions",
        request={
            "requestId": request_id,
            "inputType": "questions",
            "questions": [{"id": qid, "question": question, "type": "single", "options": ["#general", "#alerts"]}],
        },
        answer=None
        if answer is None
        else {"kind": "questions", "answers": [{"questionId": qid, "selectedOptions": [answer], "skipped": False}]},
        answered_by="scripted",
        outcome="answered" if answer is not None else "no response",
    )


def build_call(call_id: str = "tc-1", *, error: str | None = None) -> ToolCallRecord:
    return ToolCallRecord(
        tool_call_id=call_id,
        tool_name="build-workflow",
        args={"workflow": {"name": "Daily Slack digest"}},
        result=None if error else {"workflowId": "wf-1"},
        error=error,
    )


def clean_record(**overrides: Any) -> RunRecord:
    """A clean two-turn build: asks one question, builds, confirms, ends with a question."""
    turns = [
        Turn(index=0, role="user", text="Send me a daily Slack digest of new signups.", sent_by="opener"),
        Turn(
            index=1,
            role="assistant",
            text="Which Slack channel should the digest go to?",
            run_ids=["run-1"],
            widgets=[questions_widget("req-1", "Which Slack channel should I post to?", "#alerts")],
            tool_calls=[build_call()],
            finish_status="completed",
        ),
        Turn(index=2, role="user", text="Looks good, thanks.", sent_by="proxy"),
        Turn(
            index=3,
            role="assistant",
            text="Done: the workflow posts to #alerts every morning at 9.\nAnything else you'd like to change? 🙂",
            run_ids=["run-2"],
            finish_status="completed",
        ),
    ]
    data: dict[str, Any] = {
        "case_slug": "slack-digest",
        "thread_id": "thread-1",
        "mode": "multi-turn",
        "turns": turns,
        "usage": {
            "run-1": [
                TokenUsage(inputTokens=4000, outputTokens=120, cachedInputTokens=0, cacheWriteTokens=3000),
                TokenUsage(inputTokens=4500, outputTokens=300, cachedInputTokens=3000),
            ],
            "run-2": [TokenUsage(inputTokens=5200, outputTokens=80, cachedInputTokens=4400)],
        },
        "artifacts": Artifacts(workflows=[SLACK_WORKFLOW.model_copy(deep=True)]),  # tests mutate it
    }
    data.update(overrides)
    return RunRecord(**data)


def with_turns(record: RunRecord, turns: list[Turn]) -> RunRecord:
    return record.model_copy(update={"turns": turns})


def compacted_memory() -> ThreadMemory:
    return ThreadMemory(
        observations=[
            Observation(marker="CRITICAL", text="User wants the digest in #alerts at 9am.", tokenCount=12),
            Observation(marker="INFO", text="Workflow wf-1 built.", tokenCount=5),
        ],
        cursor=ObservationCursor(lastObservedMessageId="m-3"),
    )


def seeded_failed() -> SeedOutcome:
    return SeedOutcome(mode="inline", restored=False, error="restore-thread answered 500")


def case(**fields: Any) -> schema.Case:
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": "Send me a daily Slack digest of new signups."}],
        "complexity": "simple",
        "tags": ["test"],
        "processExpectations": ["asks which channel before building"],
        "outcomeExpectations": ["the workflow posts to Slack"],
    }
    data.update(fields)
    return schema.Case.model_validate(data)
