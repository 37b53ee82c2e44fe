"""Running a suite on the embedded demo instance with no model, and reading back which units turned red."""

from __future__ import annotations

from pathlib import Path

from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings


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
