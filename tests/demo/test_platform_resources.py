"""Contract tests of resources and eval routes: CRUD, credentials view, restore-thread, run debug."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.demo.conftest import (
    MEMBER,
    MEMBER_PASSWORD,
    ScriptedAgent,
    chat,
    data,
    events,
    finished,
    new_thread,
    session,
)

pytestmark = pytest.mark.anyio


async def test_projects(owner: httpx.AsyncClient) -> None:
    personal = data(await owner.get("/rest/projects/personal"))
    assert personal["type"] == "personal"
    team = data(await owner.post("/rest/projects", json={"name": "Seed project"}))
    assert team["type"] == "team"
    assert {p["id"] for p in data(await owner.get("/rest/projects"))} == {personal["id"], team["id"]}
    assert (await owner.post("/rest/projects", json={"name": " padded "})).status_code == 422
    assert (await owner.delete(f"/rest/projects/{personal['id']}")).status_code == 400
    deleted = await owner.delete(f"/rest/projects/{team['id']}")
    assert (deleted.status_code, deleted.json()) == (200, {})  # as n8n: an empty object
    assert [p["id"] for p in data(await owner.get("/rest/projects"))] == [personal["id"]]


async def test_workflow_crud_and_folders(owner: httpx.AsyncClient) -> None:
    project = data(await owner.get("/rest/projects/personal"))["id"]
    folder = data(await owner.post(f"/rest/projects/{project}/folders", json={"name": "Reports"}))
    node = {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}}
    created = data(
        await owner.post("/rest/workflows", json={"name": "Daily", "nodes": [node], "parentFolderId": folder["id"]})
    )
    assert created["parentFolder"] == {"id": folder["id"], "name": "Reports"}
    assert created["projectId"] == project
    listed = await owner.get("/rest/workflows")
    assert listed.json()["count"] == 1
    assert listed.json()["data"][0]["parentFolderId"] == folder["id"]
    renamed = data(await owner.patch(f"/rest/workflows/{created['id']}", json={"name": "Daily report"}))
    assert renamed["name"] == "Daily report"
    assert renamed["versionId"] != created["versionId"]
    assert (await owner.patch(f"/rest/workflows/{created['id']}", json={"nodes": [{"name": "x"}]})).status_code == 422
    bad_folder = await owner.post("/rest/workflows", json={"name": "X", "parentFolderId": "nope"})
    assert bad_folder.status_code == 422
    # As n8n: deleting a folder archives its workflows at the project root; they still list.
    deleted = await owner.delete(f"/rest/projects/{project}/folders/{folder['id']}")
    assert (deleted.status_code, deleted.json()) == (200, {})
    left = data(await owner.get(f"/rest/workflows/{created['id']}"))
    assert (left["isArchived"], left["parentFolderId"], left["parentFolder"]) == (True, None, None)
    # A workflow is deleted only once archived; a missing one answers 403, as n8n does.
    fresh = data(await owner.post("/rest/workflows", json={"name": "Loose", "nodes": [node]}))
    refused = await owner.delete(f"/rest/workflows/{fresh['id']}")
    assert refused.status_code == 400
    assert refused.json()["message"] == "Workflow must be archived before it can be deleted."
    assert data(await owner.delete(f"/rest/workflows/{created['id']}")) is True
    assert (await owner.delete(f"/rest/workflows/{created['id']}")).status_code == 403
    assert (await owner.post(f"/rest/workflows/{created['id']}/archive")).status_code == 403


async def test_lists_page_with_take_and_skip(owner: httpx.AsyncClient) -> None:
    project = data(await owner.get("/rest/projects/personal"))["id"]
    for index in range(5):
        data(await owner.post(f"/rest/projects/{project}/folders", json={"name": f"F{index}"}))
        data(
            await owner.post(
                f"/rest/projects/{project}/data-tables",
                json={"name": f"T{index}", "columns": [{"name": "a", "type": "number"}]},
            )
        )
    page = (await owner.get(f"/rest/projects/{project}/folders", params={"take": 2, "skip": 3})).json()
    assert [f["name"] for f in page["data"]] == ["F3", "F4"]
    assert page["count"] == 5
    # As n8n: folders and workflows list as {count, data} at the top; data tables inside data.
    tables = data(await owner.get(f"/rest/projects/{project}/data-tables", params={"take": 10}))
    assert (tables["count"], len(tables["data"])) == (5, 5)
    for index in range(5, 12):
        data(await owner.post(f"/rest/projects/{project}/folders", json={"name": f"F{index}"}))
    default = (await owner.get(f"/rest/projects/{project}/folders")).json()
    assert (default["count"], len(default["data"])) == (12, 10)  # n8n's folder list takes 10 unless told
    assert (await owner.get(f"/rest/projects/{project}/folders", params={"take": -1})).status_code == 422


async def test_credentials_crud_data_only_on_request_and_test(owner: httpx.AsyncClient) -> None:
    real = data(
        await owner.post(
            "/rest/credentials", json={"name": "Slack", "type": "slackApi", "data": {"accessToken": "xoxb-1"}}
        )
    )
    fake = data(
        await owner.post(
            "/rest/credentials",
            json={"name": "Slack 2", "type": "slackApi", "data": {"accessToken": "eval-placeholder"}},
        )
    )
    assert "data" not in real
    assert all("data" not in c for c in data(await owner.get("/rest/credentials")))
    assert "data" not in data(await owner.get(f"/rest/credentials/{real['id']}"))
    assert data(await owner.get(f"/rest/credentials/{real['id']}", params={"includeData": "true"}))["data"] == {
        "accessToken": "xoxb-1"
    }
    passed = data(await owner.post("/rest/credentials/test", json={"credentials": {"id": real["id"]}}))
    failed = data(await owner.post("/rest/credentials/test", json={"credentials": {"id": fake["id"]}}))
    assert passed["status"] == "OK"
    assert failed["status"] == "Error"
    # With a thread context, a bypass-listed id passes even with the placeholder token.
    await new_thread(owner, "t-cred-test")
    data(
        await owner.post(
            "/rest/instance-ai/eval/thread-credential-allowlist",
            json={"threadId": "t-cred-test", "credentialIds": [fake["id"]], "bypassCredentialTest": [fake["id"]]},
        )
    )
    bypassed = data(
        await owner.post("/rest/credentials/test", json={"credentials": {"id": fake["id"]}, "threadId": "t-cred-test"})
    )
    assert bypassed["status"] == "OK"
    data(await owner.delete(f"/rest/credentials/{real['id']}"))
    assert (await owner.get(f"/rest/credentials/{real['id']}")).status_code == 404


async def test_credentials_are_per_owner(demo: str) -> None:
    async with session(demo) as owner, session(demo, MEMBER, MEMBER_PASSWORD) as member:
        cred = data(await owner.post("/rest/credentials", json={"name": "S", "type": "slackApi", "data": {"a": "b"}}))
        assert data(await member.get("/rest/credentials")) == []
        assert (await member.get(f"/rest/credentials/{cred['id']}")).status_code == 404


async def _tool_run(client: httpx.AsyncClient, thread_id: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    async with events(client, thread_id) as reader:
        await chat(client, thread_id, steps)
        seen = await reader.until(finished)
    return [e["payload"] for e in seen if e["type"] in ("tool-result", "tool-error")]


async def test_allowlist_pins_the_agents_credential_view(owner: httpx.AsyncClient) -> None:
    ids = []
    for name, token in (("A", "eval-placeholder"), ("B", "eval-placeholder"), ("C", "real")):
        body = {"name": name, "type": "slackApi", "data": {"accessToken": token}}
        ids.append(data(await owner.post("/rest/credentials", json=body))["id"])
    await new_thread(owner, "t-unpinned")
    unpinned = await _tool_run(owner, "t-unpinned", [{"tool": "list-credentials"}])
    assert {c["id"] for c in unpinned[0]["result"]["credentials"]} == set(ids)

    await new_thread(owner, "t-pinned")
    pin = {"threadId": "t-pinned", "credentialIds": ids[:2], "bypassCredentialTest": [ids[0], ids[2]]}
    assert data(await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin)) == {"ok": True}
    results = await _tool_run(
        owner,
        "t-pinned",
        [
            {"tool": "list-credentials", "args": {"type": "slackApi"}},
            {"tool": "test-credential", "args": {"credentialId": ids[0]}},
            {"tool": "test-credential", "args": {"credentialId": ids[1]}},
            {"tool": "test-credential", "args": {"credentialId": ids[2]}},
        ],
    )
    assert [c["id"] for c in results[0]["result"]["credentials"]] == ids[:2]
    assert results[1]["result"]["success"] is True  # bypass-listed
    assert results[2]["result"]["success"] is False  # placeholder, not bypassed
    assert "not available" in results[3]["error"]  # bypass without allowlist is not honoured: unseen
    # [] = sees none.
    data(await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json={"threadId": "t-pinned"}))
    empty = await _tool_run(owner, "t-pinned", [{"tool": "list-credentials"}])
    assert empty[0]["result"]["credentials"] == []
    unknown = {"threadId": "t-pinned", "credentialIds": ["nope"]}
    assert (await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json=unknown)).status_code == 404


def _seed(thread_id: str, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "threadId": thread_id,
        "folders": [
            {"id": "folder-child-1", "name": "Child", "parentFolderId": "folder-root-1"},
            {"id": "folder-root-1", "name": "Root"},
        ],
        "dataTables": [{"id": "table-seed-1", "name": "Leads", "columns": [{"name": "email", "type": "string"}]}],
        "workflows": [
            {
                "id": "wf-seed-0001",
                "name": "Lead sync [seed ab12cd34]",
                "nodes": [
                    {"name": "Manual Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}},
                    {
                        "name": "Data Table",
                        "type": "n8n-nodes-base.dataTable",
                        "parameters": {"dataTableId": "table-seed-1"},
                    },
                ],
                "connections": {"Manual Trigger": {"main": [[{"node": "Data Table", "type": "main", "index": 0}]]}},
                "published": True,
                "parentFolderId": "folder-child-1",
            }
        ],
        "agents": [
            {
                "id": "agent-seed-0001",
                "config": {
                    "name": "Helper",
                    "model": "anthropic/claude-sonnet-4-5",
                    "instructions": "Help with leads.",
                    "tools": [{"type": "slack", "credentials": {"slackApi": {"id": "cred-live"}}}],
                },
                "skills": {"skill-1": {"name": "Greet", "instructions": "Say hi"}},
            }
        ],
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "type": "llm",
                "content": [{"type": "text", "text": "Build a lead sync"}],
                "createdAt": "2020-01-01T00:00:00.000Z",
            },
            {
                "id": "m2",
                "role": "assistant",
                "type": "llm",
                "content": [{"type": "text", "text": "Done."}],
                "createdAt": "2020-01-01T00:00:01.000Z",
            },
        ],
    }
    body.update(overrides)
    return body


async def test_restore_thread_creates_everything_in_order(owner: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    project = await new_thread(owner, "t-restore")
    restored = data(await owner.post("/rest/instance-ai/eval/restore-thread", json=_seed("t-restore")))
    assert restored["ok"] is True
    assert restored["restored"] == 2
    assert restored["workflowIds"] == ["wf-seed-0001"]
    assert restored["agentIds"] == ["agent-seed-0001"]
    child_id, root_id = restored["folderIds"]
    folders = {f["id"]: f for f in (await owner.get(f"/rest/projects/{project}/folders")).json()["data"]}
    assert folders[child_id]["parentFolderId"] == root_id
    table_id = restored["dataTableIds"][0]
    workflow = data(await owner.get("/rest/workflows/wf-seed-0001"))
    assert workflow["active"] is True
    assert workflow["parentFolderId"] == child_id
    assert workflow["nodes"][1]["parameters"]["dataTableId"] == table_id  # seed table id rewritten
    config = data(await owner.get(f"/rest/projects/{project}/agents/v2/agent-seed-0001/config"))["config"]
    assert config["tools"][0]["credentials"]["slackApi"]["id"] == ""
    skills = data(await owner.get(f"/rest/projects/{project}/agents/v2/agent-seed-0001/skills"))
    assert skills["skill-1"]["name"] == "Greet"
    messages = data(await owner.get("/rest/instance-ai/threads/t-restore/messages"))["messages"]
    assert [(m["id"], m["seeded"]) for m in messages] == [("m1", True), ("m2", True)]
    # The agent sees the seeded history on its next turn.
    async with events(owner, "t-restore") as reader:
        await chat(owner, "t-restore", "hello")
        await reader.until(finished)
    assert [h.id for h in agent.turns[0].history] == ["m1", "m2"]
    assert agent.turns[0].history[0].seeded is True
    data(await owner.delete(f"/rest/projects/{project}/agents/v2/agent-seed-0001"))
    assert (await owner.get(f"/rest/projects/{project}/agents/v2/agent-seed-0001/config")).status_code == 404


async def _counts(client: httpx.AsyncClient, project: str, thread_id: str) -> tuple[int, int, int, int]:
    workflows = (await client.get("/rest/workflows")).json()["count"]
    folders = (await client.get(f"/rest/projects/{project}/folders")).json()["count"]
    tables = data(await client.get(f"/rest/projects/{project}/data-tables"))["count"]
    messages = len(data(await client.get(f"/rest/instance-ai/threads/{thread_id}/messages"))["messages"])
    return workflows, folders, tables, messages


async def test_restore_that_fails_halfway_leaves_nothing_behind(owner: httpx.AsyncClient) -> None:
    project = await new_thread(owner, "t-rollback")
    # Two messages share an id: the failure comes after folders, tables, workflows and agents were written.
    dup = _seed("t-rollback")["messages"]
    broken = _seed("t-rollback", messages=[dup[0], dup[0]])
    response = await owner.post("/rest/instance-ai/eval/restore-thread", json=broken)
    assert response.status_code == 409
    assert "rolled back" in response.json()["message"]
    assert await _counts(owner, project, "t-rollback") == (0, 0, 0, 0)
    assert (await owner.get(f"/rest/projects/{project}/agents/v2/agent-seed-0001/config")).status_code == 404
    # Then the same seed restores cleanly, and a second restore of the same ids is a 409 with nothing created.
    data(await owner.post("/rest/instance-ai/eval/restore-thread", json=_seed("t-rollback")))
    before = await _counts(owner, project, "t-rollback")
    await new_thread(owner, "t-rollback-2")
    again = await owner.post("/rest/instance-ai/eval/restore-thread", json=_seed("t-rollback-2"))
    assert again.status_code == 409
    assert "wf-seed-0001" in again.json()["message"]
    assert await _counts(owner, project, "t-rollback") == before


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ({"folders": [{"id": "short", "name": "X"}]}, "folders[0].id"),
        ({"folders": [{"id": "folder-aaaa1", "name": "a/b"}]}, "folders[0].name"),
        ({"folders": [{"id": "folder-aaaa1", "name": "A", "parentFolderId": "folder-aaaa1"}]}, "cycle"),
        ({"workflows": [{"id": "wf-x-000001", "name": "W", "parentFolderId": "missing-folder"}]}, "parentFolderId"),
        ({"messages": [{"role": "user", "content": []}]}, "messages[0].id"),
        ({"agents": [{"id": "agent-x-0001", "config": "nope"}]}, "agents[0].config"),
        ({"bogus": 1}, "bogus"),
    ],
)
async def test_restore_validation_is_422_naming_the_field(
    owner: httpx.AsyncClient, override: dict[str, Any], needle: str
) -> None:
    project = await new_thread(owner, "t-bad-restore")
    response = await owner.post("/rest/instance-ai/eval/restore-thread", json=_seed("t-bad-restore", **override))
    assert response.status_code == 422, response.text
    assert needle in response.json()["message"]
    assert await _counts(owner, project, "t-bad-restore") == (0, 0, 0, 0)


async def test_seed_table_rows(owner: httpx.AsyncClient) -> None:
    project = await new_thread(owner, "t-rows")
    table = data(
        await owner.post(
            f"/rest/projects/{project}/data-tables",
            json={"name": "Orders", "columns": [{"name": "amount", "type": "number"}]},
        )
    )
    body = {"threadId": "t-rows", "tableId": table["id"], "rows": [{"amount": 5}, {"amount": 500}]}
    assert data(await owner.post("/rest/instance-ai/eval/seed-data-table-rows", json=body))["rowCount"] == 2
    body["rows"] = [{"amount": 7}]
    data(await owner.post("/rest/instance-ai/eval/seed-data-table-rows", json=body))
    rows = data(await owner.get(f"/rest/projects/{project}/data-tables/{table['id']}/rows"))
    assert [r["amount"] for r in rows["data"]] == [7]  # clear, then insert
    body["rows"] = [{"price": 1}]
    bad = await owner.post("/rest/instance-ai/eval/seed-data-table-rows", json=body)
    assert bad.status_code == 422
    assert "price" in bad.json()["message"]


async def test_agent_tools_build_edit_move_and_list(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-build")
    workflow = {
        "name": "Alerts",
        "nodes": [{"name": "Webhook", "type": "n8n-nodes-base.webhook", "parameters": {"path": "x"}}],
        "connections": {},
    }
    built = await _tool_run(owner, "t-build", [{"tool": "build-workflow", "args": {"workflow": workflow}}])
    workflow_id = built[0]["result"]["workflowId"]
    steps: list[dict[str, Any]] = [
        {"tool": "build-workflow", "args": {"workflowId": workflow_id, "workflow": {**workflow, "name": "Alerts v2"}}},
        {"tool": "move-workflow", "args": {"workflowId": workflow_id, "folderPath": "Ops/Alerts"}},
        {"tool": "list-workflows", "args": {"folderPath": "Ops/Alerts"}},
        {"tool": "list-folders"},
        {"tool": "create-data-table", "args": {"name": "Log", "columns": [{"name": "msg", "type": "string"}]}},
        {"tool": "build-agent", "args": {"config": {"name": "Bot"}, "skills": {}}},
        {"tool": "build-workflow", "args": {"workflow": {"name": "Bad", "nodes": [{"name": "A"}]}}},
    ]
    results = await _tool_run(owner, "t-build", steps)
    assert results[0]["result"]["workflowId"] == workflow_id  # edited in place
    assert [w["name"] for w in results[2]["result"]["workflows"]] == ["Alerts v2"]
    assert results[2]["result"]["workflows"][0]["folderPath"] == "Ops/Alerts"
    assert sorted(f["path"] for f in results[3]["result"]["folders"]) == ["Ops", "Ops/Alerts"]
    assert results[4]["result"]["table"]["name"] == "Log"
    assert results[5]["result"]["agentId"]
    assert "nodes[0].type" in results[6]["error"]
    assert len((await owner.get("/rest/workflows")).json()["data"]) == 1


async def test_run_debug_has_steps_with_usage(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-debug")
    async with events(owner, "t-debug") as reader:
        run_id = await chat(owner, "t-debug", [{"tool": "list-workflows"}, {"say": "x" * 400}])
        await reader.until(finished)
    runs = data(await owner.get("/rest/instance-ai/debug/threads/t-debug/runs"))["runs"]
    assert [r["runId"] for r in runs] == [run_id]
    debug = data(await owner.get(f"/rest/instance-ai/debug/runs/{run_id}"))
    # n8n's run-debug shape: {stepNumber, input, output}, the AI SDK's usage in the output.
    assert [s["stepNumber"] for s in debug["steps"]] == [0, 1]
    assert isinstance(debug["startedAt"], int)
    assert runs[0]["startedAt"] == debug["startedAt"]
    assert (runs[0]["stepCount"], debug["nextStepIndex"]) == (2, 2)
    usages = [s["output"]["usage"] for s in debug["steps"]]
    assert len(usages) == 2  # one per tool call, one final
    assert usages[0]["inputTokenDetails"]["cacheReadTokens"] == 0
    assert usages[1]["inputTokens"] > usages[0]["inputTokens"]
    assert usages[1]["inputTokenDetails"]["cacheReadTokens"] == usages[0]["inputTokens"]
    assert usages[1]["outputTokens"] >= 100  # the 400 characters it said
    assert usages[1]["totalTokens"] == usages[1]["inputTokens"] + usages[1]["outputTokens"]
    assert (await owner.get("/rest/instance-ai/debug/runs/nope")).status_code == 404


async def test_seeded_history_makes_the_opening_step_bigger(owner: httpx.AsyncClient) -> None:
    openings = []
    for thread_id, seeded in (("t-small", False), ("t-big", True)):
        await new_thread(owner, thread_id)
        if seeded:
            long_text = "The weekly report goes to #ops every Monday. " * 40
            messages = [{"id": "s1", "role": "user", "content": [{"type": "text", "text": long_text}]}]
            data(
                await owner.post(
                    "/rest/instance-ai/eval/restore-thread", json={"threadId": thread_id, "messages": messages}
                )
            )
        async with events(owner, thread_id) as reader:
            run_id = await chat(owner, thread_id, "hello")
            await reader.until(finished)
        steps = data(await owner.get(f"/rest/instance-ai/debug/runs/{run_id}"))["steps"]
        openings.append(steps[0]["output"]["usage"]["inputTokens"])
    assert openings[1] >= openings[0] + 400


async def test_conversations_in_one_project_do_not_see_each_others_work(owner: httpx.AsyncClient) -> None:
    await new_thread(owner, "t-iso-a")
    await new_thread(owner, "t-iso-b")
    shared = data(await owner.post("/rest/workflows", json={"name": "Made in the UI", "nodes": [], "connections": {}}))
    workflow = {"name": "Same name", "nodes": [], "connections": {}}
    built = await _tool_run(owner, "t-iso-a", [{"tool": "build-workflow", "args": {"workflow": workflow}}])
    a_id = built[0]["result"]["workflowId"]
    results = await _tool_run(
        owner,
        "t-iso-b",
        [
            {"tool": "list-workflows"},
            {"tool": "get-workflow", "args": {"workflowId": a_id}},
            {"tool": "build-workflow", "args": {"workflowId": a_id, "workflow": workflow}},
        ],
    )
    assert [w["id"] for w in results[0]["result"]["workflows"]] == [shared["id"]]
    assert "not found" in results[1]["error"]
    assert "not found" in results[2]["error"]
    # Attaching A's workflow to B hands it over: B may see and edit it from then on.
    async with events(owner, "t-iso-b") as reader:
        attachment = {"type": "workflow", "id": a_id, "name": "Same name"}
        await chat(owner, "t-iso-b", [{"tool": "get-workflow", "args": {"workflowId": a_id}}], attachments=[attachment])
        seen = await reader.until(finished)
    assert any(e["type"] == "tool-result" for e in seen)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"dataTables": [{"id": "table-seed-1", "name": "L", "columns": [{"name": "ID", "type": "string"}]}]},
            'Column name "ID" is reserved as a system column name.',
        ),
        (
            {
                "dataTables": [
                    {"id": "table-seed-1", "name": "L", "columns": [{"name": "dryrunstate", "type": "string"}]}
                ]
            },
            'Column name "dryrunstate" is reserved as a testing column name.',
        ),
        (
            {"dataTables": [{"id": "table-seed-1", "name": "L", "columns": [{"name": "e-mail", "type": "string"}]}]},
            "Only alphabetical characters and non-leading numbers and underscores are allowed",
        ),
        (
            {"agents": [{"id": "agent-seed-0001", "config": {"name": "H", "model": "gpt-4o", "instructions": ""}}]},
            'Model must be "provider/model-name" format',
        ),
    ],
)
async def test_restore_refuses_what_n8n_refuses_with_its_words(
    owner: httpx.AsyncClient, override: dict[str, Any], message: str
) -> None:
    """As n8n 2.41: system column names and bad spellings, and agent models that are not
    ``provider/model``, are refused with its messages, nothing created."""
    project = await new_thread(owner, "t-n8n-rules")
    body = {"threadId": "t-n8n-rules", "messages": [], **override}
    refused = await owner.post("/rest/instance-ai/eval/restore-thread", json=body)
    assert refused.status_code == 400
    assert message in refused.json()["message"]
    assert await _counts(owner, project, "t-n8n-rules") == (0, 0, 0, 0)
    table = {"name": "Direct", "columns": [{"name": "createdAt", "type": "date"}]}
    direct = await owner.post(f"/rest/projects/{project}/data-tables", json=table)
    assert (direct.status_code, direct.json()["message"]) == (
        400,
        'Column name "createdAt" is reserved as a system column name.',
    )
