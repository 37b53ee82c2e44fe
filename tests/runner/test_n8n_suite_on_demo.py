"""The n8n suite (``cases/n8n/``) on the embedded demo instance: the same cases that run green on the
real n8n driven by the scripted model (``tests/n8n/test_n8n_suite.py``) are green here, every unit
judged — the verifier of the execution scenario is the suite's scripted model, on loopback.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic import SecretStr

from tests.runner.demo_suite import demo_settings
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.harness.journal import read_journal
from threadcase.models import ModelSettings
from threadcase.report import run_and_report
from threadcase.standins.model_server import ScriptedModel, create_app
from threadcase.standins.script import load_script

pytestmark = pytest.mark.anyio

SUITE = Path(__file__).resolve().parents[2] / "cases" / "n8n"
SCRIPT = SUITE / "model" / "script.json"
FLOWS = {
    "build-evening-revenue",
    "clarify-channel-once",
    "credential-card-new",
    "credential-card-existing",
    "seeded-edit-in-place",
    "compaction-recall",
}
COMPACTION = "compaction-recall"
"""Runs on n8n beside the others only on an instance of its own: its observer threshold is instance-wide."""


def verifier_settings(url: str) -> ModelSettings:
    """The scripted model as the scenario verifier (it passes a scenario only on evidence in the trace)."""
    return ModelSettings(api_key=SecretStr("sk-threadcase-scripted"), base_url=f"{url}/v1", verifier_model="scripted")


async def test_the_n8n_suite_is_green_on_the_demo_with_every_unit_judged(tmp_path: Path) -> None:
    model = ScriptedModel(load_script(SCRIPT))
    with serve_in_thread(create_app(model)) as url:
        settings = demo_settings(SUITE, tmp_path, models=verifier_settings(url))
        with anyio.fail_after(90):
            outcome = await run_and_report(settings)
    results = read_journal(tmp_path / "journal.jsonl")
    assert {r.case_slug for r in results} == FLOWS
    for result in results:
        assert result.error is None, (result.case_slug, result.error)
        for verdict in result.verdicts:
            assert verdict.status == "pass", (result.case_slug, verdict)
    # The demo has the memory route: its rows, not run debug, show the compaction.
    compaction = next(r for r in results if r.case_slug == COMPACTION)
    premise = next(p for p in compaction.premises if p.name == "memory-compaction")
    assert premise.held, premise.reason
    assert premise.reason.startswith("the thread compacted (")
    scenarios = [v for r in results for v in r.verdicts if v.unit.startswith("scenario:")]
    assert len(scenarios) == 1
    assert outcome.exit_code == 0
