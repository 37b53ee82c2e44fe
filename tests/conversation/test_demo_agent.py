"""Acceptance against the demo instance's own rule-based builder agent (no test agent)."""

from __future__ import annotations

import re

import pytest

from tests.conversation.helpers import drive, make_case
from threadcase import wire
from threadcase.demo_instance import DemoSettings
from threadcase.instance import InstanceClient

pytestmark = pytest.mark.anyio

CHANGES = [
    "change the channel to #sales",
    "run it every weekday at 8",
    "only if amount > 100",
    "also send an email to boss@acme.com",
    "add error handling: continue on fail and alert #ops",
    "change the recipient to cfo@acme.com",
    "change the threshold to 200",
    'rename it to "Sales digest"',
    "move it into the Reports folder",
]
ONE_AT_A_TIME = "send the changes one at a time, each only after the previous one is applied"


async def test_nine_changes_sent_one_at_a_time_each_after_the_previous_was_applied() -> None:
    listing = " ".join(f"{i + 1}. {c}" for i, c in enumerate(CHANGES))
    case = make_case(
        [
            "Every weekday at 9, post the sales summary to #general on Slack",
            f"Please make these changes: {listing} [{ONE_AT_A_TIME}]",
        ],
        messageBudget=9,
    )
    out = await drive(case)
    record = out.record
    # The server received exactly the opener and then each change alone, in order.
    assert out.user_texts == ["Every weekday at 9, post the sales summary to #general on Slack", *CHANGES]
    turns = record.live_turns
    assert [t.role for t in turns] == ["user", "assistant"] * 10
    for k, change in enumerate(CHANGES):
        user, reply = turns[2 + 2 * k], turns[3 + 2 * k]
        previous = turns[1 + 2 * k]
        assert user.text == change
        # Sent only after the previous run finished, and that run applied its change in place.
        assert previous.finish_status == "completed"
        assert previous.ended_at is not None
        assert user.started_at is not None
        assert user.started_at >= previous.ended_at
        assert reply.text.startswith("Updated"), reply.text
        edits = [c for c in reply.tool_calls if c.tool_name in ("build-workflow", "rename-workflow", "move-workflow")]
        assert edits, f"change {k + 1} was not applied: {reply.text}"
        assert all(c.error is None for c in edits)
    assert record.ended_by == "script-exhausted"
    assert record.follow_ups_sent == 9
    # One workflow, edited in place, carrying every change.
    assert len(record.artifacts.workflows) == 1
    workflow = record.artifacts.workflows[0]
    assert workflow.name == "Sales digest"
    dumped = workflow.model_dump_json()
    for expected in ("#sales", "cfo@acme.com", "#ops", "200"):
        assert expected in dumped
    assert ONE_AT_A_TIME not in " ".join(out.user_texts)


async def test_declined_channel_is_never_invented_and_no_note_reaches_the_agent() -> None:
    notes = [
        "if asked which channel, decline to say and keep declining",
        "sound busy",
        "do not connect any credentials",
    ]
    case = make_case(
        [
            "Every weekday at 9, post the sales summary on Slack",
            f"[{notes[0]}] [{notes[1]}] Thanks, that is all for now [{notes[2]}]",
        ]
    )
    out = await drive(case)
    record = out.record
    asked = [w for t in record.live_turns for w in t.widgets if w.input_type == "questions"]
    assert asked, "the demo agent should ask for the missing channel"
    for widget in asked:
        assert widget.answer is not None
        channel_answers = [a for a in widget.answer["answers"] if "channel" in a["questionId"].lower()]
        assert channel_answers
        assert all(a["skipped"] and not a.get("customText") and not a["selectedOptions"] for a in channel_answers)
    built = record.artifacts.workflows
    assert built
    assert not re.search(r"#[A-Za-z0-9]", built[0].model_dump_json())
    # Over every message the server received from the user: no note text, no bracket.
    assert out.user_texts == ["Every weekday at 9, post the sales summary on Slack", "Thanks, that is all for now"]
    for text in out.user_texts:
        for note in notes:
            assert note not in text
        assert "[" not in text


async def test_compaction_case_sends_the_observer_threshold_every_time_and_waits_for_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[wire.ChatRequest] = []
    original = InstanceClient.chat

    async def recording_chat(
        self: InstanceClient, thread_id: str, request: wire.ChatRequest, *, headers: dict[str, str] | None = None
    ) -> str:
        sent.append(request)
        return await original(self, thread_id, request, headers=headers)

    monkeypatch.setattr(InstanceClient, "chat", recording_chat)
    busy: list[bool] = []
    original_status = InstanceClient.thread_status

    async def recording_status(self: InstanceClient, thread_id: str) -> wire.ThreadStatus:
        status = await original_status(self, thread_id)
        busy.append(not status.settled)
        return status

    monkeypatch.setattr(InstanceClient, "thread_status", recording_status)
    background = " ".join(f"Our team {i} reviews the sales numbers every week." for i in range(120))
    case = make_case(
        [
            f"Every weekday at 9, post the sales summary to #general on Slack. {background}",
            "change the channel to #sales",
            "what channel does it post to?",
        ],
        requiresMemoryCompaction=True,
        buildMode="default",
        promptVersion="v7",
    )
    out = await drive(case)
    assert len(sent) == 3
    assert all(r.observerThresholdTokens == 1000 for r in sent)
    assert all(r.mode == "default" and r.promptVersion == "v7" for r in sent)
    assert out.record.ended_by == "script-exhausted"
    # After some run-finish the thread still had memory work queued: the loop polled until it settled.
    assert any(busy)
    assert busy[-1] is False
    # The memory task the first run queued was waited for: the thread compacted before the end.
    assert out.record.memory is not None
    assert out.record.memory.compacted


async def test_conversation_survives_faults_each_message_sent_exactly_once() -> None:
    """30% of requests answer 503 before doing anything, some are slow, SSE streams drop mid-run."""
    changes = CHANGES[:4]
    listing = " ".join(f"{i + 1}. {c}" for i, c in enumerate(changes))
    opener = "Every weekday at 9, post the sales summary to #general on Slack"
    case = make_case([opener, f"Please make these changes: {listing} [{ONE_AT_A_TIME}]"], messageBudget=4)
    out = await drive(case, settings=DemoSettings(faults=0.3, seed=1))
    assert out.user_texts == [opener, *changes]
    assert out.record.ended_by == "script-exhausted"
    assert all(t.finish_status == "completed" for t in out.record.live_turns if t.role == "assistant")
