"""Inline seeds against the real n8n 2.41: every golden seed restores and is cleaned up to nothing; a seed
with every feature restores as the harness expects; and what ``validate`` refuses, n8n refuses too.
"""

from __future__ import annotations

import secrets
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.n8n.conftest import data, inventory
from threadcase import wire
from threadcase.case import schema
from threadcase.case.loader import load_suite, parse_case
from threadcase.errors import CaseSchemaError, InstanceError
from threadcase.instance import InstanceClient
from threadcase.seeds.inline import InstanceSnapshot, cleanup_created, restore_inline_seed, take_snapshot

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"
SEEDED = [loaded for loaded in load_suite([GOLDEN]) if isinstance(loaded.case.seed, schema.InlineSeed)]
CASE: dict[str, Any] = {
    "description": "n8n seed contract",
    "complexity": "simple",
    "tags": ["contract"],
    "conversation": [{"role": "user", "text": "hi"}],
    "outcomeExpectations": ["x"],
}


async def _restore(client: InstanceClient, seed: schema.InlineSeed) -> tuple[str, Any, InstanceSnapshot]:
    personal = await client.personal_project()
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, personal.id, source_context={"evalCase": "n8n-seed-contract"})
    snapshot = await take_snapshot(client, personal.id)
    restored = await restore_inline_seed(
        client, seed, thread_id=thread_id, project_id=personal.id, run_suffix=secrets.token_hex(4), snapshot=snapshot
    )
    return thread_id, restored, snapshot


def test_the_golden_suite_has_the_seed_features_the_contract_is_about() -> None:
    kinds: set[str] = set()
    for loaded in SEEDED:
        seed = loaded.case.seed
        assert isinstance(seed, schema.InlineSeed)
        present = {
            "workflows": seed.workflows,
            "dataTables": seed.data_tables,
            "folders": seed.folders,
            "agents": seed.agents,
            "priorRuns": seed.prior_runs,
        }
        kinds |= {kind for kind, items in present.items() if items}
    assert kinds == {"workflows", "dataTables", "folders", "agents", "priorRuns"}


@pytest.mark.parametrize("loaded", SEEDED, ids=[loaded.slug for loaded in SEEDED])
async def test_every_golden_seed_restores_and_is_cleaned_up_to_nothing(client: InstanceClient, loaded: Any) -> None:
    seed: schema.InlineSeed = loaded.case.seed
    before = await inventory(client)
    thread_id, restored, _ = await _restore(client, seed)
    try:
        assert restored.outcome.restored
        created = restored.created
        # Workflows and agents keep the per-run ids the harness chose; tables and folders get n8n's.
        assert created.workflow_ids == [restored.outcome.id_map[w.id] for w in seed.workflows]
        assert len(created.data_table_ids) == len(seed.data_tables)
        assert len(created.folder_ids) == len(seed.folders)
        assert created.agent_ids == [restored.outcome.id_map[a.id] for a in seed.agents]
        for seed_workflow in seed.workflows:
            workflow = await client.get_workflow(restored.outcome.id_map[seed_workflow.id])
            assert workflow.name == restored.workflow_names[seed_workflow.id]
            assert len(workflow.nodes) == len(seed_workflow.nodes)
        messages = await client.thread_messages(thread_id)
        assert len(messages) == len(seed.messages)
        for agent in seed.agents:
            read = await client.get_agent(created.project_id, restored.outcome.id_map[agent.id])
            assert read.config["name"] == agent.config["name"]
            assert set(read.skills) == set(agent.skills)
        for outcome in restored.outcome.prior_runs:
            # With no model for n8n's mock, a prior run is refused as the mock's own failure: never "ran".
            if not outcome.ran:
                assert outcome.error is not None
                assert outcome.error.startswith("FRAMEWORK ISSUE:")
    finally:
        await cleanup_created(client, restored.created)
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


