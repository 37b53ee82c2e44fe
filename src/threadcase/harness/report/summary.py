"""The run summary (``summary.json``), the exit code it implies, and atomic report writing.

Counts are kept apart on purpose: passed, failed, not judged and reviewed count *units*; errored
counts *case-iterations* that failed inside (instance, seed, model) and produced no judged unit.
A run in which nothing was judged is never green, whatever else it says.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from threadcase.harness.stats import CaseStats, case_stats
from threadcase.harness.verdicts import CaseResult

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_JUDGED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Counts",
    "RunSummary",
    "build_summary",
    "write_atomic",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOTHING_JUDGED = 3
EXIT_INTERRUPTED = 130


class Counts(BaseModel):
    """Unit verdict counts plus errored case-iterations, each apart."""

    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    failed: int = 0
    not_judged: int = 0
    reviewed: int = 0
    errored: int = 0
    builder_failures: int = 0
    """Failed units that count against the agent (attribution builder_issue or none)."""


class RunSummary(BaseModel):
    """What one run (or one journal) amounts to: counts, per-case statistics and the exit code."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    seconds: float = 0.0
    suite: str = ""
    base_urls: list[str] = Field(default_factory=list)
    output_dir: str = ""
    interrupted: bool = False
    cases: int = 0
    """Distinct cases with at least one finished iteration."""
    case_iterations: int = 0
    planned_case_iterations: int | None = None
    units: Counts = Field(default_factory=Counts)
    case_statuses: dict[str, int] = Field(default_factory=dict)
    """Across iterations: ``pass``, ``fail``, ``not_verified``, ``errored`` -> number of cases."""
    case_stats: list[CaseStats] = Field(default_factory=list)
    exit_code: int = EXIT_OK

    @property
    def green(self) -> bool:
        return self.exit_code == EXIT_OK


def exit_code_for(units: Counts, *, interrupted: bool = False) -> int:
    """0 every judged unit passed; 1 a unit failed; 3 nothing was judged; 130 interrupted."""
    if interrupted:
        return EXIT_INTERRUPTED
    if units.failed:
        return EXIT_FAILED
    if units.passed == 0:
        return EXIT_NOTHING_JUDGED
    return EXIT_OK


def build_summary(
    results: Sequence[CaseResult],
    *,
    run_id: str = "",
    suite: str = "",
    base_urls: Sequence[str] = (),
    output_dir: str = "",
    interrupted: bool = False,
    planned: int | None = None,
) -> RunSummary:
    """Summarise finished case-iterations (e.g. everything in a journal)."""
    units = Counts()
    for result in results:
        for verdict in result.verdicts:
            if verdict.status == "pass":
                units.passed += 1
            elif verdict.status == "fail":
                units.failed += 1
                units.builder_failures += verdict.counts_against_builder
            elif verdict.status == "not_judged":
                units.not_judged += 1
            else:
                units.reviewed += 1
        if result.error is not None and not any(v.status in ("pass", "fail") for v in result.verdicts):
            units.errored += 1
    stats = case_stats(results)
    statuses: dict[str, int] = {}
    for case in stats:
        statuses[case.status] = statuses.get(case.status, 0) + 1
    starts = [r.started_at for r in results]
    ends = [r.finished_at for r in results if r.finished_at is not None]
    started = min(starts) if starts else None
    finished = max(ends) if ends else None
    return RunSummary(
        run_id=run_id or (results[0].run_id if results else ""),
        started_at=started,
        finished_at=finished,
        seconds=(finished - started).total_seconds() if started and finished else 0.0,
        suite=suite,
        base_urls=list(base_urls),
        output_dir=output_dir,
        interrupted=interrupted,
        cases=len(stats),
        case_iterations=len(results),
        planned_case_iterations=planned,
        units=units,
        case_statuses=statuses,
        case_stats=stats,
        exit_code=exit_code_for(units, interrupted=interrupted),
    )


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``.

    A reader (or a crash) never sees half a report: the rename is atomic on one filesystem.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
