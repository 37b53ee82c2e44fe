"""Transcript rendering: golden files (set THREADCASE_UPDATE_GOLDEN=1 to rewrite them after a deliberate change)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.grading.records import clean_record, compacted_memory, questions_widget
from threadcase.records import RunRecord, ToolCallRecord, Turn, WidgetRecord
from threadcase.render import (
    conversation_metrics,
    group_turns,
    render_memory_block,
    render_token_block,
    render_transcript,
    turn_tokens,
)
from threadcase.wire import ObservationCursor, ThreadMemory

GOLDEN = Path(__file__).parent / "golden"


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("THREADCASE_UPDATE_GOLDEN") == "1":
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8"), f"rendering changed; diff against {path}"


def _widget_zoo() -> RunRecord:
    """Every widget kind the demo agent raises, with each outcome the proxy can produce."""
    plan = WidgetRecord(
        request_id="req-plan",
        input_type="plan-review",
        request={"plan": [{"title": "Schedule trigger", "detail": "9am"}, {"title": "Slack post"}]},
        answer={"kind": "approval", "approved": False, "userInput": "Use #alerts, not #general."},
        outcome="rejected",
    )
    setup = WidgetRecord(
        request_id="req-setup",
        input_type="setup",
        request={
            "setupRequests": [
                {
                    "node": {"name": "Post to Slack"},
                    "credentialType": "slackApi",
                    "parameterIssues": {"channel": ["missing"]},
                },
                {"node": {"name": "Notion"}, "credentialType": "notionApi"},
            ]
        },
        answer={
            "kind": "setupWorkflowApply",
            "nodeParameters": {"Post to Slack": {"channel": "#alerts"}},
            "skippedNodes": ["Notion"],
        },
        outcome="filled",
    )
    cards = WidgetRecord(
        request_id="req-cred",
        input_type="credentials",
        request={"credentialRequests": [{"credentialType": "slackApi", "reason": "to post messages"}]},
        answer={"kind": "credentialSelection", "credentials": {}},
        outcome="deferred",
    )
    resume = WidgetRecord(
        request_id="req-ok",
        input_type="approval",
        request={"toolCallId": "tc-del", "message": "Delete the old workflow?"},
        answer={"kind": "approval", "approved": True},
        outcome="approved",
    )
    skipped = questions_widget("req-q2", "What time zone?", None)
    turns = [
        Turn(index=0, role="user", text="Seeded: earlier ask.", seeded=True, sent_by="seed"),
        Turn(index=1, role="assistant", text="Seeded reply.", seeded=True),
        Turn(index=2, role="user", text="Now rebuild it with Notion too. " + "x" * 9000, sent_by="opener"),
        Turn(
            index=3,
            role="assistant",
            text="Here is the plan.",
            run_ids=["run-x"],
            tool_calls=[
                ToolCallRecord(tool_call_id="tc-del", tool_name="delete-workflow", args={"workflowId": "wf-0"}),
                ToolCallRecord(
                    tool_call_id="tc-b", tool_name="build-workflow", args={"big": "y" * 3000}, error="node type unknown"
                ),
            ],
            widgets=[plan, setup, cards, resume, skipped],
            finish_status="timeout",
            errors=["turn budget of 900 s exceeded"],
        ),
    ]
    return RunRecord(case_slug="zoo", thread_id="t", mode="multi-turn", turns=turns, ended_by="turn-timeout")


def test_clean_run_renders_as_golden() -> None:
    _golden("clean.transcript.txt", render_transcript(clean_record()))


def test_every_widget_kind_renders_as_golden() -> None:
    _golden("widgets.transcript.txt", render_transcript(_widget_zoo()))


def test_token_block_and_metrics_as_golden() -> None:
    record = clean_record()
    text = render_token_block(record) + "\n\n" + conversation_metrics(record).render()
    _golden("clean.tokens-metrics.txt", text)


def test_turn_header_carries_run_debug_numbers_and_omits_them_without_a_match() -> None:
    text = render_transcript(clean_record())
    assert "### Turn 1 (2 steps, 8500 tokens in [3000 cached], 420 tokens out)" in text
    without = render_transcript(clean_record(usage={}))
    assert "### Turn 1\nUser:" in without
    assert render_token_block(clean_record(usage={})) == "(no run debug captured)"


def test_a_run_named_by_two_answers_of_one_turn_is_counted_once() -> None:
    """The header summed a run's steps once per answer naming it; the token checks read the same sum."""
    record = clean_record()
    turns = [*record.turns[:2], Turn(index=9, role="assistant", text="Also done.", run_ids=["run-1"])]
    twice = record.model_copy(update={"turns": turns})
    assert "### Turn 1 (2 steps, 8500 tokens in [3000 cached], 420 tokens out)" in render_transcript(twice)


