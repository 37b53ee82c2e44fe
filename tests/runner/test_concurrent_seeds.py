"""Many live copies of one seeded case on one lane never evict each other's seed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.harness import runner
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"


@pytest.mark.anyio
async def test_eight_live_copies_of_a_seeded_case_all_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: each case snapshotted the instance itself and claims lived per HTTP client, so at
    concurrency > 4 (several clients per lane) a case could evict another live case's seeded workflows."""
    # An http:// lane has one client now; an https:// lane of this size has two, and claims must hold
    # across them.
    monkeypatch.setattr(runner, "clients_per_lane", lambda cap: 2)
    suite = tmp_path / "suite"
    suite.mkdir()
    for i in range(8):
        shutil.copy(GOLDEN / "seeded-edit-by-name.json", suite / f"copy-{i}.json")
    demo = DemoSettings()
    async with demo_server(demo) as url:
        summary = await run_and_report(
            RunSettings(
                suite=suite,
                base_urls=[url],
                email=demo.email,
                password=SecretStr(demo.password.get_secret_value()),
                concurrency=8,
                iterations=2,
                output_dir=tmp_path / "out",
                models=ModelSettings(),
            )
        )
    journal = [json.loads(line) for line in (tmp_path / "out" / "journal.jsonl").read_text().splitlines()]
    assert [r["status"] for r in journal] == ["pass"] * 16, [r.get("error") for r in journal]
    assert summary.units.failed == 0
