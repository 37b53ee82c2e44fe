"""Demo traces posted to a LangSmith-compatible endpoint (``--trace-endpoint``).

A real demo instance posts through the real ``langsmith`` SDK to the fake LangSmith API on loopback;
replay then rebuilds the thread from that API. A slow or unreachable endpoint never slows or fails a
chat turn, and the endpoint's key never reaches logs or output.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.fakes.langsmith_server import FakeLangSmith
from tests.turns import drive_turn
from threadcase.case.schema import ReplaySeed
from threadcase.demo_instance import DemoSettings, create_app
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD, DemoConfigError
from threadcase.demo_instance.traces import TraceShipper
from threadcase.instance import InstanceClient
from threadcase.seeds.replay import load_replay

KEY = "lsv2-test-key"
TURNS = [
    'Build a new workflow that runs every hour and inserts the orders into the data table "Orders". '
    'Call it "Order log".',
    "Make the Order log run every day at 8am instead",
]


@pytest.fixture
def fake_langsmith() -> Iterator[tuple[FakeLangSmith, str]]:
    """A fake LangSmith API on 127.0.0.1 (key ``lsv2-test-key``); yields (state, base URL)."""
    fake = FakeLangSmith(page_size=3)
    with serve_in_thread(fake.app) as url:
        yield fake, url


def _closed_port_url() -> str:
    """An http URL on loopback where nothing listens (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def _turn(client: InstanceClient, thread_id: str, message: str) -> tuple[str, float]:
    """One user turn; returns (run-finish status, seconds from chat to run-finish)."""
    started = time.monotonic()
    status = await drive_turn(client, thread_id, message)
    return status, time.monotonic() - started


async def _converse(settings: DemoSettings, messages: list[str]) -> tuple[str, list[tuple[str, float]]]:
    """A fresh thread on a demo instance with ``settings``; the instance is stopped (traces flushed) on return."""
    outcomes = []
    with serve_in_thread(create_app(settings)) as url:
        async with InstanceClient(url, email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD) as client:
            project = await client.personal_project()
            thread_id = f"prod-{uuid.uuid4()}"
            await client.create_thread(thread_id, project.id)
            for message in messages:
                outcomes.append(await _turn(client, thread_id, message))
    return thread_id, outcomes


@pytest.mark.anyio
async def test_turns_posted_to_the_endpoint_replay_from_the_langsmith_api(
    fake_langsmith: tuple[FakeLangSmith, str], tmp_path: Path
) -> None:
    fake, ls_url = fake_langsmith
    trace_file = tmp_path / "trace.jsonl"
    settings = DemoSettings(trace_to=trace_file, trace_endpoint=ls_url, trace_api_key=SecretStr(KEY))

    thread_id, outcomes = await _converse(settings, TURNS)

    assert [status for status, _ in outcomes] == ["completed", "completed"]
    # The endpoint got exactly the runs the file writer wrote, with the key, through the SDK's POST /runs.
    written = [json.loads(line) for line in trace_file.read_text(encoding="utf-8").splitlines()]
    posted = fake.ingested()
    assert sorted(r["id"] for r in posted) == sorted(r["id"] for r in written)
    assert {r.api_key for r in fake.requests if r.path == "/runs"} == {KEY}
    assert sum(1 for r in fake.requests if r.method == "POST" and r.path == "/runs") == len(written)
    assert {r["session_name"] for r in written} == {"instance-ai"}

    seed = ReplaySeed(mode="replay", thread_id=thread_id)
    reconstruction, source = await load_replay(
        seed, replay_dir=None, environ={"LANGSMITH_ENDPOINT": ls_url, "LANGSMITH_API_KEY": KEY}
    )

    assert source.startswith(ls_url)
    assert any(r.path == "/runs/query" for r in fake.requests)
    assert reconstruction.replayed_turns == 1
    assert reconstruction.live_message == TURNS[1]
    texts = [(m["role"], " ".join(p.get("text", "") for p in m["content"])) for m in reconstruction.messages]
    assert [role for role, _ in texts] == ["user", "assistant"]
    assert texts[0][1] == TURNS[0]
    assert "Order log" in texts[1][1]
    # The assistant's tool calls came back too (what rebuilt the workflow and the table).
    tools = [p.get("toolName") for p in reconstruction.messages[1]["content"] if p.get("type") != "text"]
    assert "build-workflow" in tools, reconstruction.messages[1]
    assert [w.name for w in reconstruction.workflows] == ["Order log"]
    assert [t.name for t in reconstruction.data_tables] == ["Orders"]
    assert reconstruction.unrecovered_builds == []


@pytest.mark.anyio
async def test_a_slow_endpoint_never_slows_a_chat_turn(fake_langsmith: tuple[FakeLangSmith, str]) -> None:
    fake, ls_url = fake_langsmith
    fake.ingest_delay = 2.0  # every POST /runs takes 2 s: a turn waiting for it would take at least that
    settings = DemoSettings(trace_endpoint=ls_url, trace_api_key=SecretStr(KEY), trace_flush_seconds=0.5)

    started = time.monotonic()
    _, outcomes = await _converse(settings, TURNS)
    elapsed = time.monotonic() - started

    assert [status for status, _ in outcomes] == ["completed", "completed"]
    assert max(seconds for _, seconds in outcomes) < 1.5, outcomes
    # Stopping waited for the flush bound (0.5 s), not for the 4+ posts still queued (8+ s).
    assert elapsed < 5.0


@pytest.mark.anyio
async def test_an_unreachable_endpoint_fails_no_turn_logs_once_and_never_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "lsv2-unreachable-secret-91"
    url = _closed_port_url()
    settings = DemoSettings(trace_endpoint=url, trace_api_key=SecretStr(secret), trace_flush_seconds=1.5)

    _, outcomes = await _converse(settings, TURNS)

    assert [status for status, _ in outcomes] == ["completed", "completed"]
    assert max(seconds for _, seconds in outcomes) < 1.5, outcomes
    failures = [r for r in caplog.records if "could not post runs" in r.getMessage()]
    assert len(failures) == 1  # logged once, with the reason
    assert url in failures[0].getMessage()
    assert "Connection refused" in failures[0].getMessage()
    summary = [r for r in caplog.records if "not delivered" in r.getMessage()]
    assert len(summary) == 1
    assert secret not in caplog.text
    assert secret[:5] + "*" not in caplog.text  # nor the SDK's partly masked form of it


class _Hanging:
    """A poster stuck on a dead connection until released."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.posted: list[dict[str, Any]] = []

    def post(self, run: dict[str, Any]) -> None:
        self.release.wait(10)
        self.posted.append(run)

    def close(self) -> None:
        pass


def test_shipper_queue_is_bounded_submit_never_blocks_and_close_keeps_its_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    poster = _Hanging(release)
    shipper = TraceShipper("http://127.0.0.1:9", SecretStr("k-123"), max_queue=5, poster=lambda: poster)
    try:
        started = time.monotonic()
        shipper.submit([{"id": str(i)} for i in range(50)])
        assert time.monotonic() - started < 0.1
        # One run is in the stuck post (or still queued), five wait: the rest were dropped, not waited for.
        assert 44 <= shipper.dropped <= 45
        assert len([r for r in caplog.records if "queue" in r.getMessage() and "full" in r.getMessage()]) == 1

        started = time.monotonic()
        shipper.close(0.3)
        assert time.monotonic() - started < 1.0
        assert shipper.unsent >= 4
        assert any("not delivered" in r.getMessage() for r in caplog.records)
        assert "k-123" not in caplog.text
    finally:
        release.set()


class _Flaky:
    """Fails the first ``failures`` posts with a connection error, then accepts."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.posted: list[dict[str, Any]] = []

    def post(self, run: dict[str, Any]) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("connection reset by peer")
        self.posted.append(run)

    def close(self) -> None:
        pass


def _shipper_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "threadcase-trace-shipper"}


