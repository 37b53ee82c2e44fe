"""What a chat that produces a run looks like on the real n8n 2.41, and how the harness reads it: the
event stream (live and replayed), thread status, messages, run debug with token numbers, and a model
provider that fails. The model is threadcase's scripted model (``threadcase fake-model``) on loopback,
set as n8n's model for each test and unset after.
"""

from __future__ import annotations

import uuid

import anyio
import pytest

from tests.n8n.conftest import inventory, script
from threadcase import records, wire
from threadcase.case.loader import parse_case
from threadcase.credentials import CredentialSeeder
from threadcase.grading import grade_case
from threadcase.harness.conversation import Budgets, converse
from threadcase.harness.turn_text import TurnText
from threadcase.instance import EventSubscription, InstanceClient
from threadcase.models import ModelSettings
from threadcase.standins.model_server import ScriptedModel

pytestmark = pytest.mark.anyio


async def _thread(client: InstanceClient) -> str:
    personal = await client.personal_project()
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, personal.id, source_context={"evalCase": "n8n-model-contract"})
    return thread_id


async def _until_finished(sub: EventSubscription, seconds: float = 60) -> list[wire.Event]:
    seen: list[wire.Event] = []
    with anyio.fail_after(seconds):
        while True:
            event = await sub.next_event(seconds)
            assert event is not None, f"no event; so far {[e.type for e in seen]}"
            seen.append(event)
            if event.type == "run-finish":
                return seen


async def test_a_run_streams_records_its_tokens_and_replays_as_a_text_block(
    client: InstanceClient, model: ScriptedModel
) -> None:
    before = await inventory(client)
    reply = {"text": "Noted: the digest goes to #ops at nine.", "usage": {"promptTokens": 321, "completionTokens": 11}}
    model.script = script({"id": "noted", "reply": reply})
    thread_id = await _thread(client)
    try:
        async with client.subscribe(thread_id) as sub:
            run_id = await client.chat(thread_id, wire.ChatRequest(message="Send the digest to #ops at nine"))
            live = await _until_finished(sub)
        assert live[0].type == "run-start"
        assert live[-1].payload["status"] == "completed"
        assert all(e.runId == run_id and e.agentId for e in live)
        deltas = [e for e in live if e.type == "text-delta"]
        assert deltas
        assert all(e.id is None and e.responseId for e in deltas)  # ephemeral: no SSE id
        assert "text-block" not in {e.type for e in live}  # the durable block is never sent live
        assert "".join(str(e.payload["text"]) for e in deltas) == "Noted: the digest goes to #ops at nine."

        status = await client.thread_status(thread_id)
        assert (status.hasActiveRun, status.isSuspended, status.settled) == (False, False, True)
        assert status.promptConfiguration is not None  # n8n adds it once the thread has run

        (summary,) = await client.thread_runs(thread_id)
        assert summary.runId == run_id
        assert isinstance(summary.startedAt, int)
        assert summary.startedAt > 1_600_000_000_000  # epoch milliseconds
        assert (summary.label, summary.stepCount, summary.steps) == ("Send the digest to #ops at nine", 1, None)
        debug = await client.run_debug(run_id)
        assert [s.stepNumber for s in debug.steps] == [0]  # n8n counts steps from 0
        (usage,) = wire.step_usages(debug.steps)
        assert (usage.inputTokens, usage.outputTokens, usage.cachedInputTokens) == (321, 11, 0)

        raw = await client.thread_messages(thread_id)
        assert [m.role for m in raw] == ["user", "assistant"]
        assert isinstance(raw[1].content, list)
        assert raw[1].text == "Noted: the digest goes to #ops at nine."
        rich = await client.thread_messages(thread_id, raw=False)
        assert [m.content for m in rich] == ["Send the digest to #ops at nine", raw[1].text]

        # A client that comes back after the run-start gets the text again, as one durable block.
        start_id = live[0].id
        assert start_id is not None
        async with client.subscribe(thread_id, last_event_id=start_id) as again:
            replayed = await _until_finished(again)
        assert [e.type for e in replayed] == ["text-block", "run-finish"]
        text = TurnText()
        for e in (*live, *replayed):
            key = (e.runId, e.agentId, e.responseId)
            if e.type == "text-delta":
                text.delta(key, str(e.payload["text"]))
            elif e.type == "text-block":
                text.block(key, str(e.payload["text"]))
        assert text.text == "Noted: the digest goes to #ops at nine."  # not twice
    finally:
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


async def test_a_provider_that_refuses_is_an_error_event_with_its_words_and_no_tokens(
    client: InstanceClient, model: ScriptedModel
) -> None:
    before = await inventory(client)
    refusal = {"status": 401, "message": "Incorrect API key provided: sk-thr*******fake"}
    model.script = script({"id": "refuse", "reply": {"error": refusal}})
    thread_id = await _thread(client)
    try:
        async with client.subscribe(thread_id) as sub:
            run_id = await client.chat(thread_id, wire.ChatRequest(message="Build a weekly report"))
            seen = await _until_finished(sub)
        errors = [wire.ErrorPayload.model_validate(e.payload) for e in seen if e.type == "error"]
        assert len(errors) == 1
        assert errors[0].text == "Incorrect API key provided: sk-thr*******fake"
        assert (errors[0].status, errors[0].from_model_provider) == (401, True)
        assert seen[-1].payload["status"] == "error"
        debug = await client.run_debug(run_id)
        assert debug.steps  # the step is recorded ...
        assert wire.step_usages(debug.steps) == []  # ... without output: no token numbers to read
    finally:
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


