"""How the conversation loop reads n8n 2.41's events: sub-agents named by the event's own agentId, text
that a reconnect replays, error events whose message is ``content``, and a model provider that fails
(the simulated user then sends nothing more).

The first tests feed one run's events, exactly as n8n sends them, through a scripted stream; the last
ones drive the demo instance, whose agent fails the way a broken model does.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import anyio
import pytest

from tests.conversation.helpers import drive, echo_agent, make_case
from threadcase import records, wire
from threadcase.credentials import CredentialSeeder
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.errors import ProviderError
from threadcase.harness.conversation import Budgets, _Conversation, _script_for
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings

pytestmark = pytest.mark.anyio

RUN = "run_n8n1"
AGENT = f"orchestrator-{RUN}"


def _event(type: str, payload: dict[str, Any], *, id: str | None = None, **top: Any) -> wire.Event:
    return wire.Event.model_validate(
        {"id": id, "type": type, "runId": RUN, "agentId": AGENT, "payload": payload, **top}
    )


class ScriptedStream:
    """Hands out the given events (a ``None`` is a wait that timed out); ``reconnect`` marks a lost stream."""

    def __init__(self, *items: wire.Event | str | None) -> None:
        self._items: deque[wire.Event | str | None] = deque(items)
        self.reconnects = 0

    @property
    def left(self) -> int:
        return len(self._items)

    async def next_event(self, timeout: float) -> wire.Event | None:  # noqa: ASYNC109 - EventSubscription's API
        while self._items and self._items[0] == "reconnect":
            self._items.popleft()
            self.reconnects += 1
        if not self._items:
            await anyio.sleep(min(timeout, 0.01))
            return None
        item = self._items.popleft()
        assert not isinstance(item, str)
        return item


class QuietInstance:
    """The client calls a turn may make: a settled thread status, and nothing else."""

    def __init__(self) -> None:
        self.status_calls = 0

    def add_secret(self, value: str) -> None:
        pass

    async def thread_status(self, thread_id: str) -> wire.ThreadStatus:
        self.status_calls += 1
        return wire.ThreadStatus(hasActiveRun=False, isSuspended=False)


async def _turn(stream: ScriptedStream, *, background_wait: float = 5.0) -> tuple[str, records.Turn, records.RunRecord]:
    case = make_case(["Build the weekly digest", "Also post it to #ops"])
    instance: Any = QuietInstance()
    record = records.RunRecord(case_slug="n8n-events", thread_id="t1", mode=case.mode)
    budgets = Budgets(status_poll_seconds=0.01, background_wait_seconds=background_wait, inactivity_seconds=5)
    conversation = _Conversation(
        case,
        client=instance,
        thread_id="t1",
        credentials=CredentialSeeder(instance, environ={}),
        models=ModelSettings(),
        budgets=budgets,
        record=record,
        headers=None,
        script=_script_for(case, "Build the weekly digest", None),
    )
    assistant = records.Turn(index=1, role="assistant", run_ids=[RUN])
    sub: Any = stream
    with anyio.fail_after(10):
        end = await conversation.drive_turn(sub, assistant, RUN, anyio.current_time() + 8)
    return end, assistant, record


async def test_a_sub_agent_named_by_the_events_agent_id_is_waited_for() -> None:
    """Regression: the loop read ``payload.agentId``, which n8n never sends (the payload names the
    parent), so it could not tell that a spawned sub-agent was still at work after run-finish."""
    stream = ScriptedStream(
        _event("run-start", {"messageId": "m1"}, id="1"),
        _event("agent-spawned", {"parentId": AGENT, "role": "builder", "tools": []}, id="2", agentId="agent-b1"),
        _event("run-finish", {"status": "completed"}, id="3"),
        None,
        None,
        _event("agent-completed", {"role": "builder", "result": "built"}, id="4", agentId="agent-b1"),
    )
    end, _, record = await _turn(stream)
    assert end == "finished"
    assert stream.left == 0  # it returned only once the sub-agent said it was done
    assert not record.warnings


async def test_text_replayed_after_a_reconnect_is_not_doubled() -> None:
    """n8n's resume sends a finished response as one ``text-block`` and a response still open as one
    delta carrying all its text so far; appending both to what came live doubled the text."""
    first, second = f"{RUN}:step:1", f"{RUN}:step:2"
    stream = ScriptedStream(
        _event("run-start", {"messageId": "m1"}, id="1"),
        _event("text-delta", {"text": "Checking the "}, responseId=first),
        _event("text-delta", {"text": "rota"}, responseId=first),
        _event("tool-call", {"toolCallId": "c1", "toolName": "workflows", "args": {}}, id="3"),
        _event("text-delta", {"text": "Posting to"}, responseId=second),
        "reconnect",
        _event("text-block", {"text": "Checking the rota."}, id="2", responseId=first),
        _event("text-delta", {"text": "Posting to #ops"}, responseId=second),
        _event("text-delta", {"text": " now."}, responseId=second),
        _event("run-finish", {"status": "completed"}, id="5"),
    )
    end, assistant, _ = await _turn(stream)
    assert end == "finished"
    assert assistant.text == "Checking the rota.\n\nPosting to #ops now."


@pytest.mark.parametrize(
    ("payload", "is_provider"),
    [
        ({"content": "Incorrect API key provided", "statusCode": 401, "technicalDetails": "{}"}, True),
        ({"content": "Failed after 3 attempts. Last error: AI_APICallError: Service Unavailable"}, True),
        ({"content": "You have used all your AI credits", "code": "quota_exhausted"}, True),
        ({"content": "The workflow tool crashed"}, False),
    ],
)
async def test_an_error_after_output_counts_against_the_provider_only_when_it_names_the_provider(
    payload: dict[str, Any], is_provider: bool
) -> None:
    stream = ScriptedStream(
        _event("run-start", {"messageId": "m1"}, id="1"),
        _event("text-delta", {"text": "On it."}, responseId=f"{RUN}:step:1"),
        _event("error", payload, id="3"),
        _event("run-finish", {"status": "error", "reason": "Something went wrong."}, id="4"),
    )
    _, assistant, record = await _turn(stream)
    assert (record.model_failure == payload["content"]) is is_provider
    assert any(payload["content"] in error for error in assistant.errors)  # read from content, never "error event"


async def test_an_error_then_a_run_that_said_nothing_is_the_models_failure() -> None:
    """A retried provider error carries no status; n8n then ends the run in error having said nothing."""
    stream = ScriptedStream(
        _event("run-start", {"messageId": "m1"}, id="1"),
        _event("error", {"content": "Upstream closed the connection"}, id="2"),
        _event("run-finish", {"status": "error", "reason": "Something went wrong before I could finish."}, id="3"),
    )
    _, _, record = await _turn(stream)
    assert record.model_failure == "Upstream closed the connection"


async def _crashing_model(turn: TurnInput, ctx: AgentContext) -> None:
    raise RuntimeError("AI_APICallError: the provider answered 529 Overloaded")


async def test_after_the_model_failed_the_user_sends_nothing_more() -> None:
    case = make_case(["Build the weekly digest", "Also post it to #ops", "And rename it"])
    out = await drive(case, agent=_crashing_model)
    record = out.record
    assert out.user_texts == ["Build the weekly digest"]
    assert record.ended_by == "error"
    assert record.model_failure is not None
    assert "529 Overloaded" in record.model_failure


async def test_a_chat_refused_for_want_of_a_model_ends_the_conversation_as_the_providers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said = "The n8n Assistant has no model configured. An instance owner can add one in Settings > n8n Assistant."

    async def refused(self: InstanceClient, thread_id: str, request: wire.ChatRequest, **_: Any) -> str:
        raise ProviderError(f"the instance has no model for its agent: {said}", reason=said, status=400)

    monkeypatch.setattr(InstanceClient, "chat", refused)
    out = await drive(make_case(["Build the weekly digest", "Also post it to #ops"]), agent=echo_agent)
    record = out.record
    assert (record.model_failure, record.ended_by) == (said, "error")
    assert [t.role for t in record.turns] == ["user"]  # no run, so no assistant turn, and no follow-up
