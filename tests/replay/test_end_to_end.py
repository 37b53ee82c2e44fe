"""End to end: a real demo conversation, recorded as a trace, replayed through the runner.

The recorded thread built "Sales digest" (Slack, with a credential attached) and "Order log" (which
created the "Orders" data table), then deleted "Sales digest"; its last user turn edits "Order log".
Replaying it — from the fake LangSmith API (second workspace) and from an exported file — restores
only "Order log" and "Orders", shows the three restored turns as seeded turns of the transcript, and
sends the live turn, which edits the restored workflow in place instead of building a new one.

The demo agent never handles table rows, so the recorded trace gets one extra tool run in n8n's
shape (``data_tables`` insert with ``rows``/``data``) carrying a sentinel value; every request the
replaying instance received and every file written are scanned for it, and for the production
credential's id, name and secret.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import SecretStr

from tests.fakes.langsmith_server import FakeLangSmith
from tests.turns import drive_turn
from threadcase.demo_instance import DemoSettings, create_app
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.harness.runner import RunSettings
from threadcase.instance import InstanceClient
from threadcase.render import render_transcript
from threadcase.report import run_and_report
from threadcase.seeds.replay import export_replay
from threadcase.verdicts import CaseResult

KEY = "lsv2-test-key"
ROW_SENTINEL = "row-value-alice@private.example"
CRED_SECRET = "xoxb-prodsec42"
CRED_NAME = "Alice Production Slack"
PRIOR_TURNS = [
    'Every weekday at 9am post the sales summary to #sales on Slack. Call it "Sales digest".',
    'Build a new workflow that runs every hour and inserts the orders into the data table "Orders". '
    'Call it "Order log".',
    "Delete the Sales digest workflow",
]
LIVE_TURN = "Make the Order log run every day at 8am instead"
_SUFFIX = re.compile(r" \[seed [0-9a-f]{8}\]")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass
class Recorded:
    thread_id: str
    runs: list[dict[str, Any]]
    credential_id: str
    live_root_id: str


@dataclass
class RecordingApp:
    """ASGI wrapper keeping every HTTP request (method, path, query, body) the demo received."""

    app: Any
    requests: list[tuple[str, str, bytes, bytes]] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def recording_receive() -> MutableMapping[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        try:
            await self.app(scope, recording_receive, send)
        finally:
            self.requests.append((scope["method"], scope["path"], scope.get("query_string", b""), b"".join(chunks)))


def _row_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """An n8n-shaped data-table insert with row values, placed in the turn that created the table."""
    create = next(r for r in runs if r["name"] == "create-data-table")
    table_id = create["outputs"]["table"]["id"]
    start = datetime.fromisoformat(create["end_time"].replace("Z", "+00:00")) + timedelta(microseconds=100)
    return {
        **create,
        "id": str(uuid.uuid4()),
        "name": "data_tables",
        "start_time": start.astimezone(UTC).isoformat(),
        "end_time": start.astimezone(UTC).isoformat(),
        "inputs": {"operation": "insert", "tableId": table_id, "rows": [{"data": ROW_SENTINEL}]},
        "outputs": {"inserted": 1, "data": [{"id": 1, "data": ROW_SENTINEL}]},
    }


def _sub_agent_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A nested chain run (a sub-agent) whose inputs and outputs echo the rows as plain text."""
    create = next(r for r in runs if r["name"] == "create-data-table")
    return {
        **create,
        "id": str(uuid.uuid4()),
        "name": "data-table-agent",
        "run_type": "chain",
        "inputs": {"messages": [{"role": "user", "content": f"insert {ROW_SENTINEL}"}]},
        "outputs": {"text": f"inserted {ROW_SENTINEL}", "result": {"rows": [{"email": ROW_SENTINEL}]}},
    }


