"""Offline replay: export to a file, replay from --replay-dir byte-identically, no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.langsmith_server import FakeLangSmith
from tests.replay.tracebuilder import TraceBuilder, workflow
from threadcase.case.schema import ReplaySeed
from threadcase.cli import main
from threadcase.errors import ConfigError, ReplayError
from threadcase.seeds.replay import export_replay, load_replay, read_replay_file, replay_file_path

KEY = "lsv2-test-key"
SECRET_ROW = "carol@private.example"
SECRET_CRED = "cred-prod-9f8e7d"


def _thread(thread_id: str = "thread-prod-1") -> tuple[TraceBuilder, str]:
    """Three turns; returns the builder and the second turn's root run id."""
    tb = TraceBuilder(thread_id)
    tb.turn("Build a Slack alert and a contacts table", "Done.")
    wf = workflow("wf-slack-00000001", "Slack alert", credential=True)
    wf["nodes"][1]["credentials"]["slackApi"]["id"] = SECRET_CRED
    tb.tool("build-workflow", {"workflow": wf}, {"workflowId": "wf-slack-00000001", "workflow": wf})
    tb.tool(
        "create-data-table",
        {"name": "Contacts", "columns": [{"name": "email", "type": "string"}], "rows": [{"email": SECRET_ROW}]},
        {"table": {"id": "tbl-contacts-0001", "name": "Contacts", "columns": [{"name": "email", "type": "string"}]}},
    )
    second = tb.turn("Also log to the table", "Logged.")
    tb.tool("insert-data-table-rows", {"tableId": "tbl-contacts-0001", "data": [{"email": SECRET_ROW}]}, {"ok": True})
    tb.turn("Now make it post to #alerts")
    return tb, second


def _scan(directory: Path, *needles: str) -> list[str]:
    hits = []
    for path in directory.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            hits += [f"{path}: {n}" for n in needles if n in text]
    return hits


@pytest.mark.anyio
async def test_export_then_replay_dir_rebuilds_byte_identically_without_network(
    fake_langsmith: tuple[FakeLangSmith, str], tmp_path: Path
) -> None:
    fake, url = fake_langsmith
    ws = fake.add_workspace("Production")
    tb, second = _thread()
    fake.add_runs(ws, "instance-ai", tb.runs)
    env = {"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": KEY}
    out = tmp_path / "replays" / "thread-prod-1.json"

    exported = await export_replay("thread-prod-1", out=out, environ=env)

    assert exported.reconstruction is not None
    assert exported.reconstruction.replayed_turns == 2
    assert _scan(tmp_path, SECRET_ROW, SECRET_CRED, KEY) == []
    assert [p.name for p in (tmp_path / "replays").iterdir()] == ["thread-prod-1.json"]  # no temp file left

    for live in (None, second):
        seed = ReplaySeed(mode="replay", thread_id="thread-prod-1", live_turn_run_id=live)
        online, online_source = await load_replay(seed, replay_dir=None, environ=env)
        requests_before = len(fake.requests)
        offline, offline_source = await load_replay(seed, replay_dir=out.parent, environ={})
        assert len(fake.requests) == requests_before  # no network at all
        assert offline.model_dump_json() == online.model_dump_json()
        assert online_source.startswith(url)
        assert offline_source == str(out)
    assert read_replay_file(out).reconstruction == exported.reconstruction


@pytest.mark.anyio
async def test_a_demo_trace_jsonl_is_accepted_as_an_exported_trace(tmp_path: Path) -> None:
    (mine, _), (other, _) = _thread("thread-a"), _thread("thread-b")
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in [*mine.runs, *other.runs]), encoding="utf-8")
    out = tmp_path / "export" / "thread-a.json"
    exported = await export_replay("thread-a", out=out, trace_file=trace)
    assert {r.metadata["thread_id"] for r in exported.runs} == {"thread-a"}
    assert _scan(out.parent, SECRET_ROW, SECRET_CRED) == []
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "thread-b.json").write_text(trace.read_text(encoding="utf-8"), encoding="utf-8")
    rec, _ = await load_replay(ReplaySeed(mode="replay", thread_id="thread-b"), replay_dir=tmp_path / "dir")
    assert rec.thread_id == "thread-b"


@pytest.mark.anyio
async def test_a_sub_agent_chain_run_echoing_rows_never_reaches_the_export(tmp_path: Path) -> None:
    """Regression: only tool runs were redacted, so a nested chain run (a sub-agent) that echoed the
    rows it inserted was written to the exported file verbatim."""
    tb, _ = _thread()
    first_root = tb.runs[0]["id"]
    tb._root = tb.runs[0]
    agent = tb.chain(
        "data-table-agent",
        {"messages": [{"role": "tool", "content": {"rows": [{"email": SECRET_ROW}]}}], "note": SECRET_ROW},
        {"result": {"rows": [{"email": SECRET_ROW}]}, "text": f"inserted {SECRET_ROW}"},
    )
    tb.tool("insert-rows", {"rows": [{"email": SECRET_ROW}]}, {"ok": True}, parent=agent)
    tb.runs[0]["inputs"]["context"] = {"echo": SECRET_ROW}
    tb.runs[0]["outputs"]["debug"] = SECRET_ROW
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in tb.runs), encoding="utf-8")
    out = tmp_path / "export" / "thread-prod-1.json"

    exported = await export_replay("thread-prod-1", out=out, trace_file=trace)

    assert _scan(out.parent, SECRET_ROW) == []
    by_id = {r.id: r for r in exported.runs}
    assert by_id[agent].inputs == {}
    assert by_id[agent].outputs is None
    assert by_id[first_root].inputs == {"message": "Build a Slack alert and a contacts table"}
    assert by_id[first_root].outputs == {"response": "Done."}
    assert exported.reconstruction is not None
    # The sub-agent's tool still belongs to its turn, with its rows omitted.
    (call,) = [b for b in exported.reconstruction.messages[1]["content"] if b.get("toolName") == "insert-rows"]
    assert call["input"] == {"rows": "<1 row(s) omitted>"}


