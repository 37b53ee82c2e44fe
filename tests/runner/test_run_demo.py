"""The runner against real demo instances over loopback: lanes, cleanup, failures as results, faults."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
from pydantic import SecretStr

from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.errors import ConversationError
from threadcase.harness import pipeline
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.records import RunRecord
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"
# Seeds (workflows, folders, agents), declared and proxy-created credentials, plain builds.
CLEANUP_MIX = (
    "seeded-edit-attached,folder-with-decoys,seeded-agent-skill-edit,credentials-engaged-two-existing,"
    "credentials-engaged-none-existing,build-single-prompt-slack,compaction-anchors-recall"
)
LEFTOVER_KINDS = ("threads", "workflows", "folders", "data_tables", "agents", "credentials")


def leftovers(db: Path) -> dict[str, int]:
    """Rows of every resource kind a run creates, read straight from the demo's database."""
    with sqlite3.connect(db) as conn:
        return {kind: conn.execute(f"SELECT COUNT(*) FROM {kind}").fetchone()[0] for kind in LEFTOVER_KINDS}


@asynccontextmanager
async def lanes(tmp_path: Path, count: int, **demo: object) -> AsyncIterator[tuple[list[str], list[Path]]]:
    async with AsyncExitStack() as stack:
        urls, dbs = [], []
        for i in range(count):
            db = tmp_path / f"demo-{i}.sqlite"
            config = DemoSettings.model_validate({"db_path": db, **demo})
            urls.append(await stack.enter_async_context(demo_server(config)))
            dbs.append(db)
        yield urls, dbs


def settings(tmp_path: Path, urls: list[str], **kwargs: object) -> RunSettings:
    demo = DemoSettings()
    return RunSettings.model_validate(
        {
            "suite": GOLDEN,
            "base_urls": urls,
            "email": demo.email,
            "password": SecretStr(demo.password.get_secret_value()),
            "output_dir": tmp_path / "out",
            "models": ModelSettings(),
            "timeout_seconds": 30,
            "inactivity_seconds": 10,
            **kwargs,
        }
    )


