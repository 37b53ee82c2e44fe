"""Hand-offs (attach, replay opening, headers), seeded history first, and the time budgets."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.conversation.helpers import drive, echo_agent, introspecting_agent, make_case
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.harness.conversation import Budgets

pytestmark = pytest.mark.anyio

WF = "wfDailyDigest0001"


def _seed(**extra: Any) -> dict[str, Any]:
    return {
        "mode": "inline",
        "messages": [
            {"role": "user", "text": "Build me a daily digest"},
            {"role": "assistant", "text": "Done: Daily digest is ready."},
        ],
        "workflows": [{"id": WF, "name": "Daily digest", "nodes": [], "connections": {}}],
        **extra,
    }


async def test_attached_workflow_is_sent_and_recorded_with_its_run_name() -> None:
    case = make_case(
        [{"role": "user", "text": "Make it run at 8 instead", "attach": {"workflow": WF}}, "Thanks"], seed=_seed()
    )
    out = await drive(case, agent=introspecting_agent)
    record = out.record
    seeded = [t for t in record.turns if t.seeded]
    assert [t.role for t in seeded] == ["user", "assistant"]
    assert record.turns[: len(seeded)] == seeded  # seeded turns first
    opener = record.live_turns[0]
    name = opener.text.split("\n")[0].removeprefix("[attached workflow: ").removesuffix("]")
    assert name.startswith("Daily digest")
    assert opener.text.endswith("\nMake it run at 8 instead")
    reply = record.live_turns[1].text
    assert f"attached=workflow:{name}" in reply
    assert "context=none" in reply
    assert "history=2" in reply
    # The agent received the plain message, never the recording prefix.
    assert out.user_texts[-2:] == ["Make it run at 8 instead", "Thanks"]


async def test_setup_panel_execute_sends_the_handoff_context() -> None:
    case = make_case(
        [{"role": "user", "text": "", "attach": {"workflow": WF, "source": "setup-panel-execute"}}, "ok"],
        seed=_seed(),
    )
    out = await drive(case, agent=introspecting_agent)
    opener = out.record.live_turns[0]
    assert opener.text.startswith("[attached workflow: Daily digest")
    assert opener.text.endswith("[The user clicked Execute in the setup panel.]")
    assert "context=setup-panel-execute" in out.record.live_turns[1].text


async def test_live_opening_replaces_the_authored_opener_and_headers_reach_the_server() -> None:
    case = make_case(["authored opener", "and a follow-up"])
    out = await drive(
        case,
        agent=introspecting_agent,
        live_opening="the production user's last message",
        headers={"X-Demo-Misbehave": "drops-change"},
    )
    assert out.user_texts == ["the production user's last message", "and a follow-up"]
    assert out.record.live_turns[0].sent_by == "replay"
    assert "misbehave=drops-change" in out.record.live_turns[1].text


async def slow_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Keeps talking (so it never looks stalled) for 0.4 s per message."""
    for _ in range(4):
        await ctx.say(".")
        await anyio.sleep(0.1)


async def test_conversation_budget_leaves_no_room_for_another_follow_up() -> None:
    # Turn budget 1 s, conversation 2 s; each run takes ~0.4 s, so after about four runs less than a
    # quarter of a turn budget is left and no fifth message is sent.
    budgets = Budgets(turn_seconds=1.0, inactivity_seconds=5, settle_seconds=0.01, status_poll_seconds=0.02)
    case = make_case([f"message {i}" for i in range(8)], messageBudget=8)
    out = await drive(case, agent=slow_agent, budgets=budgets)
    record = out.record
    assert record.ended_by == "conversation-timeout"
    assert 1 <= record.follow_ups_sent <= 4  # ~4 at idle; fewer on a loaded machine, never more
    assert any("conversation budget" in w for w in record.warnings)


async def test_complex_cases_get_a_longer_turn_budget() -> None:
    budgets = Budgets(turn_seconds=0.3, inactivity_seconds=5, settle_seconds=0.01, status_poll_seconds=0.02)
    simple = await drive(make_case(["go", "again"]), agent=slow_agent, budgets=budgets)
    assert simple.record.ended_by == "turn-timeout"
    assert simple.record.live_turns[1].finish_status == "timeout"
    complex_case = make_case(["go", "again"]).model_copy(update={"complexity": "complex"})
    longer = Budgets(turn_seconds=0.3, complex_factor=4.0, inactivity_seconds=5, settle_seconds=0.01)
    done = await drive(complex_case, agent=slow_agent, budgets=longer)
    assert done.record.live_turns[1].finish_status == "completed"


async def test_echo_agent_records_usage_per_run() -> None:
    out = await drive(make_case(["one", "two"]), agent=echo_agent)
    run_ids = [rid for t in out.record.live_turns if t.role == "assistant" for rid in t.run_ids]
    assert set(run_ids) <= set(out.record.usage)
    assert all(out.record.usage[rid] for rid in run_ids)


async def test_replay_live_message_goes_ahead_of_the_authored_turns() -> None:
    case = make_case(
        ["Now also post it to #ops", "[be brief]"], seed={"mode": "replay", "threadId": "th-1"}, datasets=["seeded"]
    )
    assert case.mode == "multi-turn"
    out = await drive(case, agent=introspecting_agent, live_opening="the production user's last message")
    assert out.user_texts == ["the production user's last message", "Now also post it to #ops"]
    assert [t.sent_by for t in out.record.live_turns if t.role == "user"] == ["replay", "script"]


async def test_replay_live_message_is_sent_verbatim_brackets_included() -> None:
    """Regression: the live message went through director-note splitting, so a real user's [..] vanished."""
    case = make_case(["Thanks"], seed={"mode": "replay", "threadId": "th-1"}, datasets=["seeded"])
    live = "why does [seed 1a2b3c4d] Digest fail? see [attached] log"
    out = await drive(case, agent=introspecting_agent, live_opening=live)
    assert out.user_texts[0] == live
    assert out.record.live_turns[0].text == live
