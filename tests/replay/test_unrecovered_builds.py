"""A replay whose builds carry only workflow-SDK code must not be graded as if the workspace were restored.

Regression: such builds were skipped with a warning and the case was still judged against a
workspace missing the agent's workflows (blaming the agent for the harness's gap).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.replay.tracebuilder import TraceBuilder, workflow
from threadcase.case.schema import ReplaySeed
from threadcase.demo_instance import DemoSettings, create_app
from threadcase.demo_instance.serve import serving
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.errors import ReplayError
from threadcase.harness.runner import RunSettings
from threadcase.instance import InstanceClient
from threadcase.report import run_and_report
from threadcase.seeds.inline import InstanceSnapshot
from threadcase.seeds.replay import restore_replay_seed
from threadcase.seeds.replay_rebuild import rebuild_thread
from threadcase.verdicts import CaseResult

SDK_CODE = "export default workflow('Digest').add(trigger(...))"


def _thread(*, with_json_build: bool) -> TraceBuilder:
    tb = TraceBuilder("thread-sdk-1")
    tb.turn("Build a digest and a Slack alert", "Built both.")
    tb.tool("build-workflow", {"code": SDK_CODE}, {"workflowId": "wf-digest-00000001"})
    if with_json_build:
        wf = workflow("wf-slack-00000002", "Slack alert")
        tb.tool("build-workflow", {"workflow": wf}, {"workflowId": "wf-slack-00000002", "workflow": wf})
    tb.turn("Make the digest daily")
    return tb


def test_code_only_builds_are_listed_and_a_later_json_build_or_delete_clears_them() -> None:
    rec = rebuild_thread(_thread(with_json_build=True).runs)
    assert rec.recovered_builds == 1
    assert rec.unrecovered_builds == ["workflow wf-digest-00000001: its latest build carried no workflow JSON"]

    tb = TraceBuilder()
    tb.turn("go")
    wf = workflow("wf-a-00000001", "A")
    tb.tool("build-workflow", {"workflow": wf}, {"workflowId": "wf-a-00000001", "workflow": wf})
    tb.tool("build-workflow", {"code": SDK_CODE}, {"workflowId": "wf-a-00000001"})
    tb.tool("build-workflow", {"code": SDK_CODE}, {"workflowId": "wf-b-00000002"})
    tb.tool("delete-workflow", {"workflowId": "wf-b-00000002"}, {"ok": True})
    tb.turn("live")
    rec = rebuild_thread(tb.runs)
    # The JSON build of A is older than its code-only build: restoring it would misrepresent A.
    assert rec.workflows == []
    assert rec.unrecovered_builds == ["workflow wf-a-00000001: its latest build carried no workflow JSON"]


async def _restore(tmp_path: Path, tb: TraceBuilder) -> tuple[bool, str | None]:
    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "thread-sdk-1.json").write_text(
        "".join(json.dumps(r) + "\n" for r in tb.runs), encoding="utf-8"
    )
    async with (
        serving(create_app(DemoSettings(db_path=tmp_path / "demo.db"))) as url,
        InstanceClient(url, email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD) as client,
    ):
        project = await client.personal_project()
        thread_id = str(uuid.uuid4())
        await client.create_thread(thread_id, project.id)
        restored, live = await restore_replay_seed(
            client,
            ReplaySeed(mode="replay", thread_id="thread-sdk-1"),
            thread_id=thread_id,
            project_id=project.id,
            run_suffix="abcd1234",
            snapshot=InstanceSnapshot(project_id=project.id),
            replay_dir=tmp_path / "replays",
        )
    assert live == "Make the digest daily"
    return restored.outcome.restored, restored.outcome.error


@pytest.mark.anyio
async def test_a_partly_recovered_replay_seed_does_not_count_as_restored(tmp_path: Path) -> None:
    restored, error = await _restore(tmp_path, _thread(with_json_build=True))
    assert restored is False
    assert error is not None
    assert "wf-digest-00000001" in error
    assert "no workflow JSON" in error


@pytest.mark.anyio
async def test_a_replay_where_no_build_was_recovered_is_a_replay_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match=r"none of the 1 workflow\(s\).*workflow-SDK code"):
        await _restore(tmp_path, _thread(with_json_build=False))


@pytest.mark.anyio
async def test_the_runner_voids_a_partly_recovered_replay_case_as_a_framework_issue(tmp_path: Path) -> None:
    """The premise ``seed-restored`` fails, so no unit is judged and none counts against the builder."""
    replays = tmp_path / "replays"
    replays.mkdir()
    runs = _thread(with_json_build=True).runs
    (replays / "thread-sdk-1.json").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    case = {
        "complexity": "simple",
        "tags": ["replay"],
        "datasets": ["seeded"],
        "seed": {"mode": "replay", "threadId": "thread-sdk-1"},
        "checks": {"toolsCalled": ["build-workflow"]},
    }
    (suite / "replay-sdk.json").write_text(json.dumps(case), encoding="utf-8")
    results: list[CaseResult] = []
    async with serving(create_app(DemoSettings(db_path=tmp_path / "demo.db"))) as url:
        settings = RunSettings(
            suite=suite,
            base_urls=[url],
            email=DEFAULT_EMAIL,
            password=SecretStr(DEFAULT_PASSWORD),
            output_dir=tmp_path / "out",
            replay_dir=replays,
            timeout_seconds=30,
            concurrency=1,
        )
        await run_and_report(settings, on_result=results.append)
    (result,) = results
    assert result.status == "not_judged"
    (premise,) = [p for p in result.premises if p.name == "seed-restored"]
    assert not premise.held
    assert "wf-digest-00000001" in premise.reason
    assert result.verdicts
    assert all(v.status == "not_judged" and v.attribution == "framework_issue" for v in result.verdicts)
