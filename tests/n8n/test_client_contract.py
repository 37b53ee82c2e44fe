"""Every call ``InstanceClient`` and the credential seeder make, against the real n8n 2.41, asserting what
the client parsed (not only that the call answered).

Each test leaves the instance as it found it (:func:`tests.n8n.conftest.inventory`).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from tests.n8n.conftest import data, inventory
from tests.n8n.local import LocalN8n
from threadcase import wire
from threadcase.case.credential_templates import SUPPORTED_CREDENTIAL_TYPES
from threadcase.case.schema import CredentialDecl
from threadcase.credentials import CredentialSeeder
from threadcase.errors import InstanceError, MissingRouteError, ProviderError
from threadcase.instance import InstanceClient

pytestmark = pytest.mark.anyio

_FINISHED = frozenset({"success", "error", "crashed", "canceled"})


async def _thread(client: InstanceClient) -> str:
    personal = await client.personal_project()
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, personal.id, source_context={"evalCase": "n8n-contract"})
    return thread_id


def _manual_workflow(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "nodes": [
            {
                "id": str(uuid.uuid4()),
                "name": "When clicking Execute",
                "type": "n8n-nodes-base.manualTrigger",
                "typeVersion": 1,
                "position": [0, 0],
                "parameters": {},
            },
            {
                "id": str(uuid.uuid4()),
                "name": "Greeting",
                "type": "n8n-nodes-base.set",
                "typeVersion": 3.4,
                "position": [220, 0],
                "parameters": {
                    "assignments": {
                        "assignments": [{"id": "a1", "name": "greeting", "value": "hello", "type": "string"}]
                    },
                    "options": {},
                },
            },
        ],
        "connections": {"When clicking Execute": {"main": [[{"node": "Greeting", "type": "main", "index": 0}]]}},
        "settings": {},
    }


async def _finished_execution(client: InstanceClient, execution_id: str) -> dict[str, Any]:
    """The execution once n8n says it ended (it runs in the background after the run call answered)."""
    with anyio.fail_after(60):
        for _ in range(600):
            execution = await client.get_execution(execution_id)
            if execution["status"] in _FINISHED:
                return execution
            await anyio.sleep(0.1)
    raise AssertionError(f"execution {execution_id} never finished")


async def test_login_projects_and_a_team_project(client: InstanceClient) -> None:
    before = await inventory(client)
    personal = await client.personal_project()
    assert (personal.type, bool(personal.id)) == ("personal", True)
    listed = await client.list_projects()
    assert personal.id in {p.id for p in listed}  # n8n lists the personal project too
    name = f"threadcase contract {uuid.uuid4().hex[:8]}"
    team = await client.create_project(name)
    assert (team.type, team.name) == ("team", name)
    assert team.id in {p.id for p in await client.list_projects()}
    await client.delete_project(team.id)
    await client.delete_project(team.id)  # a missing project counts as deleted
    assert await inventory(client) == before


async def test_a_wrong_password_is_refused_in_one_line(n8n: LocalN8n) -> None:
    with pytest.raises(InstanceError, match=r"login refused for .*check the email and password"):
        async with InstanceClient(n8n.base_url, email=n8n.email, password="Not-The-Password-9"):
            pass


async def test_thread_create_status_messages_delete(client: InstanceClient) -> None:
    before = await inventory(client)
    thread_id = await _thread(client)
    status = await client.thread_status(thread_id)
    assert (status.hasActiveRun, status.isSuspended, status.runId, status.settled) == (False, False, None, True)
    assert (status.backgroundTasks, status.memoryTasks) == ([], [])
    assert await client.thread_messages(thread_id) == []
    assert await client.thread_messages(thread_id, raw=False) == []
    assert (await inventory(client)).threads == before.threads + 1
    await client.delete_thread(thread_id)
    await client.delete_thread(thread_id)  # a missing thread counts as deleted
    with pytest.raises(InstanceError) as gone:
        await client.thread_messages(thread_id)
    assert gone.value.status == 404
    assert await inventory(client) == before


async def test_a_chat_without_a_model_is_a_provider_error_with_n8ns_words(
    client: InstanceClient, no_model: None
) -> None:
    thread_id = await _thread(client)
    try:
        with pytest.raises(ProviderError) as refused:
            await client.chat(thread_id, wire.ChatRequest(message="Build me a digest"))
        assert "no model configured" in refused.value.reason
        assert refused.value.status == 400
    finally:
        await client.delete_thread(thread_id)


async def test_the_missing_memory_route_is_found_once_per_lane(n8n: LocalN8n, client: InstanceClient) -> None:
    thread_id = await _thread(client)
    try:
        with pytest.raises(MissingRouteError, match="no route GET"):
            await client.thread_memory(thread_id)
        assert client.features.memory_route is False
        # Another client of the same lane never asks again: pointed at a port where nothing listens, a
        # request would fail as "no answer", not as the missing route it already knows about.
        sibling = InstanceClient("http://127.0.0.1:9", email=n8n.email, password=n8n.password, features=client.features)
        with pytest.raises(MissingRouteError, match="no memory route"):
            await sibling.thread_memory(thread_id)
        await sibling.aclose()
    finally:
        await client.delete_thread(thread_id)


async def test_a_licence_403_names_the_feature_to_switch_on(client: InstanceClient) -> None:
    personal = await client.personal_project()
    switch = {"feature": "feat:folders", "enabled": False}
    answer = await client.http.patch("/rest/e2e/feature", json=switch)
    if answer.status_code != 200:
        pytest.skip("this n8n runs without E2E_TESTS=true: its licence switches cannot be flipped here")
    try:
        with pytest.raises(InstanceError) as refused:
            await client.list_folders(personal.id)
        assert refused.value.status == 403
        message = str(refused.value)
        assert "licence lacks feat:folders" in message
        assert '{"feature": "feat:folders", "enabled": true}' in message
    finally:
        await client.http.patch("/rest/e2e/feature", json={**switch, "enabled": True})
    assert isinstance(await client.list_folders(personal.id), list)


async def test_every_credential_template_is_created_pinned_and_deleted(client: InstanceClient) -> None:
    before = await inventory(client)
    thread_id = await _thread(client)
    seeder = CredentialSeeder(client, environ={})
    declared = [CredentialDecl(type=t) for t in sorted(SUPPORTED_CREDENTIAL_TYPES)]
    declared += [
        CredentialDecl(type="slackApi", name="Revoked Slack", valid=False),
        CredentialDecl(type="notionApi", blank=True),
    ]
    try:
        created = await seeder.seed(thread_id, declared)
        assert len(created) == len(declared)
        listed = {c.id: c for c in await client.list_credentials()}
        for credential in created:
            assert listed[credential.id].type == credential.type
            assert listed[credential.id].name == credential.name
            assert listed[credential.id].data is None  # the secret never enters our objects
        assert len({c.name for c in created}) == len(created)  # a second credential of a name gets " #2"
        extra = await seeder.create_for_proxy(thread_id, "githubApi", working=False)
        await seeder.mark_working(thread_id, [extra.id])
        assert next(c for c in seeder.seeded if c.id == extra.id).working
        assert seeder.bypassed_count == len(created) - 2 + 1  # the invalid and blank ones are not bypassed
    finally:
        await seeder.cleanup()
        await client.delete_thread(thread_id)
    assert seeder.leftovers == []
    assert await inventory(client) == before
    with pytest.raises(InstanceError) as unknown:
        await client.create_credential(name="Nope", type="noSuchApi", data={})
    assert unknown.value.status == 400
    assert "Unrecognized credential type" in str(unknown.value)


async def test_the_pinned_view_decides_which_credential_a_restored_node_gets(client: InstanceClient) -> None:
    """The pin is in n8n's memory only; what shows it took effect is restore-thread resolving seed node
    credentials within the thread's allowlist: a pinned name resolves, an unpinned one is dropped."""
    before = await inventory(client)
    thread_id = await _thread(client)
    tag = uuid.uuid4().hex[:8]
    pinned = await client.create_credential(name=f"Pinned Slack {tag}", type="slackApi", data={"accessToken": "x"})
    hidden = await client.create_credential(name=f"Hidden Slack {tag}", type="slackApi", data={"accessToken": "y"})
    await client.set_credential_allowlist(thread_id, [pinned.id], [pinned.id])

    def slack_node(name: str, credential: str) -> dict[str, Any]:
        return {
            "id": str(uuid.uuid4()),
            "name": name,
            "type": "n8n-nodes-base.slack",
            "typeVersion": 2.2,
            "position": [0, 0],
            "parameters": {"resource": "message", "operation": "post", "channel": "#x", "text": "hi"},
            "credentials": {"slackApi": {"id": "seed-credential-id", "name": credential}},
        }

    workflow_id = uuid.uuid4().hex[:16]
    request = wire.RestoreThreadRequest(
        threadId=thread_id,
        workflows=[
            {
                "id": workflow_id,
                "name": f"Pin check {tag}",
                "nodes": [slack_node("Seen", pinned.name), slack_node("Unseen", hidden.name)],
                "connections": {},
            }
        ],
    )
    try:
        restored = await client.restore_thread(request)
        assert restored.workflowIds == [workflow_id]
        nodes = {n.name: n for n in (await client.get_workflow(workflow_id)).nodes}
        assert nodes["Seen"].credentials == {"slackApi": {"id": pinned.id, "name": pinned.name}}
        assert not nodes["Unseen"].credentials
    finally:
        await client.delete_workflow(workflow_id)
        for credential in (pinned, hidden):
            await client.delete_credential(credential.id)
        await client.delete_thread(thread_id)
    assert await inventory(client) == before


