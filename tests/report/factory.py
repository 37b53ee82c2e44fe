"""Hand-made case results for report and statistics tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from threadcase.records import (
    Artifacts,
    RunRecord,
    ToolCallRecord,
    Turn,
    WidgetRecord,
)
from threadcase.verdicts import CaseResult, ErrorInfo, PremiseResult, UnitStatus, UnitVerdict, case_status
from threadcase.wire import TokenUsage, Workflow, WorkflowNode

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def verdict(unit: str, status: UnitStatus, reason: str = "because", *, kind: str = "check") -> UnitVerdict:
    attribution = None
    if status == "fail":
        attribution = "builder_issue"
    elif status == "not_judged":
        attribution = "framework_issue"
    return UnitVerdict.model_validate(
        {
            "unit": unit,
            "kind": kind,
            "label": f"label of {unit}",
            "status": status,
            "reason": reason,
            "attribution": attribution,
        }
    )


def record(slug: str = "case-a", iteration: int = 0) -> RunRecord:
    return RunRecord(
        case_slug=slug,
        iteration=iteration,
        thread_id=f"thread-{slug}-{iteration}",
        mode="multi-turn",
        turns=[
            Turn(index=0, role="user", text="Earlier: build a digest", seeded=True, sent_by="seed"),
            Turn(index=1, role="assistant", text="Built it.", seeded=True),
            Turn(
                index=2,
                role="user",
                text="Post to <script>alert(1)</script> #general",
                sent_by="opener",
                run_ids=["run-1"],
            ),
            Turn(
                index=3,
                role="assistant",
                text="Which channel?",
                run_ids=["run-1"],
                tool_calls=[
                    ToolCallRecord(
                        tool_call_id="tc1", tool_name="build-workflow", args={"a": 1}, result={"workflowId": "wf1"}
                    )
                ],
                widgets=[
                    WidgetRecord(
                        request_id="r1",
                        input_type="questions",
                        request={"q": "channel?"},
                        answer={"kind": "questions", "answers": []},
                        answered_by="scripted",
                        outcome="answered",
                    )
                ],
                finish_status="completed",
            ),
        ],
        usage={"run-1": [TokenUsage(inputTokens=1200, outputTokens=80, cachedInputTokens=1000)]},
        artifacts=Artifacts(
            workflows=[
                Workflow(
                    id="wf1",
                    name="Digest",
                    nodes=[
                        WorkflowNode(name="Schedule", type="n8n-nodes-base.scheduleTrigger"),
                        WorkflowNode(name="Slack", type="n8n-nodes-base.slack"),
                    ],
                )
            ]
        ),
        proxy_stats={"decision:answer_questions": 1},
        follow_ups_sent=1,
    )


def result(
    slug: str = "case-a",
    iteration: int = 0,
    statuses: tuple[UnitStatus, ...] = ("pass",),
    *,
    error: ErrorInfo | None = None,
    seconds: float = 2.0,
    with_record: bool = True,
) -> CaseResult:
    verdicts = [verdict(f"check:mustContain#{i}", s) for i, s in enumerate(statuses)]
    start = T0 + timedelta(seconds=10 * iteration)
    return CaseResult(
        run_id="run-test",
        case_slug=slug,
        case_file=f"cases/{slug}.json",
        iteration=iteration,
        started_at=start,
        finished_at=start + timedelta(seconds=seconds),
        seconds=seconds,
        status=case_status(verdicts, error),
        verdicts=verdicts,
        premises=[PremiseResult(name="seed-restored", held=True, reason="seed restored")],
        record=record(slug, iteration) if with_record else None,
        error=error,
    )
