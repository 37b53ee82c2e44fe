"""The fake LangSmith stores what the real SDK sends when it records runs, and serves it back to replay."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
import langsmith
from pydantic import SecretStr

from tests.fakes.langsmith_server import FakeLangSmith
from threadcase.seeds.replay_langsmith import Tenant, fetch_thread_runs_sync

KEY = "lsv2-test-key"


def _tenant(url: str) -> Tenant:
    return Tenant(url, SecretStr(KEY), "LANGSMITH_API_KEY", home=True)


def test_create_then_update_run_through_the_sdk_is_listed_with_its_outputs(
    fake_langsmith: tuple[FakeLangSmith, str],
) -> None:
    fake, url = fake_langsmith
    run_id = str(uuid.uuid4())
    client = langsmith.Client(api_url=url, api_key=KEY, auto_batch_tracing=False)
    try:
        client.create_run(
            name="turn",
            inputs={"message": "hello"},
            run_type="chain",
            id=run_id,
            start_time="2026-01-01T00:00:00.000000Z",
            session_name="instance-ai",
            extra={"metadata": {"thread_id": "t-sdk"}},
        )
        client.update_run(run_id, outputs={"response": "hi"}, end_time=datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC))
    finally:
        client.close(timeout=0)

    assert [f"{r.method} {r.path}" for r in fake.requests] == ["POST /runs", f"PATCH /runs/{run_id}"]
    fetched = fetch_thread_runs_sync("t-sdk", tenant=_tenant(url), timeout=10)
    (run,) = fetched.runs
    assert run.id == run_id
    assert run.inputs == {"message": "hello"}
    assert run.outputs == {"response": "hi"}


def test_batch_ingest_and_refusals(fake_langsmith: tuple[FakeLangSmith, str]) -> None:
    fake, url = fake_langsmith
    root = str(uuid.uuid4())
    child = str(uuid.uuid4())
    post = [
        {"id": root, "name": "turn", "run_type": "chain", "inputs": {"message": "m"}, "session_name": "instance-ai",
         "start_time": "2026-01-01T00:00:00Z", "extra": {"metadata": {"thread_id": "t-batch"}}},
        {"id": child, "trace_id": root, "parent_run_id": root, "name": "build-workflow", "run_type": "tool",
         "inputs": {}, "session_name": "instance-ai", "start_time": "2026-01-01T00:00:00Z"},
    ]  # fmt: skip
    headers = {"x-api-key": KEY}
    response = httpx.post(f"{url}/runs/batch", json={"post": post, "patch": [{"id": child, "outputs": {"ok": 1}}]},
                          headers=headers)  # fmt: skip
    assert response.status_code == 200
    fetched = fetch_thread_runs_sync("t-batch", tenant=_tenant(url), timeout=10)
    outputs = {r.id: r.outputs for r in fetched.runs}
    assert set(outputs) == {root, child}
    assert outputs[child] == {"ok": 1}  # the patch reached the stored run

    fake.ingest_status = 503
    assert httpx.post(f"{url}/runs", json=post[0], headers=headers).status_code == 503
    assert httpx.post(f"{url}/runs", json=post[0], headers={"x-api-key": "wrong"}).status_code == 401
    assert len(fake.ingested()) == 2