async def test_workflows_list_get_rename_run_executions_archive_delete(client: InstanceClient) -> None:
    before = await inventory(client)
    personal = await client.personal_project()
    name = f"Contract greeter {uuid.uuid4().hex[:8]}"
    created = data(await client.http.post("/rest/workflows", json=_manual_workflow(name)))
    workflow_id = str(created["id"])
    try:
        listed = {w.id: w for w in await client.list_workflows()}
        assert (listed[workflow_id].name, listed[workflow_id].isArchived) == (name, False)
        assert listed[workflow_id].projectId == personal.id  # from n8n's homeProject object
        workflow = await client.get_workflow(workflow_id)
        assert [n.type for n in workflow.nodes] == ["n8n-nodes-base.manualTrigger", "n8n-nodes-base.set"]
        assert workflow.parentFolderId is None
        await client.rename_workflow(workflow_id, f"{name} renamed")
        assert (await client.get_workflow(workflow_id)).name == f"{name} renamed"
        execution_id = await client.run_workflow(workflow_id)  # n8n needs the trigger named: the client finds it
        execution = await _finished_execution(client, execution_id)
        assert (execution["status"], execution["workflowId"]) == ("success", workflow_id)
        assert execution_id in [str(e["id"]) for e in await client.list_executions(workflow_id)]
    finally:
        await client.delete_workflow(workflow_id)  # refused until archived: the client archives first
    await client.delete_workflow(workflow_id)  # n8n answers a missing workflow 403: counted as deleted
    with pytest.raises(InstanceError) as gone:
        await client.get_workflow(workflow_id)
    assert gone.value.status == 404
    assert await inventory(client) == before