def test_a_shipper_that_never_got_a_run_starts_no_thread_and_closes_at_once() -> None:
    # Other tests' workers may still be ending: only new shipper threads count.
    before = _shipper_threads()
    shipper = TraceShipper("http://127.0.0.1:9", None)
    assert _shipper_threads() <= before
    started = time.monotonic()
    shipper.close(5)
    assert time.monotonic() - started < 0.1
    shipper.submit([{"id": "late"}])  # after close: dropped, no thread started
    assert _shipper_threads() <= before
    assert shipper.dropped == 1


def test_shipper_retries_a_transient_failure_and_delivers_in_order() -> None:
    poster = _Flaky(failures=1)
    shipper = TraceShipper("http://x", None, poster=lambda: poster)
    shipper.submit([{"id": "a"}, {"id": "b"}])
    shipper.close(5)
    assert [r["id"] for r in poster.posted] == ["a", "b"]
    assert (shipper.delivered, shipper.failed, shipper.dropped, shipper.unsent) == (2, 0, 0, 0)


def test_a_bad_endpoint_is_a_demo_config_error_naming_the_variable_and_never_the_key() -> None:
    with pytest.raises(DemoConfigError) as info:
        DemoSettings.from_env(
            {"THREADCASE_DEMO_TRACE_ENDPOINT": "smith.example", "THREADCASE_DEMO_TRACE_API_KEY": "lsv2-hidden"}
        )
    assert "THREADCASE_DEMO_TRACE_ENDPOINT" in str(info.value)
    assert "smith.example" in str(info.value)
    settings = DemoSettings.from_env(
        {"THREADCASE_DEMO_TRACE_ENDPOINT": "https://smith.example/", "THREADCASE_DEMO_TRACE_API_KEY": "lsv2-hidden"}
    )
    assert settings.trace_endpoint == "https://smith.example"
    assert settings.trace_api_key is not None
    assert "lsv2-hidden" not in repr(settings)


def test_serve_with_a_trace_endpoint_prints_the_url_never_the_key() -> None:
    secret = "lsv2-cli-secret-77"
    endpoint = _closed_port_url()
    env = {**os.environ, "THREADCASE_DEMO_TRACE_API_KEY": secret}
    command = [sys.executable, "-c", "from threadcase.cli import main; main()", "demo", "serve"]
    command += ["--port", "0", "--trace-endpoint", endpoint]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("threadcase demo instance at http://127.0.0.1:"), lines
        assert any(f"traces -> {endpoint} project instance-ai (key set)" in line for line in lines), lines
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert secret not in "".join(lines) + output