def test_turn_tokens_is_complete_only_when_run_debug_gave_every_run_of_the_turn() -> None:
    record = clean_record()
    record.turns[1].run_ids.append("run-lost")
    first, second = (turn_tokens(group, record) for group in group_turns(record))
    assert (first.runs, first.runs_read, first.steps, first.tokens_in, first.tokens_out) == (2, 1, 2, 8500, 420)
    assert not first.complete
    assert second.complete
    assert "### Turn 1 (2 steps, 8500 tokens in" in render_transcript(record)  # the header shows what it has
    record.usage["run-2"] = []
    assert not turn_tokens(group_turns(record)[1], record).complete


def test_token_block_totals() -> None:
    block = render_token_block(clean_record())
    assert "Total: 13700 tokens in / 500 tokens out across 3 LLM steps, 2 runs" in block
    assert "Cache: 7400 tokens read / 3000 tokens written" in block
    assert block.splitlines()[2].startswith("Opening step: 4000 input tokens on the first LLM call")


def test_long_text_and_tool_payloads_are_capped() -> None:
    text = render_transcript(_widget_zoo())
    assert "[1032 more chars]" in text  # 9032-char user text capped at 8000
    assert "more chars]" in next(line for line in text.splitlines() if line.startswith("Tool: build-workflow"))


def test_metrics_count_confirmations_errors_replans_and_repeats() -> None:
    metrics = conversation_metrics(_widget_zoo())
    live = metrics.per_turn[1]
    assert live.confirmation_asked_total == 5
    assert live.confirmation_asked_by_kind == {
        "plan-review": 1,
        "setup": 1,
        "credentials": 1,
        "approval": 1,
        "questions": 1,
    }
    assert live.tool_error_count == 1
    assert live.replan_after_error_count == 0  # the failing call was the last one
    assert live.run_finish_status == "timeout"
    assert metrics.per_turn[0].seeded
    assert not metrics.reached_run_finish_cleanly
    dumped = json.loads(metrics.render())
    assert dumped["perTurn"][1]["confirmationAskedTotal"] == 5

    repeat = clean_record()
    repeat.turns[3].widgets.append(questions_widget("req-again", "Which  Slack channel should I post to", "#alerts"))
    assert conversation_metrics(repeat).total_repeat_questions == 1


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        (None, "(observational memory has not compacted this conversation)"),
        (ThreadMemory(), "(observational memory has not compacted this conversation)"),
        (
            ThreadMemory(cursor=ObservationCursor(lastObservedMessageId="m")),
            "(compacted, but no observations were kept)",
        ),
        (compacted_memory(), "- [CRITICAL] User wants the digest in #alerts at 9am.\n- [INFO] Workflow wf-1 built."),
    ],
)
def test_memory_block(memory: ThreadMemory | None, expected: str) -> None:
    assert render_memory_block(memory) == expected


def test_widgets_render_in_their_place_among_tool_calls() -> None:
    """A question asked before the build must read "asked, then built", or "asks before building" is misjudged."""
    record = clean_record()
    record.turns[1].widgets[0].after_tool_calls = 0
    lines = render_transcript(record).splitlines()
    asked = next(i for i, line in enumerate(lines) if line.startswith("Asked user:"))
    built = next(i for i, line in enumerate(lines) if line.startswith("Tool: build-workflow"))
    assert asked < built
    record.turns[1].widgets[0].after_tool_calls = None  # unknown: after the tool calls, as before
    lines = render_transcript(record).splitlines()
    asked = next(i for i, line in enumerate(lines) if line.startswith("Asked user:"))
    built = next(i for i, line in enumerate(lines) if line.startswith("Tool: build-workflow"))
    assert asked > built


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", ["declined-clean", "secret-caves", "two-changes-drops", "compacted"])
def test_recorded_demo_runs_render_as_golden(name: str) -> None:
    """Records captured from real demo-instance conversations (converse + scripted proxy), rendered."""
    record = RunRecord.model_validate_json((FIXTURES / f"demo-{name}.record.json").read_text(encoding="utf-8"))
    text = "\n\n".join(
        [
            render_transcript(record),
            "## Tokens\n" + render_token_block(record),
            "## Metrics\n" + conversation_metrics(record).render(),
            "## Memory\n" + render_memory_block(record.memory),
        ]
    )
    _golden(f"demo-{name}.txt", text)
