"""The conversation loop against the real demo server over loopback."""

from __future__ import annotations

import re
import time
from typing import Any

import anyio
import pytest

from tests.conversation.helpers import FAST, asking_agent, drive, echo_agent, make_case, reasking_agent, stalling_agent
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.errors import InstanceError
from threadcase.harness.conversation import Budgets
from threadcase.instance import InstanceClient

pytestmark = pytest.mark.anyio


async def test_multi_turn_script_is_sent_in_order_and_notes_never_spoken() -> None:
    case = make_case(
        [
            "Build a flow that posts to Slack",
            "Change the channel to #ops [sound a little impatient]",
            "[only say thanks at the end]",
            "Rename it to Ops digest",
        ]
    )
    out = await drive(case, agent=echo_agent)
    record = out.record
    assert out.user_texts == [
        "Build a flow that posts to Slack",
        "Change the channel to #ops",
        "Rename it to Ops digest",
    ]
    assert [t.role for t in record.turns] == ["user", "assistant"] * 3
    assert [t.sent_by for t in record.turns if t.role == "user"] == ["opener", "script", "script"]
    assert record.ended_by == "script-exhausted"
    assert record.follow_ups_sent == 2
    assert all(t.finish_status == "completed" for t in record.turns if t.role == "assistant")
    assert record.turns[1].text == "Applied: Build a flow that posts to Slack"
    assert len(record.artifacts.workflows) == 1
    assert record.usage  # run debug collected per run
    for text in out.user_texts:
        assert "[" not in text
        assert "impatient" not in text
        assert "thanks" not in text


async def test_declined_value_is_skipped_not_invented() -> None:
    case = make_case(["Post a Slack message every morning", "[decline if asked which channel] Thanks, that's all"])
    out = await drive(case, agent=asking_agent)
    widget = out.record.turns[1].widgets[0]
    assert widget.answer == {
        "kind": "questions",
        "answers": [{"questionId": "channel", "selectedOptions": [], "skipped": True}],
    }
    assert widget.answered_by == "scripted"
    assert widget.after_tool_calls == 0  # asked before anything was built
    workflow = out.record.artifacts.workflows[0]
    assert workflow.nodes[0].parameters["channel"] == "<CHANNEL: not given>"
    assert not any(re.search(r"#\w+", t) for t in out.user_texts)


async def test_message_budget_stops_a_chatty_case() -> None:
    case = make_case([f"Change number {i}" for i in range(8)], messageBudget=3)
    out = await drive(case, agent=echo_agent)
    assert out.record.follow_ups_sent == 3
    assert out.record.ended_by == "budget"
    assert any("message budget reached" in w for w in out.record.warnings)
    assert len(out.user_texts) == 4


async def test_stalled_run_is_cancelled() -> None:
    case = make_case(["Build it", "And then this"])
    budgets = Budgets(turn_seconds=20, inactivity_seconds=0.5, settle_seconds=0.01, status_poll_seconds=0.02)
    out = await drive(case, agent=stalling_agent, budgets=budgets)
    assert out.record.ended_by == "stalled"
    assert out.record.turns[-1].finish_status == "stalled"
    assert any("stalled" in w for w in out.record.warnings)
    assert out.record.follow_ups_sent == 0
    # The cancel reached the server: the thread is no longer running the stalled turn.
    assert out.status is not None
    assert not out.status.hasActiveRun


async def test_single_prompt_turn_timeout_is_build_failed() -> None:
    case = make_case(["Build it"])
    budgets = Budgets(turn_seconds=0.6, inactivity_seconds=5, settle_seconds=0.01)
    out = await drive(case, agent=stalling_agent, budgets=budgets)
    assert out.record.mode == "single-prompt"
    assert out.record.ended_by == "turn-timeout"
    assert "BUILD FAILED: Run timed out with no scored result" in out.record.warnings


async def test_single_prompt_auto_approves_questions_with_empty_answers() -> None:
    out = await drive(make_case(["Post to Slack every morning"]), agent=asking_agent, budgets=FAST)
    widget = out.record.turns[1].widgets[0]
    assert widget.answered_by == "auto-approve"
    assert widget.answer == {"kind": "questions", "answers": []}
    assert out.record.ended_by == "single-prompt"
    assert out.record.proxy_stats["auto-approve"] == 1


async def test_declining_holds_firm_when_asked_again() -> None:
    case = make_case(["Post to Slack [if asked for the channel, decline, every time]", "Please go ahead", "Go on"])
    out = await drive(case, agent=reasking_agent)
    asked = [w for t in out.record.live_turns for w in t.widgets]
    assert len(asked) == 3
    assert all(
        w.answer
        == {"kind": "questions", "answers": [{"questionId": "channel", "selectedOptions": [], "skipped": True}]}
        for w in asked
    )
    assert all(t.text == "Still no channel." for t in out.record.live_turns if t.role == "assistant")


async def test_an_answer_the_instance_refused_ends_the_conversation_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a widget answer refused after every retry left the agent waiting for it, and the
    conversation waited out the whole inactivity budget (240 s by default) before giving up."""

    async def refused(self: InstanceClient, request_id: str, body: Any) -> None:
        raise InstanceError("instance refused the call", method="POST", path=f"/confirm/{request_id}", status=503)

    monkeypatch.setattr(InstanceClient, "confirm", refused)
    case = make_case(["Post a Slack message every morning", "[decline if asked which channel] Thanks, that's all"])
    started = time.perf_counter()
    out = await drive(case, agent=asking_agent)  # FAST budgets: 10 s of inactivity before "stalled"
    assert time.perf_counter() - started < 5
    record = out.record
    assert record.ended_by == "error"
    assert record.turns[1].finish_status == "cancelled"
    assert record.turns[1].widgets[0].outcome == "no response"
    assert any("confirm" in failure and "503" in failure for failure in record.instance_failures)
    assert len(out.user_texts) == 1  # no follow-up went to an agent still waiting for its answer
    assert out.status is not None
    assert out.status.settled  # the waiting run was cancelled


async def test_an_answer_to_a_widget_that_is_gone_lets_the_turn_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 409 (the widget is no longer pending: its run ended) leaves nobody waiting for the answer; the
    run's own events go on, so the turn is not cut short (the failure is still on record)."""
    answered = anyio.Event()

    async def gone(self: InstanceClient, request_id: str, body: Any) -> None:
        answered.set()
        raise InstanceError("instance refused the call", method="POST", path=f"/confirm/{request_id}", status=409)

    async def agent_that_moves_on(turn: TurnInput, ctx: AgentContext) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ctx.ask, {"inputType": "questions", "questions": [{"id": "q", "question": "Which?"}]})
            await answered.wait()
            tg.cancel_scope.cancel()  # the widget times out on the instance's side
        await ctx.say("Never mind, I went with the default.")

    monkeypatch.setattr(InstanceClient, "confirm", gone)
    case = make_case(["Post a Slack message every morning", "Thanks, that's all"])
    out = await drive(case, agent=agent_that_moves_on)
    record = out.record
    assert record.turns[1].finish_status == "completed"
    assert "went with the default" in record.turns[1].text
    assert record.ended_by != "error"
    assert any("409" in failure for failure in record.instance_failures)
