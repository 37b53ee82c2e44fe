"""Inline seeds restored on the real demo instance: everything stands up, the live thread sees it,
cleanup leaves the instance as found, concurrent runs never collide, and only unclaimed pre-run
leftovers are evicted."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from tests.instance.demo import Demo, demo, demo_client

from threadcase import wire
from threadcase.case import schema
from threadcase.errors import CaseSchemaError, SeedingError
from threadcase.instance import InstanceClient
from threadcase.seeds import (
    InstanceSnapshot,
    RestoredSeed,
    cleanup_created,
    restore_inline_seed,
    take_snapshot,
)

__all__ = ["demo", "demo_client"]  # fixtures, imported for pytest

pytestmark = pytest.mark.anyio

WF_DAILY = "wfDaily00000001"
WF_WEEKLY = "wfWeekly0000001"
AGENT = "agentHelper00001"


def _seed_doc(tag: str) -> dict[str, Any]:
    """A seed exercising every artifact kind; ``tag`` keeps names apart between tests."""
    return {
        "mode": "inline",
        "messages": [
            {"role": "user", "text": f"Build Daily report {tag} and put it in the Reports folder"},
            {
                "id": f"msg-{tag}-1",
                "role": "assistant",
                "type": "llm",
                "createdAt": "2020-01-01T00:00:01.000Z",
                "content": [
                    {"type": "text", "text": f"I built Daily report {tag}. It runs every morning."},
                    {
                        "type": "tool-call",
                        "toolCallId": "call-1",
                        "toolName": "build-workflow",
                        "state": "resolved",
                        "input": {"workflow": {"name": f"Daily report {tag}"}},
                        "output": {"workflowId": WF_DAILY, "workflowName": f"Daily report {tag}"},
                    },
                ],
            },
        ],
        "workflows": [
            {
                "id": WF_DAILY,
                "name": f"Daily report {tag}",
                "parentFolderId": "folderChild00001",
                "nodes": [
                    {
                        "id": "n1",
                        "name": "Every morning",
                        "type": "n8n-nodes-base.scheduleTrigger",
                        "typeVersion": 1.2,
                        "position": [0, 0],
                        "parameters": {},
                    },
                    {
                        "id": "n2",
                        "name": "Summarise",
                        "type": "n8n-nodes-base.set",
                        "typeVersion": 3.4,
                        "position": [200, 0],
                        "parameters": {"assignments": {"assignments": [{"name": "total", "value": 3}]}},
                    },
                ],
                "connections": {"Every morning": {"main": [[{"node": "Summarise", "type": "main", "index": 0}]]}},
            },
            {
                "id": WF_WEEKLY,
                "name": f"Weekly digest {tag}",
                "parentFolderId": "folderRoot000001",
                "nodes": [],
                "connections": {},
            },
        ],
        "folders": [
            {"id": "folderRoot000001", "name": f"Reports {tag}"},
            {"id": "folderChild00001", "name": "Daily", "parentFolderId": "folderRoot000001"},
        ],
        "dataTables": [
            {
                "id": "tableRows0000001",
                "name": f"Report rows {tag}",
                "columns": [{"name": "day", "type": "date"}, {"name": "total", "type": "number"}],
            }
        ],
        "agents": [
            {
                "id": AGENT,
                "config": {
                    "name": f"Report helper {tag}",
                    "model": "anthropic/claude-sonnet-4-5",
                    "instructions": "Answer questions about the reports.",
                    "skills": [{"type": "skill", "id": "skillTone0000001"}],
                    "tools": [],
                },
                "skills": {"skillTone0000001": {"name": "Tone", "description": "Be brief", "instructions": "Short."}},
            }
        ],
        "projects": [{"name": f"Seeded project {tag}"}],
        "priorRuns": [{"workflow": WF_DAILY, "hints": "The morning run found 3 rows."}],
    }


def _seed(tag: str) -> schema.InlineSeed:
    return schema.InlineSeed.model_validate(_seed_doc(tag))


async def _state(client: InstanceClient, project_id: str) -> dict[str, set[str]]:
    """Everything eviction or cleanup could touch, by id."""
    return {
        "workflows": {w.id for w in await client.list_workflows()},
        "folders": {f.id for f in await client.list_folders(project_id)},
        "tables": {str(t["id"]) for t in await client.list_data_tables(project_id)},
        "projects": {p.id for p in await client.list_projects()},
    }


async def _thread(client: InstanceClient) -> tuple[str, str]:
    project_id = (await client.personal_project()).id
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, project_id)
    return thread_id, project_id


async def _restore(
    client: InstanceClient, seed: schema.InlineSeed, thread_id: str, project_id: str, snapshot: InstanceSnapshot
) -> RestoredSeed:
    return await restore_inline_seed(
        client, seed, thread_id=thread_id, project_id=project_id, run_suffix=uuid.uuid4().hex[:8], snapshot=snapshot
    )


async def test_a_full_seed_restores_the_live_thread_sees_it_and_cleanup_restores_the_instance(
    demo: Demo, demo_client: InstanceClient
) -> None:
    client = demo_client
    thread_id, project_id = await _thread(client)
    before = await _state(client, project_id)
    restored = await _restore(client, _seed("full"), thread_id, project_id, await take_snapshot(client, project_id))

    # Ids remapped, names suffixed, artifacts where the seed put them.
    daily_id, weekly_id, agent_id = (restored.outcome.id_map[i] for i in (WF_DAILY, WF_WEEKLY, AGENT))
    assert len({daily_id, weekly_id, agent_id, WF_DAILY, WF_WEEKLY, AGENT}) == 6
    daily = await client.get_workflow(daily_id)
    assert daily.name == restored.workflow_names[WF_DAILY]
    assert daily.name.startswith("Daily report full [seed ")
    folders = {f.id: f for f in await client.list_folders(project_id)}
    child = folders[str(daily.parentFolderId)]
    assert child.name == "Daily"
    assert folders[str(child.parentFolderId)].name == "Reports full"
    weekly = await client.get_workflow(weekly_id)
    assert weekly.parentFolderId == child.parentFolderId
    tables = [t for t in await client.list_data_tables(project_id) if t["id"] in restored.created.data_table_ids]
    assert [t["name"] for t in tables] == ["Report rows full"]
    agent = await client.get_agent(project_id, agent_id)
    assert agent.config["name"] == "Report helper full"
    assert set(agent.skills) == {"skillTone0000001"}
    assert "Seeded project full" in {p.name for p in await client.list_projects()}
    assert [(r.workflow, r.ran, r.success) for r in restored.outcome.prior_runs] == [(WF_DAILY, True, True)]

    # The thread holds the seeded history, marked seeded, pointing at the per-run artifacts.
    messages = await client.thread_messages(thread_id)
    assert [m.seeded for m in messages] == [True, True]
    tool = messages[1].blocks[1]
    assert tool["output"] == {"workflowId": daily_id, "workflowName": daily.name}
    assert daily.name in messages[1].blocks[0]["text"]
    assert [(t.role, t.seeded, t.sent_by) for t in restored.seeded_turns] == [
        ("user", True, "seed"),
        ("assistant", True, "seed"),
    ]
    assert restored.seeded_turns[1].tool_calls[0].tool_name == "build-workflow"

    # The live turn, attached to the seeded workflow: the agent works on the restored artifact.
    attachment = restored.resolve_attach(schema.Attach(workflow=WF_DAILY))
    assert attachment == wire.WorkflowAttachment(id=daily_id, name=daily.name)
    assert restored.resolve_attach(schema.Attach(agent=AGENT)) == wire.AgentAttachment(
        id=agent_id, name="Report helper full", projectId=project_id
    )
    with pytest.raises(SeedingError, match="wfMissing0000001"):
        restored.resolve_attach(schema.Attach(workflow="wfMissing0000001"))
    async with client.subscribe(thread_id) as sub:
        await client.chat(thread_id, wire.ChatRequest(message="Rename it to Morning report", attachments=[attachment]))
        with anyio.fail_after(20):
            while (event := await sub.next_event(timeout=10)) is not None and event.type != "run-finish":
                if event.type == "confirmation-request":
                    request_id = str(event.payload["requestId"])
                    await client.confirm(request_id, wire.ApprovalAnswer(approved=True))
    assert event is not None
    assert event.payload.get("status") == "completed"
    history = await client.thread_messages(thread_id)
    assert len(history) > 2, "the live turn was added after the seeded history"
    assert (await client.get_workflow(daily_id)).name == "Morning report", "the agent edited the seeded workflow"

    await cleanup_created(client, restored.created)
    assert await _state(client, project_id) == before
    assert not client.claims


async def test_two_runs_of_one_seed_at_once_do_not_collide(demo: Demo, demo_client: InstanceClient) -> None:
    client = demo_client
    seed = _seed("twin")
    project_id = (await client.personal_project()).id
    before = await _state(client, project_id)
    results: dict[int, RestoredSeed] = {}

    async def run(index: int) -> None:
        thread_id, _ = await _thread(client)
        # The runner snapshots per case: the second run's snapshot may already see the first's work.
        snapshot = await take_snapshot(client, project_id)
        results[index] = await _restore(client, seed, thread_id, project_id, snapshot)
        await anyio.sleep(0.2)  # both runs are live at the same time

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 0)
        await anyio.sleep(0.05)
        tg.start_soon(run, 1)
    # A third run starts while both are live: its snapshot sees both, and evicts neither.
    thread_id, _ = await _thread(client)
    results[2] = await _restore(client, seed, thread_id, project_id, await take_snapshot(client, project_id))
    workflows = {w.id for w in await client.list_workflows()}
    for restored in results.values():
        assert set(restored.created.workflow_ids) <= workflows
    ids = [set(r.outcome.id_map.values()) for r in results.values()]
    assert not ids[0] & ids[1]
    assert not ids[1] & ids[2]
    assert not ids[0] & ids[2]
    for restored in results.values():
        await cleanup_created(client, restored.created)
    assert await _state(client, project_id) == before


async def test_runs_through_different_clients_sharing_claims_do_not_evict_each_other(demo: Demo) -> None:
    """Regression: claims lived on one client, and the runner spreads a lane's cases over several, so a
    case whose snapshot saw another live case's seed (made through a sibling client) deleted it."""
    seed = _seed("sibling")
    async with demo.client() as first, demo.client(claims=first.claims) as second:
        thread_a, project_id = await _thread(first)
        a = await _restore(first, seed, thread_a, project_id, await take_snapshot(first, project_id))
        thread_b, _ = await _thread(second)
        # B's snapshot sees A's live workflows: only the shared claims keep B from evicting them.
        b = await _restore(second, seed, thread_b, project_id, await take_snapshot(second, project_id))
        workflows = {w.id for w in await second.list_workflows()}
        assert set(a.created.workflow_ids) <= workflows
        assert set(b.created.workflow_ids) <= workflows
        await cleanup_created(first, a.created)
        await cleanup_created(second, b.created)
        assert not first.claims


