"""Fetching a thread from LangSmith: tenant keys, workspace search, the not-found message."""

from __future__ import annotations

import pytest

from tests.fakes.langsmith_server import FakeLangSmith
from tests.replay.tracebuilder import TraceBuilder, workflow
from threadcase.errors import ConfigError, ReplayError
from threadcase.seeds.replay_langsmith import fetch_thread_runs, resolve_tenant, tenant_key_variable, thread_filter

KEY = "lsv2-test-key"


def _thread(thread_id: str = "thread-prod-1") -> TraceBuilder:
    tb = TraceBuilder(thread_id)
    tb.turn("build it", "built")
    tb.tool("build-workflow", {"workflow": workflow("wf-aaaa-0001", "A")}, {"workflowId": "wf-aaaa-0001"})
    tb.tool(
        "create-data-table",
        {"rows": [{"email": "x@private.example"}]},
        {"table": {"id": "tbl-00000001", "name": "T", "columns": []}},
    )
    tb.turn("live message")
    return tb


@pytest.mark.anyio
async def test_thread_is_found_in_the_second_workspace(fake_langsmith: tuple[FakeLangSmith, str]) -> None:
    fake, url = fake_langsmith
    first = fake.add_workspace("Personal")
    second = fake.add_workspace("Production")
    fake.add_runs(first, "instance-ai", _thread("another-thread").runs)
    tb = _thread()
    llm_run = dict(tb.runs[1], id="llm-run-1", run_type="llm", name="ChatAnthropic")
    fake.add_runs(second, "instance-ai", [*tb.runs, llm_run])

    fetched = await fetch_thread_runs("thread-prod-1", environ={"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": KEY})

    assert fetched.workspace == f"Production ({second})"
    assert [t.split(":")[-1].strip() for t in fetched.tried] == ["thread not found", "found"]
    assert len(fetched.runs) == len(tb.runs)  # paginated (page size 3), chain and tool only
    assert {r.run_type for r in fetched.runs} == {"chain", "tool"}
    table_run = next(r for r in fetched.runs if r.name == "create-data-table")
    assert table_run.inputs["rows"] == "<1 row(s) omitted>"
    assert fake.requests[0].path == "/api/v1/workspaces"
    assert all(r.api_key == KEY for r in fake.requests)
    queries = [r for r in fake.requests if r.path == "/runs/query"]
    assert {q.tenant for q in queries} == {first, second}
    assert all(q.body["filter"] == thread_filter("thread-prod-1") for q in queries)
    assert 'or(eq(run_type, "chain"), eq(run_type, "tool"))' in queries[0].body["filter"]


@pytest.mark.anyio
async def test_aged_out_thread_names_every_workspace_tried_and_the_retention(
    fake_langsmith: tuple[FakeLangSmith, str],
) -> None:
    fake, url = fake_langsmith
    a = fake.add_workspace("Personal")
    b = fake.add_workspace("Production")
    fake.add_runs(b, "instance-ai", _thread("someone-else").runs)
    with pytest.raises(ReplayError) as caught:
        await fetch_thread_runs("thread-gone", environ={"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": KEY})
    message = str(caught.value)
    assert "'thread-gone' not found in LangSmith project 'instance-ai'" in message
    assert f"Personal ({a}): no project 'instance-ai'" in message
    assert f"Production ({b}): thread not found" in message
    assert "about 14 days" in message


@pytest.mark.anyio
async def test_workspace_listing_failure_falls_back_to_the_default_workspace(
    fake_langsmith: tuple[FakeLangSmith, str],
) -> None:
    fake, url = fake_langsmith
    ws = fake.add_workspace("Only")
    fake.add_runs(ws, "custom-project", _thread().runs)
    fake.fail_workspace_listing = True
    fetched = await fetch_thread_runs(
        "thread-prod-1", project="custom-project", environ={"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": KEY}
    )
    assert fetched.workspace is None
    assert any("could not list the key's workspaces" in w for w in fetched.warnings)
    assert all(r.tenant is None for r in fake.requests if r.path != "/api/v1/workspaces")


@pytest.mark.anyio
async def test_a_refused_key_is_a_replay_error_naming_the_variable(fake_langsmith: tuple[FakeLangSmith, str]) -> None:
    _, url = fake_langsmith
    with pytest.raises(ReplayError, match=r"refused the key from LANGSMITH_API_KEY \(HTTP 401\)"):
        await fetch_thread_runs("t", environ={"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": "wrong"})


@pytest.mark.anyio
async def test_a_second_tenant_is_read_with_its_own_key_only(fake_langsmith: tuple[FakeLangSmith, str]) -> None:
    fake, url = fake_langsmith
    fake.api_keys = {"tenant-two-key"}
    ws = fake.add_workspace("Two")
    fake.add_runs(ws, "instance-ai", _thread().runs)
    variable = tenant_key_variable(url)
    env = {"LANGSMITH_API_KEY": "home-key", variable: "tenant-two-key"}
    fetched = await fetch_thread_runs("thread-prod-1", endpoint=url, environ=env)
    assert fetched.runs
    assert {r.api_key for r in fake.requests} == {"tenant-two-key"}


def test_tenant_resolution_refuses_the_home_key_for_another_tenant() -> None:
    home = {"LANGSMITH_API_KEY": "home-key"}
    assert resolve_tenant(None, home).api_url == "https://api.smith.langchain.com"
    assert resolve_tenant("https://api.smith.langchain.com/", home).key_variable == "LANGSMITH_API_KEY"
    with pytest.raises(ConfigError, match="LANGSMITH_API_KEY_EU or LANGSMITH_API_KEY_EU_API_SMITH_LANGCHAIN_COM"):
        resolve_tenant("https://eu.api.smith.langchain.com", home)
    eu = resolve_tenant("https://eu.api.smith.langchain.com", {**home, "LANGSMITH_API_KEY_EU": "eu-key"})
    assert eu.api_key.get_secret_value() == "eu-key"
    assert not eu.home
    # With an EU home, the US host is the second tenant and needs LANGSMITH_API_KEY_US.
    eu_home = {"LANGSMITH_ENDPOINT": "https://eu.api.smith.langchain.com", "LANGSMITH_API_KEY": "eu-key"}
    with pytest.raises(ConfigError, match="never sent to another tenant"):
        resolve_tenant("https://api.smith.langchain.com", eu_home)
    us = resolve_tenant("https://api.smith.langchain.com", {**eu_home, "LANGSMITH_API_KEY_US": "us-key"})
    assert us.key_variable == "LANGSMITH_API_KEY_US"
    assert tenant_key_variable("http://127.0.0.1:8123") == "LANGSMITH_API_KEY_127_0_0_1_8123"
    with pytest.raises(ConfigError, match="LANGSMITH_API_KEY is not set"):
        resolve_tenant(None, {})
    assert "secret" not in repr(resolve_tenant(None, {"LANGSMITH_API_KEY": "secret"}))
