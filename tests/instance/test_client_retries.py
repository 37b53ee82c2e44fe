"""Retries happen only where repeating is safe; failures become InstanceError with redacted excerpts."""

from __future__ import annotations

import itertools
import json
import logging
import time

import httpx
import pytest

from tests.instance.fake_instance import PASSWORD, FakeInstance
from threadcase import wire
from threadcase.errors import InstanceError
from threadcase.instance import CallKind, InstanceClient, RetryPolicy
from threadcase.instance.retry import RetryableStatus, should_retry

pytestmark = pytest.mark.anyio

FAST = RetryPolicy(attempts=3, initial_wait=0.0, max_wait=0.0, jitter=0.0)


async def test_chat_is_sent_once_when_the_answer_is_lost(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    """A chat whose response was cut after the server handled it must not start a second run."""
    fake, _ = fake_instance
    fake.drop_chat_response = True
    with pytest.raises(InstanceError) as caught:
        await client.chat("t1", wire.ChatRequest(message="build it"))
    assert caught.value.status is None
    assert fake.seen["chat"] == 1


async def test_a_read_is_repeated_after_a_dropped_connection(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    fake.drop_status_times = 1
    status = await client.thread_status("t1")
    assert status.settled
    assert fake.seen["status"] == 2


async def test_chat_is_repeated_when_the_server_refused_before_any_work(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    fake.busy_chat_times = 1
    run_id = await client.chat("t1", wire.ChatRequest(message="hello"))
    assert run_id == "run-1"
    assert (fake.seen["chat-503"], fake.seen["chat"]) == (1, 1)


async def test_delete_of_something_already_gone_succeeds(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    await client.delete_thread("missing")
    assert fake.seen["delete-thread"] == 1


async def test_created_credential_never_keeps_its_data(client: InstanceClient) -> None:
    created = await client.create_credential(name="[eval] Slack", type="slackApi", data={"accessToken": "xoxb-1"})
    assert created.id == "c1"
    assert created.data is None


async def test_a_refused_login_names_the_account_and_hides_the_password(
    fake_instance: tuple[FakeInstance, str], caplog: pytest.LogCaptureFixture
) -> None:
    _, url = fake_instance
    caplog.set_level(logging.DEBUG)
    wrong = "not-the-" + PASSWORD
    with pytest.raises(InstanceError) as caught:
        async with InstanceClient(url, email="owner@example.com", password=wrong, retry=FAST):
            pass
    assert caught.value.status == 401
    assert "owner@example.com" in str(caught.value)
    assert wrong not in str(caught.value)
    assert wrong not in caplog.text


async def test_health_reports_a_live_and_a_dead_instance(fake_instance: tuple[FakeInstance, str]) -> None:
    _, url = fake_instance
    live = InstanceClient(url, email="e", password="p")
    dead = InstanceClient("http://127.0.0.1:9", email="e", password="p", retry=FAST)
    try:
        assert await live.health() is True
        assert await dead.health() is False
    finally:
        await live.aclose()
        await dead.aclose()


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        (CallKind.READ, 502, True),
        (CallKind.READ, 500, False),
        (CallKind.IDEMPOTENT, 504, True),
        (CallKind.UNSAFE, 503, True),
        (CallKind.UNSAFE, 429, True),
        (CallKind.UNSAFE, 502, False),
        (CallKind.UNSAFE, 504, False),
    ],
)
def test_status_retry_table(kind: CallKind, status: int, expected: bool) -> None:
    response = httpx.Response(status, request=httpx.Request("GET", "http://x/"))
    assert should_retry(kind, RetryableStatus(response)) is expected


@pytest.mark.parametrize(
    ("kind", "error", "expected"),
    [
        (CallKind.UNSAFE, httpx.ConnectError("refused"), True),
        (CallKind.UNSAFE, httpx.ReadTimeout("slow"), False),
        (CallKind.UNSAFE, httpx.RemoteProtocolError("dropped"), False),
        (CallKind.READ, httpx.ReadTimeout("slow"), True),
        (CallKind.IDEMPOTENT, httpx.RemoteProtocolError("dropped"), True),
        (CallKind.READ, ValueError("bug"), False),
    ],
)
def test_transport_retry_table(kind: CallKind, error: BaseException, expected: bool) -> None:
    assert should_retry(kind, error) is expected


async def test_mapping_unwraps_data_and_redacts_error_excerpts() -> None:
    """Pure mapping over MockTransport: unwrap, parse, and an error excerpt with no secrets in it."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.path}")
        if request.url.path == "/rest/login":
            return httpx.Response(200, json={"data": {}}, headers={"set-cookie": "n8n-auth=abc; Path=/"})
        if request.url.path.endswith("/runs"):
            return httpx.Response(200, json={"data": {"runs": [{"runId": "r1"}, {"runId": "r2"}]}})
        if request.url.path == "/rest/credentials":
            body = json.loads(request.content)
            return httpx.Response(
                400, json={"message": "bad", "credential": {"name": "x", "type": "slackApi", "data": body["data"]}}
            )
        return httpx.Response(500, text="Bearer abcdefghijklmnop leaked EVAL-TOKEN-123456")

    async with InstanceClient(
        "http://instance.test",
        email="e",
        password="pw-123456",
        retry=FAST,
        secrets=["EVAL-TOKEN-123456"],
        transport=httpx.MockTransport(handler),
    ) as client:
        runs = await client.thread_runs("t1")
        assert [r.runId for r in runs] == ["r1", "r2"]
        with pytest.raises(InstanceError) as bad_credential:
            await client.create_credential(name="x", type="slackApi", data={"accessToken": "tok-999999"})
        with pytest.raises(InstanceError) as server_error:
            await client.run_debug("r1")
    assert "tok-999999" not in str(bad_credential.value)
    assert bad_credential.value.status == 400
    assert calls.count("POST /rest/credentials") == 1
    text = str(server_error.value)
    assert "EVAL-TOKEN-123456" not in text
    assert "abcdefghijklmnop" not in text
    # A 500 is not transient: one attempt only.
    assert calls.count("GET /rest/instance-ai/debug/runs/r1") == 1


async def test_an_expired_session_logs_in_again_once(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    fake.expire_sessions()
    assert (await client.thread_status("t1")).settled
    fake.expire_sessions()
    async with client.subscribe("t1") as sub:
        await client.chat("t1", wire.ChatRequest(message="after a restart"))
        event = await sub.next_event(timeout=5)
    assert event is not None
    assert event.type == "run-start"
    assert fake.seen["login"] == 3


async def test_retry_after_is_honoured_within_the_ceiling() -> None:
    seen: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(time.perf_counter())
        if request.url.path == "/rest/login":
            return httpx.Response(200, json={"data": {}})
        if len(seen) < 4:
            return httpx.Response(503, headers={"Retry-After": "0.2" if len(seen) == 2 else "3600"})
        return httpx.Response(200, json={"data": {"hasActiveRun": False, "isSuspended": False}})

    policy = RetryPolicy(attempts=4, initial_wait=0.0, max_wait=0.3, jitter=0.0)
    async with InstanceClient(
        "http://x.test", email="e", password="p", retry=policy, transport=httpx.MockTransport(handler)
    ) as client:
        assert (await client.thread_status("t")).settled
    gaps = [b - a for a, b in itertools.pairwise(seen[1:])]
    assert gaps[0] >= 0.18, "Retry-After: 0.2 was waited"
    assert 0.28 <= gaps[1] < 2.0, "Retry-After: 3600 was capped at max_wait (0.3 s)"


def test_parsed_urls_are_reused_per_path_and_the_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    client = InstanceClient("http://127.0.0.1:9", email="a@b.c", password="pw")
    first = client._request("POST", "/rest/instance-ai/chat/t1", {"message": "hi"}, None, None, None)
    again = client._request("POST", "/rest/instance-ai/chat/t1", {"message": "ho"}, None, None, None)
    assert list(client._urls) == ["/rest/instance-ai/chat/t1"]  # parsed once, used by both
    assert again.url == first.url == "http://127.0.0.1:9/rest/instance-ai/chat/t1"
    with_query = client._request("GET", "/rest/workflows", None, {"skip": 250}, None, None)
    assert str(with_query.url) == "http://127.0.0.1:9/rest/workflows?skip=250"
    monkeypatch.setattr("threadcase.instance.client._URL_CACHE_SIZE", 3)
    for n in range(10):
        client._request("GET", f"/rest/instance-ai/threads/t{n}/status", None, None, None, None)
    assert len(client._urls) <= 3


async def test_dot_segment_ids_are_refused_before_any_request() -> None:
    """Regression: ``quote`` leaves "." and ".." as they are and URL normalisation removes them, so a
    folder id of ".." (say, from an agent's tool output) made clean-up DELETE the project itself."""
    client = InstanceClient("http://127.0.0.1:9", email="a@b.c", password="pw")  # nothing listens there
    for call in (
        client.delete_folder("proj_1", ".."),
        client.delete_data_table("proj_1", "."),
        client.delete_workflow(".."),
        client.delete_agent("proj_1", ""),
    ):
        with pytest.raises(InstanceError, match="is not an id"):
            await call
    assert client._urls == {}