async def _record(trace: Path) -> Recorded:
    with serve_in_thread(create_app(DemoSettings(trace_to=trace))) as url:
        async with InstanceClient(url, email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD) as client:
            credential = await client.create_credential(
                name=CRED_NAME, type="slackApi", data={"accessToken": CRED_SECRET}
            )
            project = await client.personal_project()
            thread_id = f"prod-{uuid.uuid4()}"
            await client.create_thread(thread_id, project.id)
            for message in [*PRIOR_TURNS, LIVE_TURN]:
                await drive_turn(client, thread_id, message)
    text = await anyio.Path(trace).read_text(encoding="utf-8")
    runs = [json.loads(line) for line in text.splitlines() if line.strip()]
    runs.append(_row_run(runs))
    runs.append(_sub_agent_run(runs))
    live_root = next(r for r in runs if r["parent_run_id"] is None and r["inputs"].get("message") == LIVE_TURN)
    return Recorded(thread_id=thread_id, runs=runs, credential_id=credential.id, live_root_id=live_root["id"])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The production conversation, recorded once per module on its own demo instance."""
    trace = tmp_path_factory.mktemp("recording") / "trace.jsonl"
    rec: Recorded = anyio.run(_record, trace)
    # Sanity of the recording itself: the sentinels are there to be redacted.
    text = json.dumps(rec.runs)
    assert ROW_SENTINEL in text
    assert rec.credential_id in text
    assert any(r["name"] == "delete-workflow" for r in rec.runs)
    return rec


@pytest.fixture
def replay_instance(tmp_path: Path) -> Iterator[tuple[RecordingApp, str]]:
    """A fresh demo instance (database inside tmp_path, so its file is scanned too), recorded."""
    app = RecordingApp(create_app(DemoSettings(db_path=tmp_path / "instance.db")))
    with serve_in_thread(app) as url:
        yield app, url


def _write_case(suite: Path, thread_id: str) -> None:
    suite.mkdir(parents=True, exist_ok=True)
    case = {
        "description": "Replay of a recorded production thread; the live turn edits the restored workflow.",
        "complexity": "simple",
        "tags": ["seeded", "replay"],
        "datasets": ["seeded"],
        "seed": {"mode": "replay", "threadId": thread_id},
        "checks": {"toolsCalled": ["build-workflow"], "toolsNotCalled": ["create-data-table"]},
    }
    (suite / "replay-order-log.json").write_text(json.dumps(case), encoding="utf-8")


async def _run(suite: Path, url: str, out: Path, replay_dir: Path | None) -> CaseResult:
    results: list[CaseResult] = []
    settings = RunSettings(
        suite=suite,
        base_urls=[url],
        email=DEFAULT_EMAIL,
        password=SecretStr(DEFAULT_PASSWORD),
        output_dir=out,
        replay_dir=replay_dir,
        timeout_seconds=30,
        concurrency=1,
    )
    await run_and_report(settings, on_result=results.append)
    (result,) = results
    return result


def _assert_replayed(result: CaseResult, recorded: Recorded) -> None:
    assert result.error is None, result.error
    record = result.record
    assert record is not None
    assert record.seed.mode == "replay"
    assert record.seed.restored
    assert any("replayed 3 turn(s)" in w for w in record.seed.warnings)
    seeded = [t for t in record.turns if t.seeded]
    # Mentions of restored workflows point at this run's copies (the inline remap's name suffix).
    assert [_SUFFIX.sub("", t.text) for t in seeded if t.role == "user"] == PRIOR_TURNS
    assert "Order log [seed " in seeded[2].text
    assert [t.role for t in seeded] == ["user", "assistant"] * 3
    assert "deleted the workflow" in seeded[-1].text
    live = record.live_turns
    assert live[0].role == "user"
    assert live[0].sent_by == "replay"
    # Only the recorded Order log is restored (Sales digest was deleted before the live turn).
    ((_, restored_id),) = record.seed.id_map.items()
    assert live[0].text == LIVE_TURN
    # The live turn ran against the restored state: it edited the restored workflow in place.
    builds = [c for t in live for c in t.tool_calls if c.tool_name == "build-workflow"]
    assert builds
    assert builds[0].args.get("workflowId") == restored_id
    assert not any(c.tool_name == "create-data-table" for t in live for c in t.tool_calls)
    assert any("08:00" in t.text for t in live if t.role == "assistant")
    # What the judge reads has the restored turns.
    rendered = _SUFFIX.sub("", render_transcript(record))
    for text in PRIOR_TURNS:
        assert text in rendered
    assert result.status == "pass"


def _assert_private(app: RecordingApp, root: Path, recorded: Recorded) -> None:
    forbidden = [ROW_SENTINEL, CRED_SECRET, CRED_NAME, recorded.credential_id]
    restores = [json.loads(body) for method, path, _, body in app.requests if path.endswith("/eval/restore-thread")]
    assert len(restores) == 1
    (restore,) = restores
    assert [w["name"].split(" [seed ")[0] for w in restore["workflows"]] == ["Order log"]
    assert [t["name"] for t in restore["dataTables"]] == ["Orders"]
    assert all("credentials" not in n for w in restore["workflows"] for n in w["nodes"])
    assert json.dumps(restore).count("row(s) omitted") >= 2
    for method, path, query, body in app.requests:
        blob = path.encode() + query + body
        leaked = [s for s in forbidden if s.encode() in blob]
        assert not leaked, f"{method} {path} carried {leaked}"
    for file in root.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            leaked = [s for s in forbidden if s.encode() in data]
            assert not leaked, f"{file} holds {leaked}"


@pytest.mark.anyio
async def test_replay_from_langsmith_second_workspace_end_to_end(
    recorded: Recorded,
    replay_instance: tuple[RecordingApp, str],
    fake_langsmith: tuple[FakeLangSmith, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, ls_url = fake_langsmith
    fake.add_workspace("Personal")
    fake.add_runs(fake.add_workspace("Production"), "instance-ai", recorded.runs)
    monkeypatch.setenv("LANGSMITH_ENDPOINT", ls_url)
    monkeypatch.setenv("LANGSMITH_API_KEY", KEY)
    app, url = replay_instance
    _write_case(tmp_path / "suite", recorded.thread_id)

    result = await _run(tmp_path / "suite", url, tmp_path / "out", replay_dir=None)

    _assert_replayed(result, recorded)
    _assert_private(app, tmp_path, recorded)
    assert any(r.path == "/runs/query" for r in fake.requests)


@pytest.mark.anyio
async def test_replay_from_an_exported_file_end_to_end_without_langsmith(
    recorded: Recorded,
    replay_instance: tuple[RecordingApp, str],
    fake_langsmith: tuple[FakeLangSmith, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, ls_url = fake_langsmith
    fake.add_runs(fake.add_workspace("Production"), "instance-ai", recorded.runs)
    replay_dir = tmp_path / "replays"
    await export_replay(
        recorded.thread_id,
        out=replay_dir / f"{recorded.thread_id}.json",
        environ={"LANGSMITH_ENDPOINT": ls_url, "LANGSMITH_API_KEY": KEY},
    )
    asked = len(fake.requests)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGSMITH_ENDPOINT", raising=False)
    app, url = replay_instance
    _write_case(tmp_path / "suite", recorded.thread_id)

    result = await _run(tmp_path / "suite", url, tmp_path / "out", replay_dir=replay_dir)

    _assert_replayed(result, recorded)
    _assert_private(app, tmp_path, recorded)
    assert len(fake.requests) == asked  # the replay itself never asked LangSmith
