"""Running a suite on the embedded demo instance with no model, and reading back which units turned red."""

from __future__ import annotations

from pathlib import Path

import anyio

from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.records import ScriptDelivery
from threadcase.report import RunSummary, run_and_report
from threadcase.verdicts import CaseResult


def demo_settings(suite: Path, output_dir: Path, **kwargs: object) -> RunSettings:
    """Settings for a run on a fresh in-process demo instance: scripted user, no judge, short budgets."""
    return RunSettings.model_validate(
        {
            "suite": suite,
            "output_dir": output_dir,
            "models": ModelSettings(),
            "timeout_seconds": 30,
            "inactivity_seconds": 15,
            **kwargs,
        }
    )


def run_once_on_demo(suite: Path, output_dir: Path, **kwargs: object) -> tuple[RunSummary, dict[str, CaseResult]]:
    """Run ``suite`` on a fresh demo with :func:`demo_settings` (for a module-scoped fixture): the summary,
    and each case's result by slug as the journal recorded it."""
    summary = anyio.run(run_and_report, demo_settings(suite, output_dir, **kwargs))
    return summary, {r.case_slug: r for r in read_journal(output_dir / "journal.jsonl")}


def red_units(output_dir: Path) -> dict[str, set[str]]:
    """Case slug -> the units that failed, from the run's journal; every failure must be the builder's
    and no case may have errored."""
    red: dict[str, set[str]] = {}
    for result in read_journal(output_dir / "journal.jsonl"):
        assert result.error is None, (result.case_slug, result.error)
        for verdict in result.verdicts:
            if verdict.status == "fail":
                assert verdict.attribution == "builder_issue", (result.case_slug, verdict)
                red.setdefault(result.case_slug, set()).add(verdict.unit)
    return red


def user_texts(result: CaseResult) -> list[str]:
    """What the simulated user said in the live conversation, in order."""
    assert result.record is not None
    return [t.text for t in result.record.live_turns if t.role == "user"]


def script_delivery(result: CaseResult) -> ScriptDelivery:
    """How the script went (a scripted run always records it)."""
    assert result.record is not None
    assert result.record.script is not None
    return result.record.script


def widget_answers(result: CaseResult, kind: str) -> list[dict[str, object]]:
    """The bodies the simulated user answered every widget of ``kind`` with, in order."""
    assert result.record is not None
    return [w.answer or {} for t in result.record.live_turns for w in t.widgets if w.input_type == kind]