async def test_folders_list_every_page_and_delete(client: InstanceClient) -> None:
    before = await inventory(client)
    personal = await client.personal_project()
    tag = uuid.uuid4().hex[:6]
    made = []
    for index in range(12):  # n8n answers 10 unless asked for more: the client pages
        folder = data(await client.http.post(f"/rest/projects/{personal.id}/folders", json={"name": f"C{tag}-{index}"}))
        made.append(str(folder["id"]))
    child = data(
        await client.http.post(
            f"/rest/projects/{personal.id}/folders", json={"name": f"C{tag}-child", "parentFolderId": made[0]}
        )
    )
    try:
        folders = {f.id: f for f in await client.list_folders(personal.id)}
        assert set(made) <= set(folders)
        assert folders[str(child["id"])].parentFolderId == made[0]
    finally:
        for folder_id in made:
            await client.delete_folder(personal.id, folder_id)
        await client.delete_folder(personal.id, made[0])  # missing: counts as deleted
    assert await inventory(client) == before


def _table_workflow(name: str) -> dict[str, Any]:
    """Manual trigger -> Data Table read: n8n's mock must generate the table node's data with its model."""
    workflow = _manual_workflow(name)
    workflow["nodes"][1] = {
        "id": str(uuid.uuid4()),
        "name": "Read rows",
        "type": "n8n-nodes-base.dataTable",
        "typeVersion": 1,
        "position": [220, 0],
        "parameters": {"operation": "get", "dataTableId": "tbl-not-there"},
    }
    workflow["connections"] = {"When clicking Execute": {"main": [[{"node": "Read rows", "type": "main", "index": 0}]]}}
    return workflow


async def test_a_mocked_execution_that_needs_no_mock_runs_for_real(client: InstanceClient) -> None:
    before = await inventory(client)
    created = data(await client.http.post("/rest/workflows", json=_manual_workflow(f"Real {uuid.uuid4().hex[:6]}")))
    try:
        result = await client.execute_with_mock(str(created["id"]), wire.ExecuteWithMockRequest(timeoutMs=30_000))
        assert (result.success, result.framework_issue) == (True, None)
        greeting = result.nodeResults["Greeting"]
        # n8n's shape: {main: [[{json, pairedItem}]]}, startTime in epoch milliseconds.
        assert greeting.items == [{"greeting": "hello"}]
        assert (greeting.executionMode, greeting.outputCount) == ("real", 1)
        assert isinstance(greeting.startTime, int)
        assert greeting.startTime > 1_600_000_000_000
    finally:
        await client.delete_workflow(str(created["id"]))
    assert await inventory(client) == before


async def test_a_mocked_execution_without_a_model_is_a_framework_issue(client: InstanceClient, no_model: None) -> None:
    before = await inventory(client)
    created = data(await client.http.post("/rest/workflows", json=_table_workflow(f"Mock {uuid.uuid4().hex[:6]}")))
    try:
        result = await client.execute_with_mock(
            str(created["id"]), wire.ExecuteWithMockRequest(scenarioHints="A quiet morning.", timeoutMs=30_000)
        )
        assert result.success is False
        assert result.framework_issue is not None
        assert result.framework_issue.startswith("FRAMEWORK ISSUE:")
        assert result.nodeResults == {}
    finally:
        await client.delete_workflow(str(created["id"]))
    assert await inventory(client) == before