async def test_leftovers_of_an_earlier_run_are_evicted_but_nothing_newer(demo: Demo) -> None:
    seed = _seed("left")
    async with demo.client() as crashed:
        thread_id, project_id = await _thread(crashed)
        pristine = await _state(crashed, project_id)
        leftover = await _restore(crashed, seed, thread_id, project_id, await take_snapshot(crashed, project_id))
        # The earlier harness died here: no cleanup, its claims went with its process.
    async with demo.client() as client:
        unrelated = await client.create_project("Unrelated project left")
        snapshot = await take_snapshot(client, project_id)
        late = await client.create_project("Seeded project left")  # appeared after the snapshot
        thread_id, _ = await _thread(client)
        restored = await _restore(client, seed, thread_id, project_id, snapshot)
        after = await _state(client, project_id)
        assert not set(leftover.created.workflow_ids) & after["workflows"], "leftover workflows evicted"
        assert not set(leftover.created.folder_ids) & after["folders"], "leftover root folder evicted"
        assert not set(leftover.created.project_ids) & after["projects"], "leftover project evicted"
        assert set(leftover.created.data_table_ids) <= after["tables"], "tables are never evicted by name"
        assert {unrelated.id, late.id} <= after["projects"], "only pre-run, same-name leftovers go"
        await cleanup_created(client, restored.created)
        for table_id in leftover.created.data_table_ids:
            await client.delete_data_table(project_id, table_id)
        await client.delete_agent(project_id, leftover.outcome.id_map[AGENT])
        for project in (unrelated, late):
            await client.delete_project(project.id)
        assert await _state(client, project_id) == pristine


