"""Every seeded workflow and agent is read back twice — right after the restore and after the
conversation — whether or not the agent touched it: the evidence of identity checks and of the judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.runner.demo_suite import demo_settings
from threadcase.grading.check_build import workflow_difference
from threadcase.harness.journal import read_journal
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"


@pytest.mark.anyio
async def test_touched_untouched_deleted_and_agents_all_have_an_end_state(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for slug in ("seeded-edit-by-name", "seeded-agent-skill-edit"):
        shutil.copy(GOLDEN / f"{slug}.json", suite)
    deleting = json.loads((GOLDEN / "seeded-edit-attached.json").read_text(encoding="utf-8"))
    deleting["conversation"][0]["text"] = "Delete this workflow"
    deleting["checks"] = {"workflowsEditedInPlace": ["Daily digest"]}
    (suite / "seeded-delete.json").write_text(json.dumps(deleting), encoding="utf-8")

    await run_and_report(demo_settings(suite, tmp_path / "out"))
    records = {r.case_slug: r.record for r in read_journal(tmp_path / "out" / "journal.jsonl")}

    by_name = records["seeded-edit-by-name"]
    assert by_name is not None
    states = {w.seed_name: w for w in by_name.seed.workflows}
    edited, decoy = states["Morning pipeline digest"], states["Weekly recap"]
    assert edited.restored is not None
    assert edited.final is not None
    assert workflow_difference(edited.restored, edited.final) is not None
    # Never saved by the agent, still read back at the end, and identical to its restored state.
    assert decoy.id not in {wf.id for wf in by_name.artifacts.workflows}
    assert decoy.restored is not None
    assert decoy.final is not None
    assert workflow_difference(decoy.restored, decoy.final) is None

    agent = records["seeded-agent-skill-edit"]
    assert agent is not None
    assert len(agent.seed.agents) == 1
    assert agent.seed.agents[0].final is not None
    assert agent.seed.agents[0].final.skills

    deleted = records["seeded-delete"]
    assert deleted is not None
    (gone,) = deleted.seed.workflows
    assert gone.deleted
    assert gone.final is None
    assert not deleted.instance_failures  # a deleted seeded workflow is a result, not an instance failure