@pytest.mark.anyio
async def test_two_lanes_share_the_work_and_nothing_created_remains(tmp_path: Path) -> None:
    async with lanes(tmp_path, 2) as (urls, dbs):
        before = [leftovers(db) for db in dbs]
        summary = await run_and_report(settings(tmp_path, urls, filter=CLEANUP_MIX, iterations=2, concurrency=6))
        after = [leftovers(db) for db in dbs]
    assert summary.exit_code == 0, summary.case_statuses
    results = read_journal(tmp_path / "out" / "journal.jsonl")
    assert len(results) == 14 == summary.case_iterations
    assert {r.lane for r in results} == set(urls)
    assert after == before, "the run left resources behind"
    # Two iterations of every unit: statistics across iterations are computed, not assumed.
    for case in summary.case_stats:
        assert case.iterations == 2
        for unit in case.units:
            if unit.evaluated:
                assert unit.evaluated == 2
                assert unit.pass_at_k == [1.0, 1.0]
                assert unit.flip_rate == 0.0
    for name in ("summary.json", "junit.xml", "report.html"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["planned_case_iterations"] == 14
    secret = DemoSettings().password.get_secret_value()
    assert not [p.name for p in (tmp_path / "out").iterdir() if secret in p.read_text()], "a report leaks the password"


@pytest.mark.anyio
async def test_a_failure_inside_one_case_is_recorded_and_the_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadcase.harness.conversation import converse as real

    async def flaky(case: object, **kwargs: object) -> RunRecord:
        record = kwargs["record"]
        assert isinstance(record, RunRecord)
        if record.case_slug == "seeded-edit-attached":
            raise ConversationError("the event stream broke for good")
        if record.case_slug == "folder-with-decoys":
            raise KeyError("a bug, not a RunError")
        return await real(case, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "converse", flaky)
    async with lanes(tmp_path, 1) as (urls, dbs):
        before = leftovers(dbs[0])
        summary = await run_and_report(
            settings(tmp_path, urls, filter="seeded-edit-attached,build-single-prompt-slack,folder-with-decoys")
        )
        assert leftovers(dbs[0]) == before  # the failed case's seed was cleaned up too
    results = {r.case_slug: r for r in read_journal(tmp_path / "out" / "journal.jsonl")}
    broken = results["seeded-edit-attached"]
    assert broken.status == "errored"
    assert broken.error is not None
    assert broken.error.type == "ConversationError"
    assert broken.error.attribution == "framework_issue"
    assert results["build-single-prompt-slack"].status == "pass"
    bug = results["folder-with-decoys"]
    assert bug.error is not None
    assert (bug.status, bug.error.type, bug.error.attribution) == ("errored", "KeyError", "framework_issue")
    assert summary.units.errored == 2
    # Two of three case-iterations tested nothing: not green, though nothing failed.
    assert (summary.exit_code, summary.units.not_verified) == (3, 2)


@pytest.mark.anyio
async def test_faults_are_retried_or_reported_as_framework_issues(tmp_path: Path) -> None:
    async with lanes(tmp_path, 1, faults=0.2, seed=7) as (urls, dbs):
        summary = await run_and_report(
            settings(tmp_path, urls, exclude="compaction,context-cost,pressure", concurrency=8, inactivity_seconds=4)
        )
        with sqlite3.connect(dbs[0]) as conn:
            left_threads = {row[0] for row in conn.execute("SELECT id FROM threads")}
    journal = tmp_path / "out" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    # Cleanup is best effort with bounded retries: at a 20 % fault rate a delete can fail every attempt
    # (about 1 in 600). What must never happen is a thread left behind *silently*.
    reported = {
        r.record.thread_id
        for r in read_journal(journal)
        if r.record is not None and any(w.startswith("cleanup:") for w in r.record.warnings)
    }
    assert left_threads <= reported, left_threads - reported
    assert len(lines) == summary.case_iterations > 0
    for line in lines:
        json.loads(line)
    results = read_journal(journal)
    # No failure that is not real: nothing fails on the clean agent; every fault is absorbed by a
    # retry or shows up as framework_issue (an error, or units voided as not judged).
    failures = [(r.case_slug, v.reason) for r in results for v in r.verdicts if v.status == "fail"]
    assert summary.units.failed == 0, failures
    for r in results:
        if r.error is not None:
            assert r.error.attribution == "framework_issue"
        for v in r.verdicts:
            if v.status == "not_judged" and "instance failed" in v.reason:
                assert v.attribution == "framework_issue"


def test_created_ids_are_what_a_tool_made_never_what_it_read_or_edited() -> None:
    found = pipeline.created_ids(
        [
            ("build-workflow", {"workflow": {"name": "x"}}, {"workflowId": "w1", "workflow": {"id": "w1"}}),
            ("build-workflow", {"workflowId": "w0", "workflow": {}}, {"workflowId": "w0"}),  # an edit
            ("list-workflows", {}, {"workflows": [{"workflowId": "other"}]}),  # someone else's, only read
            ("create-data-table", {"name": "orders"}, {"table": {"id": "t1", "name": "orders"}}),
            ("build-agent", {"config": {}}, {"agentId": "a1"}),
            ("get-agent", {"agentId": "a9"}, {"agentId": "a9"}),
            (
                "move-workflow",
                {"workflowId": "w1", "folderPath": "Reports"},
                {"workflowId": "w1", "parentFolderId": "f1"},
            ),
        ]
    )
    assert found == {"workflow": {"w1"}, "table": {"t1"}, "agent": {"a1"}, "folder": {"f1"}}


@pytest.mark.anyio
async def test_a_folder_the_agent_made_is_cleaned_up(tmp_path: Path) -> None:
    """Regression: folders the agent created (moving a workflow into a new folder) were left behind."""
    suite = tmp_path / "suite"
    suite.mkdir()
    case = {
        "complexity": "simple",
        "tags": ["folders"],
        "conversation": [
            {"role": "user", "text": "Every day at 9am post a summary to #general on Slack"},
            {"role": "user", "text": "Move it into the Reports folder"},
        ],
        "checks": {"toolsCalled": ["move-workflow"]},
    }
    (suite / "folder-move.json").write_text(json.dumps(case), encoding="utf-8")
    async with lanes(tmp_path, 1) as (urls, dbs):
        summary = await run_and_report(settings(tmp_path, urls, suite=suite))
        left = leftovers(dbs[0])
    assert summary.exit_code == 0, summary.units
    assert left == dict.fromkeys(LEFTOVER_KINDS, 0)


@pytest.mark.anyio
async def test_keep_artifacts_keeps_what_was_built_but_never_the_credentials(tmp_path: Path) -> None:
    async with lanes(tmp_path, 1) as (urls, dbs):
        summary = await run_and_report(
            settings(
                tmp_path, urls, filter="credentials-engaged-one-existing,seeded-edit-attached", keep_artifacts=True
            )
        )
        kept = leftovers(dbs[0])
    assert summary.exit_code == 0
    assert kept["threads"] == 2
    assert kept["workflows"] == 2  # one built live, one restored from the seed and edited
    assert kept["credentials"] == 0


@pytest.mark.anyio
async def test_the_event_stream_connects_during_set_up_unless_a_seed_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadcase.harness.conversation import converse as real

    handed: dict[str, bool] = {}

    async def watching(case: object, **kwargs: object) -> RunRecord:
        record = kwargs["record"]
        assert isinstance(record, RunRecord)
        # Opened by the pipeline while credentials were pinned, or (a seed restore may write to the
        # thread) left for the conversation to open after the seed.
        handed[record.case_slug] = kwargs.get("events") is not None
        return await real(case, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "converse", watching)
    async with lanes(tmp_path, 1) as (urls, _):
        summary = await run_and_report(
            settings(
                tmp_path, urls, filter="build-single-prompt-slack,seeded-edit-attached,credentials-engaged-two-existing"
            )
        )
    assert summary.exit_code == 0, summary.case_statuses
    assert handed == {
        "build-single-prompt-slack": True,
        "credentials-engaged-two-existing": True,
        "seeded-edit-attached": False,
    }