async def test_a_failed_provider_ends_the_conversation_and_nothing_is_judged(
    client: InstanceClient, model: ScriptedModel
) -> None:
    """On the real n8n: the model fails, so the simulated user sends nothing more (one chat, not three),
    and every unit is not judged with the provider's message, attributed to the framework."""
    before = await inventory(client)
    message = "The model is overloaded right now; try again in a minute."
    model.script = script({"id": "broken", "reply": {"error": {"status": 401, "message": message}}})
    case = parse_case(
        {
            "description": "three turns on a broken model",
            "complexity": "simple",
            "tags": ["contract"],
            "conversation": [
                {"role": "user", "text": "Every Monday post the open tickets to #support"},
                {"role": "user", "text": "Also include the ticket owner"},
                {"role": "user", "text": "And send it at 8am"},
            ],
            "outcomeExpectations": ["The workflow posts open tickets with their owner at 8am on Mondays"],
            "checks": {"mustContain": ["#support"]},
        }
    )
    personal = await client.personal_project()
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, personal.id)
    seeder = CredentialSeeder(client, environ={})
    record = records.RunRecord(case_slug="broken-model", thread_id=thread_id, mode=case.mode)
    try:
        await seeder.seed(thread_id, [])
        await converse(
            case,
            client=client,
            thread_id=thread_id,
            project_id=personal.id,
            seed=None,
            live_opening=None,
            credentials=seeder,
            models=ModelSettings(),
            budgets=Budgets(turn_seconds=120, inactivity_seconds=60),
            record=record,
        )
        grading = await grade_case(case, record, client=client, models=ModelSettings())
    finally:
        await seeder.cleanup()
        await client.delete_thread(thread_id)
    assert record.model_failure == message
    assert record.ended_by == "error"
    assert [t.text for t in record.turns if t.role == "user"] == ["Every Monday post the open tickets to #support"]
    assert [entry["source"] for entry in model.log if entry["agent"] == "orchestrator"] == ["rule:broken"]
    assert grading.verdicts
    for verdict in grading.verdicts:
        assert (verdict.status, verdict.attribution) == ("not_judged", "framework_issue")
        assert message in verdict.reason
    assert await inventory(client) == before


async def test_a_question_widget_is_answered_and_the_run_goes_on(client: InstanceClient, model: ScriptedModel) -> None:
    before = await inventory(client)
    question = {"id": "channel", "question": "Which channel should the digest go to?", "type": "text"}
    model.script = script(
        {
            "id": "ask",
            "when": {"userText": {"contains": ["digest"]}, "after": "user", "notSeen": ["ask-user"]},
            "reply": {"toolCalls": [{"name": "ask-user", "arguments": {"questions": [question]}}]},
        },
        {
            "id": "answered",
            "when": {"after": "ask-user"},
            "reply": {"text": "Posting the digest to {{answer.channel}}."},
        },
    )
    thread_id = await _thread(client)
    try:
        async with client.subscribe(thread_id) as sub:
            run_id = await client.chat(thread_id, wire.ChatRequest(message="Send me a daily digest"))
            with anyio.fail_after(60):
                while (event := await sub.next_event(60)) is not None and event.type != "confirmation-request":
                    pass
            assert event is not None
            request = wire.ConfirmationRequest.model_validate(event.payload)
            assert (request.kind, [q.id for q in request.questions]) == ("questions", ["channel"])
            waiting = await client.thread_status(thread_id)
            assert (waiting.isSuspended, waiting.runId, waiting.settled) == (True, run_id, False)
            answer = wire.QuestionsAnswer(answers=[wire.QuestionAnswer(questionId="channel", customText="#ops")])
            await client.confirm(request.requestId, answer)
            rest = await _until_finished(sub)
        assert rest[-1].payload["status"] == "completed"
        results = [e.payload["result"] for e in rest if e.type == "tool-result"]
        echoed = {"questionId": "channel", "selectedOptions": [], "customText": "#ops", "skipped": False}
        assert results == [{"answered": True, "answers": [{**echoed, "question": question["question"]}]}]
        text = "".join(str(e.payload["text"]) for e in rest if e.type == "text-delta")
        assert text == "Posting the digest to #ops."
    finally:
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


async def test_a_run_is_cancelled_and_the_instance_answers_health(client: InstanceClient, model: ScriptedModel) -> None:
    assert await client.health()
    model.script = script({"id": "slow", "reply": {"text": "Still thinking.", "delayMs": 4000}})
    thread_id = await _thread(client)
    try:
        async with client.subscribe(thread_id) as sub:
            await client.chat(thread_id, wire.ChatRequest(message="Take your time"))
            with anyio.fail_after(30):
                while (event := await sub.next_event(30)) is not None and event.type != "run-start":
                    pass
            await client.cancel(thread_id)
            await client.cancel(thread_id)  # safe to repeat
            seen = await _until_finished(sub)
        assert seen[-1].payload["status"] == "cancelled"
        assert (await client.thread_status(thread_id)).settled
    finally:
        await client.delete_thread(thread_id)