async def test_a_seed_with_every_feature_restores_as_the_harness_expects(client: InstanceClient) -> None:
    tag = uuid.uuid4().hex[:8]
    seed = parse_case(
        {
            **CASE,
            "seed": {
                "mode": "inline",
                "messages": [{"role": "user", "text": "Build the digest"}, {"role": "assistant", "text": "Built it."}],
                "folders": [
                    {"id": "fold-root-0001", "name": f"Ops {tag}"},
                    {"id": "fold-kid-00001", "name": "Alerts", "parentFolderId": "fold-root-0001"},
                ],
                "dataTables": [
                    {
                        "id": "tbl-orders-0001",
                        "name": "orders",
                        "columns": [{"name": "order_ref", "type": "string"}, {"name": "amount", "type": "number"}],
                    }
                ],
                "workflows": [
                    {
                        "id": "wf-digest-000001",
                        "name": f"Digest {tag}",
                        "parentFolderId": "fold-kid-00001",
                        "nodes": [
                            {
                                "id": "n-trigger-0001",
                                "name": "When clicking Execute",
                                "type": "n8n-nodes-base.manualTrigger",
                                "typeVersion": 1,
                                "position": [0, 0],
                                "parameters": {},
                            },
                            {
                                "id": "n-read-000001",
                                "name": "Read orders",
                                "type": "n8n-nodes-base.dataTable",
                                "typeVersion": 1,
                                "position": [220, 0],
                                "parameters": {"operation": "get", "dataTableId": "tbl-orders-0001"},
                            },
                        ],
                        "connections": {
                            "When clicking Execute": {"main": [[{"node": "Read orders", "type": "main", "index": 0}]]}
                        },
                    }
                ],
                "agents": [
                    {
                        "id": "agent-helper-01",
                        "config": {
                            "name": f"Helper {tag}",
                            "model": "anthropic/claude-sonnet-4-5",
                            "instructions": "Help the ops team.",
                            "skills": [{"type": "skill", "id": "skillTriage01"}],
                            "subAgents": {"agents": [{"agentId": "agent-triage-1"}]},
                            "tools": [],
                        },
                        "skills": {
                            "skillTriage01": {"name": "Triage", "description": "Sort", "instructions": "Sort tickets."}
                        },
                    },
                    {
                        "id": "agent-triage-1",
                        "config": {"name": f"Triage {tag}", "model": "", "instructions": "Route.", "tools": []},
                    },
                ],
                "projects": [{"name": f"Seeded project {tag}"}],
                "priorRuns": [{"workflow": "wf-digest-000001", "hints": "Three orders today."}],
            },
        }
    ).seed
    assert isinstance(seed, schema.InlineSeed)
    before = await inventory(client)
    thread_id, restored, _ = await _restore(client, seed)
    created = restored.created
    try:
        root_id, child_id = created.folder_ids[1], created.folder_ids[0]  # deepest first: the order to delete
        folders = {f.id: f for f in await client.list_folders(created.project_id)}
        assert folders[child_id].parentFolderId == root_id
        assert folders[root_id].name == f"Ops {tag}"
        workflow_id = restored.outcome.id_map["wf-digest-000001"]
        workflow = await client.get_workflow(workflow_id)
        assert workflow.parentFolderId == child_id
        (table_id,) = created.data_table_ids
        # n8n wrote its own table id into the node, in place of the seed's.
        assert workflow.nodes[1].parameters["dataTableId"] == table_id
        tables = {str(t["id"]): t for t in await client.list_data_tables(created.project_id)}
        assert str(tables[table_id]["name"]).startswith("orders [seed ")
        assert sorted(c["name"] for c in tables[table_id]["columns"]) == ["amount", "order_ref"]
        rows = [{"order_ref": "A-1", "amount": 120}, {"order_ref": "A-2", "amount": 80}]
        assert await client.seed_table_rows(thread_id, table_id, rows) == 2
        stored = data(await client.http.get(f"/rest/projects/{created.project_id}/data-tables/{table_id}/rows"))
        assert sorted(r["order_ref"] for r in stored["data"]) == ["A-1", "A-2"]
        with pytest.raises(InstanceError) as by_seed_id:  # n8n wants its own id, not the seed's
            await client.seed_table_rows(thread_id, "tbl-orders-0001", rows)
        assert by_seed_id.value.status == 404
        helper = await client.get_agent(created.project_id, restored.outcome.id_map["agent-helper-01"])
        assert helper.skills["skillTriage01"]["instructions"] == "Sort tickets."
        assert [p.name for p in await client.list_projects() if p.id in created.project_ids] == [
            f"Seeded project {tag}"
        ]
        assert len(restored.outcome.prior_runs) == 1
        assert len(await client.thread_messages(thread_id)) == 2
    finally:
        await cleanup_created(client, created)
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


@pytest.mark.parametrize(
    ("table", "agent", "n8n_says"),
    [
        ({"columns": [{"name": "Id", "type": "string"}]}, None, "is reserved as a system column name"),
        ({"columns": [{"name": "updatedat", "type": "date"}]}, None, "is reserved as a system column name"),
        ({"columns": [{"name": "unit cost", "type": "number"}]}, None, "Only alphabetical characters"),
        (None, {"model": "gpt-4o-mini"}, 'Model must be "provider/model-name" format'),
        (None, {"model": "openai/"}, 'Model must be "provider/model-name" format'),
    ],
)
async def test_what_validate_refuses_n8n_refuses(
    client: InstanceClient, table: dict[str, Any] | None, agent: dict[str, Any] | None, n8n_says: str
) -> None:
    """The rules ``validate`` applies to seeds are n8n's: the same seed n8n refuses at restore (so a run
    would fail at run time) fails ``validate`` first, naming the field."""
    seed: dict[str, Any] = {"mode": "inline"}
    if table is not None:
        seed["dataTables"] = [{"id": "tbl-refused-01", "name": "refused", **table}]
    if agent is not None:
        seed["agents"] = [{"id": "agent-refused-1", "config": {"name": "Refused", "instructions": "x", **agent}}]
    with pytest.raises(CaseSchemaError) as refused_here:
        parse_case({**CASE, "seed": seed})
    assert [p.path.split(".")[0] for p in refused_here.value.problems] == ["seed"]
    before = await inventory(client)
    personal = await client.personal_project()
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, personal.id)
    try:
        request = wire.RestoreThreadRequest(
            threadId=thread_id, dataTables=seed.get("dataTables", []), agents=seed.get("agents", [])
        )
        with pytest.raises(InstanceError) as refused_there:
            await client.restore_thread(request)
        assert refused_there.value.status == 400
        assert n8n_says in str(refused_there.value)
        assert "stacktrace" not in str(refused_there.value)  # the server's message, not its dev-mode JSON
    finally:
        await client.delete_thread(thread_id)
    assert await inventory(client) == before
