"""An instance failure the conversation survives voids the case instead of failing the builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from threadcase.credentials.seeder import CredentialSeeder, SeededCredential
from threadcase.errors import InstanceError
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"


@pytest.mark.anyio
async def test_a_credential_the_user_could_not_create_voids_the_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a failed mid-run credential creation made the proxy fall back, the agent built
    without the credential, and three units failed against the builder under --demo-faults."""

    async def refused(
        self: CredentialSeeder, thread_id: str, credential_type: str, *, working: bool = True
    ) -> SeededCredential:
        raise InstanceError(
            "instance refused the call", method="POST", path="/rest/credentials", status=503, excerpt="{}"
        )

    monkeypatch.setattr(CredentialSeeder, "create_for_proxy", refused)
    summary = await run_and_report(
        RunSettings(
            suite=GOLDEN,
            filter="credentials-engaged-none-existing",
            output_dir=tmp_path / "out",
            models=ModelSettings(),
        )
    )
    (line,) = (tmp_path / "out" / "journal.jsonl").read_text().splitlines()
    result = json.loads(line)
    premise = {p["name"]: p for p in result["premises"]}["instance-undisturbed"]
    assert not premise["held"]
    assert "could not create a slackApi credential" in premise["reason"]
    assert {v["status"] for v in result["verdicts"]} <= {"not_judged", "reviewed"}
    assert summary.units.failed == 0


@pytest.mark.anyio
async def test_a_seed_that_cannot_be_restored_is_a_failed_premise_not_an_error(tmp_path: Path) -> None:
    """Regression: a seeding failure made the case 'errored' with no units; DESIGN makes it a premise:
    every unit not judged, with the reason, attribution framework_issue."""
    suite = tmp_path / "suite"
    suite.mkdir()
    case = {
        "complexity": "simple",
        "tags": ["replay"],
        "datasets": ["seeded"],
        "seed": {"mode": "replay", "threadId": "thread-that-was-never-exported"},
        "processExpectations": ["The agent answers the live message"],
        "checks": {"toolsNotCalled": ["delete-workflow"]},
    }
    (suite / "replay-missing.json").write_text(json.dumps(case), encoding="utf-8")
    replays = tmp_path / "replays"
    replays.mkdir()
    summary = await run_and_report(
        RunSettings(suite=suite, output_dir=tmp_path / "out", models=ModelSettings(), replay_dir=replays)
    )
    (line,) = (tmp_path / "out" / "journal.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["status"] == "not_judged"
    assert result["error"] is None
    seed = {p["name"]: p for p in result["premises"]}["seed-restored"]
    assert not seed["held"]
    assert "thread-that-was-never-exported" in seed["reason"]
    assert {v["status"] for v in result["verdicts"]} == {"not_judged"}
    assert {v["attribution"] for v in result["verdicts"]} == {"framework_issue"}
    assert summary.exit_code == 3  # nothing judged: never green


@pytest.mark.anyio
async def test_a_listing_refused_while_opening_the_lane_is_a_plain_instance_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the lane's snapshot lists four things at once, and a refusal came out wrapped in an
    exception group, which the CLI reported as an internal error without the call and status."""
    from threadcase.instance import InstanceClient

    async def refused(self: InstanceClient) -> list[object]:
        raise InstanceError("instance refused the call", method="GET", path="/rest/workflows", status=500)

    monkeypatch.setattr(InstanceClient, "list_workflows", refused)
    with pytest.raises(InstanceError) as caught:
        await run_and_report(
            RunSettings(suite=GOLDEN, filter="build-single-prompt", output_dir=tmp_path / "out", models=ModelSettings())
        )
    assert (caught.value.path, caught.value.status) == ("/rest/workflows", 500)
