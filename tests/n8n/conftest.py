"""Fixtures for the contract tests against a real n8n 2.41 (marker ``n8n``, deselected by default).

``pytest -m n8n`` runs them. One n8n serves the whole session (see :mod:`tests.n8n.local` for which);
with none reachable or installed, every test here is skipped with the reason. Tests leave the
instance as they found it: :func:`inventory` counts what a test could leave behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.n8n.local import LocalN8n, N8nUnavailable, find_n8n
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.instance import InstanceClient
from threadcase.standins.model_server import ScriptedModel, create_app
from threadcase.standins.script import ModelScript

HERE = Path(__file__).parent
SCRIPTED_MODEL_NAME = "scripted"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every test of this directory needs the real n8n: marked here so none can forget it.
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.n8n)
            item.add_marker(pytest.mark.timeout(300))


@pytest.fixture(scope="session")
def n8n() -> Iterator[LocalN8n]:
    """The session's n8n (started here if nothing runs and the install is there; stopped at the end)."""
    manager = find_n8n()
    try:
        found = manager.__enter__()
    except N8nUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield found
    finally:
        manager.__exit__(None, None, None)


@pytest.fixture
async def client(n8n: LocalN8n) -> AsyncIterator[InstanceClient]:
    async with InstanceClient(n8n.base_url, email=n8n.email, password=n8n.password) as logged_in:
        yield logged_in


def data(response: httpx.Response) -> Any:
    """The answer's ``data`` (n8n wraps most answers), asserting a 200."""
    assert response.status_code == 200, f"{response.request.method} {response.request.url} -> {response.text[:500]}"
    body = response.json()
    return body["data"] if isinstance(body, dict) and "data" in body else body


@dataclass(frozen=True)
class Inventory:
    """How many of each thing a run could leave behind exist on the instance."""

    threads: int
    workflows: int
    data_tables: int
    folders: int
    agents: int
    credentials: int
    projects: int


async def inventory(client: InstanceClient) -> Inventory:
    """Count threads, workflows (archived ones too), tables, folders, agents, credentials and projects."""
    http = client.http
    personal = await client.personal_project()
    threads = data(await http.get("/rest/instance-ai/threads"))
    agents = (await http.get("/rest/agents/v2")).json()
    return Inventory(
        threads=int(threads["total"]),
        workflows=len(await client.list_workflows()),
        data_tables=int((data(await http.get("/rest/data-tables-global")))["count"]),
        folders=len(await client.list_folders(personal.id)),
        agents=int(agents["count"]),
        credentials=len(await client.list_credentials()),
        projects=len(await client.list_projects()),
    )


def script(*rules: dict[str, Any]) -> ModelScript:
    """A scripted model's script from rules (``{"id", "when"?, "reply"}``), as ``threadcase fake-model`` reads it."""
    return ModelScript.model_validate({"rules": list(rules)})


@pytest.fixture
async def model(client: InstanceClient) -> AsyncIterator[ScriptedModel]:
    """threadcase's scripted model on loopback, set as the instance's model for the test, then unset.

    A test sets ``model.script`` (:func:`script`) to say what the model answers; every request it got is
    in ``model.log``. Set at runtime through n8n's settings (an ``openAiApi`` connection with a custom
    URL: the AI SDK falls back from ``/responses`` to chat completions), so one n8n serves the tests that
    need no model (the chat is then refused) and those that need one.
    """
    settings = data(await client.http.get("/rest/instance-ai/settings"))
    if settings.get("modelEnvConfigured"):
        pytest.skip("this n8n takes its model from its environment (N8N_INSTANCE_AI_MODEL*): it cannot be swapped")
    scripted = ScriptedModel(script({"id": "hello", "reply": {"text": "Hello from the scripted model."}}))
    with serve_in_thread(create_app(scripted)) as url:
        connection = {"type": "openAiApi", "data": {"apiKey": "sk-threadcase-scripted", "url": f"{url}/v1"}}
        body = {"modelConnection": connection, "modelName": SCRIPTED_MODEL_NAME}
        data(await client.http.put("/rest/instance-ai/settings", json=body))
        try:
            yield scripted
        finally:
            data(await client.http.put("/rest/instance-ai/settings", json={"modelConnection": None}))


@pytest.fixture
async def no_model(client: InstanceClient) -> None:
    """Skip unless the instance has no model at all (its chat is then refused: 'no model configured')."""
    settings = data(await client.http.get("/rest/instance-ai/settings"))
    if settings.get("modelEnvConfigured") or settings.get("modelName"):
        pytest.skip("this n8n has a model configured; these tests need one without")
