"""An instance failure the conversation survives voids the case instead of failing the builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from threadcase.credentials.seeder import CredentialSeeder, SeededCredential
from threadcase.harness.errors import InstanceError
from threadcase.harness.models import ModelSettings
from threadcase.harness.runner import RunSettings, run_suite

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
    summary = await run_suite(
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
