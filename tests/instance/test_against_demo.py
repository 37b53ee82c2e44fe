"""The client against the real demo instance: every call family, and a faulty instance survived."""

from __future__ import annotations

import uuid

import anyio
import pytest

from tests.instance.demo import Demo, demo, demo_client, serve_demo
from threadcase import wire
from threadcase.demo_instance import DemoSettings
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.errors import InstanceError
from threadcase.instance import EventSubscription, InstanceClient, open_lanes

__all__ = ["demo", "demo_client"]  # fixtures, imported for pytest

pytestmark = pytest.mark.anyio


async def _finish(sub: EventSubscription, client: InstanceClient) -> list[wire.Event]:
    """Events until run-finish, answering any question widget with a plain value."""
    events: list[wire.Event] = []
    with anyio.fail_after(20):
        while True:
            event = await sub.next_event(timeout=10)
            assert event is not None, f"no run-finish; got {[e.type for e in events]}"
            events.append(event)
            if event.type == "confirmation-request":
                request = wire.ConfirmationRequest.model_validate(event.payload)
                answers = [wire.QuestionAnswer(questionId=q.id, customText="#general") for q in request.questions]
                body = wire.QuestionsAnswer(answers=answers) if answers else wire.ApprovalAnswer(approved=True)
                await client.confirm(request.requestId, body)
                await client.confirm(request.requestId, body)  # de-duplicated by the server
            if event.type == "run-finish":
                return events


async def test_a_conversation_turn_end_to_end(demo_client: InstanceClient) -> None:
    project = await demo_client.personal_project()
    thread_id = str(uuid.uuid4())
    await demo_client.create_thread(thread_id, project.id, source_context={"evalCase": "client-test"})
    async with demo_client.subscribe(thread_id) as sub:
        run_id = await demo_client.chat(
            thread_id, wire.ChatRequest(message="Build a workflow that posts a Slack message every morning")
        )
        events = await _finish(sub, demo_client)
    assert events[0].type == "run-start"
    assert events[-1].runId == run_id
    ids = [int(e.id) for e in events if e.id is not None]
    assert ids == sorted(set(ids)), "ids strictly increase, none twice"
    # As on n8n: text streams as id-less deltas, and live ids skip the durable text block's number.
    deltas = [e for e in events if e.type == "text-delta"]
    assert deltas
    assert all(e.id is None for e in deltas)
    assert "text-block" not in {e.type for e in events}
    status = await demo_client.thread_status(thread_id)
    assert (status.hasActiveRun, status.isSuspended, status.settled) == (False, False, True)
    messages = await demo_client.thread_messages(thread_id)
    assert [m.role for m in messages][:1] == ["user"]
    assert isinstance(messages[0].content, list)  # raw: the stored blocks
    rich = await demo_client.thread_messages(thread_id, raw=False)
    assert [m.text for m in rich] == [m.text for m in messages]
    assert all(isinstance(m.content, str) for m in rich)
    runs = await demo_client.thread_runs(thread_id)
    assert run_id in [r.runId for r in runs]
    assert all(isinstance(r.startedAt, int) and r.startedAt > 1_600_000_000_000 for r in runs)
    debug = await demo_client.run_debug(run_id)
    assert debug.steps
    usages = wire.step_usages(debug.steps)
    assert len(usages) == len(debug.steps)
    assert all(usage.inputTokens > 0 for usage in usages)
    workflows = [w for w in await demo_client.list_workflows() if w.projectId in (None, project.id)]
    built = [w for w in workflows if any("slack" in n.type.lower() for n in w.nodes)]
    assert built, "the demo agent built a Slack workflow"
    await demo_client.rename_workflow(built[0].id, "renamed by client test")
    assert (await demo_client.get_workflow(built[0].id)).name == "renamed by client test"
    await demo_client.delete_workflow(built[0].id)
    await demo_client.delete_workflow(built[0].id)  # already gone = fine
    memory = await demo_client.thread_memory(thread_id)
    assert memory.compacted is False
    await demo_client.delete_thread(thread_id)


async def test_projects_folders_and_errors(demo_client: InstanceClient) -> None:
    name = f"client-test {uuid.uuid4().hex[:6]}"
    project = await demo_client.create_project(name)
    assert project.name == name
    assert project.id in [p.id for p in await demo_client.list_projects()]
    assert await demo_client.list_folders(project.id) == []
    assert await demo_client.list_data_tables(project.id) == []
    await demo_client.delete_project(project.id)
    assert project.id not in [p.id for p in await demo_client.list_projects()]
    with pytest.raises(InstanceError) as caught:
        await demo_client.get_workflow("does-not-exist")
    assert (caught.value.status, caught.value.method) == (404, "GET")


async def test_lanes_refuse_a_dead_base_url_by_name(demo: Demo) -> None:
    async with open_lanes([demo.url], email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD) as clients:
        assert [c.base_url for c in clients] == [demo.url]
        assert await clients[0].personal_project()
    with pytest.raises(InstanceError, match=r"127\.0\.0\.1:9\b"):
        async with open_lanes([demo.url, "http://127.0.0.1:9"], email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD):
            pass


async def test_a_faulty_instance_loses_no_event_and_runs_each_chat_once() -> None:
    """30 % of calls answer 503 before work, some are slowed, event streams drop mid-run."""
    for faulty in serve_demo(DemoSettings(faults=0.3, seed=7)):
        async with faulty.client() as client:
            project = await client.personal_project()
            thread_id = str(uuid.uuid4())
            await client.create_thread(thread_id, project.id)
            sent: list[str] = []
            async with client.subscribe(thread_id) as sub:
                for message in ("Build a workflow that posts a Slack message every morning", "Call it Morning post"):
                    sent.append(await client.chat(thread_id, wire.ChatRequest(message=message)))
                    events = await _finish(sub, client)
                    assert events[-1].runId == sent[-1]
            runs = await client.thread_runs(thread_id)
            assert sorted(r.runId for r in runs) == sorted(sent), "each chat started exactly one run"
            counts = faulty.app.state.platform.faults.counts
            assert counts["reject"] > 0, "the fault injector must actually have fired"
            assert sub.reconnects == counts["drop"] > 0, "every dropped stream was resumed"