async def test_a_failed_restore_leaves_nothing_behind(demo: Demo, demo_client: InstanceClient) -> None:
    client = demo_client
    thread_id, project_id = await _thread(client)
    before = await _state(client, project_id)
    seed = _seed("fail")
    # A folder outside the seed: the loader would refuse it, so break it after loading; the server
    # then refuses the whole restore after our eviction and claims already happened.
    broken = seed.workflows[1].model_copy(update={"parent_folder_id": "folderElsewhere1"})
    seed = seed.model_copy(update={"workflows": [seed.workflows[0], broken]})
    with pytest.raises(SeedingError, match="restore-thread failed"):
        await _restore(client, seed, thread_id, project_id, await take_snapshot(client, project_id))
    assert await _state(client, project_id) == before
    assert not client.claims


async def test_a_build_result_naming_an_undeclared_workflow_is_refused_before_any_call(
    demo_client: InstanceClient,
) -> None:
    doc = _seed_doc("bad")
    doc["messages"][1]["content"][1]["output"]["workflowId"] = "wfNotSeeded00001"
    seed = schema.InlineSeed.model_validate(doc)
    thread_id, project_id = await _thread(demo_client)
    with pytest.raises(CaseSchemaError, match=r"messages\[1\]\.content\[1\]\.output\.workflowId.*wfNotSeeded00001"):
        await _restore(demo_client, seed, thread_id, project_id, await take_snapshot(demo_client, project_id))
    assert await demo_client.thread_messages(thread_id) == []


async def test_a_prior_run_the_mock_machinery_failed_never_ran(
    demo: Demo, demo_client: InstanceClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: n8n answered the staged run with ``success: false`` and "FRAMEWORK ISSUE: ..." (its
    mock model had no key), and the seed recorded that the prior run ran (and merely failed)."""
    issue = "FRAMEWORK ISSUE: Phase 1.5 pin data generation failed: Missing API key for the eval model"

    async def mock_without_a_model(workflow_id: str, request: wire.ExecuteWithMockRequest) -> wire.ExecutionResult:
        return wire.ExecutionResult(executionId=str(uuid.uuid4()), success=False, errors=[issue])

    monkeypatch.setattr(demo_client, "execute_with_mock", mock_without_a_model)
    thread_id, project_id = await _thread(demo_client)
    restored = await _restore(
        demo_client, _seed("mockless"), thread_id, project_id, await take_snapshot(demo_client, project_id)
    )
    try:
        assert [(r.workflow, r.ran, r.error) for r in restored.outcome.prior_runs] == [(WF_DAILY, False, issue)]
    finally:
        await cleanup_created(demo_client, restored.created)