@pytest.mark.anyio
async def test_replay_dir_miss_and_unsafe_thread_ids_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(
        ReplayError, match=r"no exported trace at .*nope\.json; write it with `threadcase replay export"
    ):
        await load_replay(ReplaySeed(mode="replay", thread_id="nope"), replay_dir=tmp_path)
    with pytest.raises(ConfigError, match="cannot name a file"):
        replay_file_path(tmp_path, "../escape")
    (tmp_path / "bad.json").write_text('{"format": "threadcase-replay/9"}', encoding="utf-8")
    with pytest.raises(ReplayError, match=r"bad\.json: format"):
        read_replay_file(tmp_path / "bad.json")


def test_cli_export_writes_the_file_and_prints_one_line(
    fake_langsmith: tuple[FakeLangSmith, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, url = fake_langsmith
    fake.add_runs(fake.add_workspace("Production"), "instance-ai", _thread()[0].runs)
    monkeypatch.setenv("LANGSMITH_ENDPOINT", url)
    monkeypatch.setenv("LANGSMITH_API_KEY", KEY)
    out = tmp_path / "thread-prod-1.json"
    main(["replay", "export", "thread-prod-1", "-o", str(out)])
    printed = capsys.readouterr()
    assert printed.out.startswith(f"wrote {out}: thread thread-prod-1 from {url} workspace Production")
    assert "2 turn(s) before the live turn, 1 workflow(s), 1 data table(s)" in printed.out
    assert KEY not in printed.out + printed.err
    assert json.loads(out.read_text(encoding="utf-8"))["format"] == "threadcase-replay/1"


def test_cli_export_errors_are_one_line_with_exit_codes(
    fake_langsmith: tuple[FakeLangSmith, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, url = fake_langsmith
    fake.add_workspace("Production")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", url)
    monkeypatch.setenv("LANGSMITH_API_KEY", KEY)
    with pytest.raises(SystemExit) as exited:
        main(["replay", "export", "aged-out", "-o", str(tmp_path / "x.json")])
    assert exited.value.code == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "ReplayError" in err
    assert "about 14 days" in err
    with pytest.raises(SystemExit) as exited:
        main(["replay", "export", "t", "-o", str(tmp_path / "cases" / "t.json")])
    assert exited.value.code == 2
    assert "refusing to write a replay export" in capsys.readouterr().err
    monkeypatch.delenv("LANGSMITH_API_KEY")
    with pytest.raises(SystemExit) as exited:
        main(
            [
                "replay",
                "export",
                "t",
                "-o",
                str(tmp_path / "t.json"),
                "--endpoint",
                "https://eu.api.smith.langchain.com",
            ]
        )
    assert exited.value.code == 2
    assert "LANGSMITH_API_KEY_EU" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def test_cli_export_refuses_the_default_suite_and_directories_holding_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: only paths with a ``cases`` component were refused, so an export could land in a
    private suite (``THREADCASE_SUITE``) or next to case files and be committed with them."""
    suite = tmp_path / "team-suite"
    suite.mkdir()
    monkeypatch.setenv("THREADCASE_SUITE", str(suite))
    tb, _ = _thread()
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in tb.runs), encoding="utf-8")
    beside = tmp_path / "elsewhere"
    beside.mkdir()
    (beside / "my-case.json").write_text(
        json.dumps({"complexity": "simple", "tags": [], "conversation": [{"role": "user", "text": "hi"}]}),
        encoding="utf-8",
    )
    for target, reason in (
        (suite / "sub" / "thread-prod-1.json", "inside the default suite"),
        (beside / "thread-prod-1.json", "its directory holds case files (my-case.json)"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(["replay", "export", "thread-prod-1", "-o", str(target), "--from-trace", str(trace)])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert "refusing to write a replay export" in err
        assert reason in err
        assert not target.exists()
    replays = tmp_path / "replays"
    replays.mkdir()
    main(["replay", "export", "thread-prod-1", "-o", str(replays / "thread-prod-1.json"), "--from-trace", str(trace)])
    # A directory of earlier exports is what a replay directory looks like: exporting there again is fine.
    main(["replay", "export", "thread-prod-1", "-o", str(replays / "again.json"), "--from-trace", str(trace)])
    assert sorted(p.name for p in replays.iterdir()) == ["again.json", "thread-prod-1.json"]
