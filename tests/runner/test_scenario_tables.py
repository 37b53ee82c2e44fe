"""Scenario tables exist before the build (so the agent binds the real table) and are gone afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import SecretStr

from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

CASE = {
    "description": "Form submissions go into the orders table the scenario seeds.",
    "complexity": "simple",
    "tags": ["data-table"],
    "conversation": [{"role": "user", "text": "When a form is submitted, insert the row into the orders data table"}],
    "executionScenarios": [
        {
            "name": "stores an order",
            "description": "One form submission.",
            "dataSetup": 'The form receives {"order_ref": "A-17"}.',
            "successCriteria": "The orders table holds a row with order_ref A-17.",
            "seedDataTables": [
                {
                    "id": "orders-table-0001",
                    "name": "orders",
                    "columns": [{"name": "order_ref", "type": "string"}],
                    "rows": [{"order_ref": "A-1"}],
                }
            ],
        }
    ],
    "checks": {"toolsCalled": ["build-workflow"], "toolsNotCalled": ["create-data-table"]},
}


@pytest.mark.anyio
async def test_scenario_tables_are_there_for_the_build_and_gone_after(tmp_path: Path) -> None:
    """Regression: the runner used to create scenario tables only at grading time, after the build."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "orders-table.json").write_text(json.dumps(CASE), encoding="utf-8")
    db = tmp_path / "demo.sqlite"
    demo = DemoSettings(db_path=db)
    async with demo_server(demo) as url:
        summary = await run_and_report(
            RunSettings(
                suite=suite,
                base_urls=[url],
                email=demo.email,
                password=SecretStr(demo.password.get_secret_value()),
                output_dir=tmp_path / "out",
                models=ModelSettings(),
            )
        )
        with sqlite3.connect(db) as conn:
            tables_left = conn.execute("SELECT COUNT(*) FROM data_tables").fetchone()[0]
    journal = [json.loads(line) for line in (tmp_path / "out" / "journal.jsonl").read_text().splitlines()]
    verdicts = {v["unit"]: v["status"] for v in journal[0]["verdicts"]}
    assert verdicts["check:toolsNotCalled#0"] == "pass", journal[0]["verdicts"]
    assert verdicts["scenario:stores an order"] == "not_judged"  # no verifier model configured
    assert summary.units.failed == 0
    assert tables_left == 0
