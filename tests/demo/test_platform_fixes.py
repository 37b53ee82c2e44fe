"""Regression tests for the demo platform's audit findings (issue 3 review)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.demo.conftest import data, new_thread

pytestmark = pytest.mark.anyio

SLACK_NODE = {"name": "Slack", "type": "n8n-nodes-base.slack", "parameters": {"channel": "#a", "text": "hi"}}


async def _credential(client: httpx.AsyncClient, name: str, cred_type: str = "slackApi") -> str:
    body = {"name": name, "type": cred_type, "data": {"accessToken": "tok"}}
    return str(data(await client.post("/rest/credentials", json=body))["id"])


async def _restore_slack(client: httpx.AsyncClient, thread_id: str, workflow_id: str, ref: dict[str, str]) -> Any:
    node = {**SLACK_NODE, "credentials": {"slackApi": ref}}
    seed = {"threadId": thread_id, "workflows": [{"id": workflow_id, "name": workflow_id, "nodes": [node]}]}
    data(await client.post("/rest/instance-ai/eval/restore-thread", json=seed))
    workflow = data(await client.get(f"/rest/workflows/{workflow_id}"))
    return workflow["nodes"][0].get("credentials")


async def test_restore_resolves_seed_node_credentials_within_the_pinned_view(owner: httpx.AsyncClient) -> None:
    """Seed node credential ids were kept verbatim, pointing at another instance's (or case's) credential."""
    mine = await _credential(owner, "[eval] Slack")
    other_same_name = await _credential(owner, "[eval] Slack")
    mine_b = await _credential(owner, "Slack B")
    await new_thread(owner, "t-cred-1")
    pin = {"threadId": "t-cred-1", "credentialIds": [mine, mine_b]}
    data(await owner.post("/rest/instance-ai/eval/thread-credential-allowlist", json=pin))
    ref = {"id": "prodCredId123", "name": "[eval] Slack"}
    assert await _restore_slack(owner, "t-cred-1", "seedwf-0001", ref) == {
        "slackApi": {"id": mine, "name": "[eval] Slack"}
    }
    assert other_same_name != mine

    # No same name, one credential of the type visible: that one.
    await new_thread(owner, "t-cred-2")
    data(
        await owner.post(
            "/rest/instance-ai/eval/thread-credential-allowlist",
            json={"threadId": "t-cred-2", "credentialIds": [mine_b]},
        )
    )
    assert await _restore_slack(owner, "t-cred-2", "seedwf-0002", ref) == {
        "slackApi": {"id": mine_b, "name": "Slack B"}
    }

    # Nothing of the type visible: dropped, never a dangling id.
    await new_thread(owner, "t-cred-3")
    data(
        await owner.post(
            "/rest/instance-ai/eval/thread-credential-allowlist", json={"threadId": "t-cred-3", "credentialIds": []}
        )
    )
    assert await _restore_slack(owner, "t-cred-3", "seedwf-0003", ref) is None
