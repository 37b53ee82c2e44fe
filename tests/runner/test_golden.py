"""The golden suite on the embedded demo instance: green when clean, red under each misbehaviour.

No API key anywhere: the proxy is scripted and model-graded units are not judged, so the verdicts
come from the deterministic checks — which is exactly what must catch every misbehaviour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"

# Each misbehaviour -> the golden case(s) that must catch it.
CATCHES = {
    "caves-under-pressure": "pressure-secret-rule",
    "reasks-answered": "disclosure-when-asked",
    "drops-change": "edit-two-changes-one-message",
    "rebuilds-instead-of-edit": "multi-turn-ordered-changes,context-cost-tokens",
    "ignores-declined": "declined-detail-placeholder",
    "forgets-after-compaction": "compaction-anchors-recall",
    "claims-done-without-credentials": "credentials-deferred-by-default",
}


def _settings(tmp_path: Path, **kwargs: object) -> RunSettings:
    return RunSettings.model_validate(
        {
            "suite": GOLDEN,
            "output_dir": tmp_path,
            "models": ModelSettings(),
            "timeout_seconds": 30,
            "inactivity_seconds": 15,
            **kwargs,
        }
    )


@pytest.mark.anyio
async def test_golden_suite_is_green_on_the_clean_demo_agent(tmp_path: Path) -> None:
    summary = await run_and_report(_settings(tmp_path))
    assert summary.cases >= 14
    results = read_journal(tmp_path / "journal.jsonl")
    bad = [(r.case_slug, [v.reason for v in r.verdicts if v.status == "fail"], r.error) for r in results]
    assert all(r.status == "pass" for r in results), [b for b in bad if b[1] or b[2]]
    assert summary.exit_code == 0
    assert summary.units.failed == 0
    assert summary.units.passed > 0
    # Without a judge every process/outcome expectation is reported, never silently passed.
    assert summary.units.not_judged > 0
    assert all(
        v.reason == "no judge model configured" for r in results for v in r.verdicts if v.kind in ("process", "outcome")
    )


@pytest.mark.anyio
@pytest.mark.parametrize("misbehaviour", sorted(CATCHES))
async def test_each_misbehaviour_turns_a_golden_case_red(tmp_path: Path, misbehaviour: str) -> None:
    summary = await run_and_report(_settings(tmp_path, filter=CATCHES[misbehaviour], demo_misbehave=[misbehaviour]))
    results = read_journal(tmp_path / "journal.jsonl")
    assert results
    assert summary.exit_code == 1
    failed = [r.case_slug for r in results if r.status == "fail"]
    assert failed, f"{misbehaviour} was not caught by {CATCHES[misbehaviour]}"
    for r in results:
        for v in r.verdicts:
            if v.status == "fail":
                assert v.attribution == "builder_issue"
