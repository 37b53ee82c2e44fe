"""Runs made from other runs' journals, with their reports: re-grades and merges.

:func:`regrade_and_report` (``threadcase regrade``) and :func:`merge_and_report` (``threadcase report
--merge``) write a new journal and every report beside it, exactly as a run would, so everything
downstream (``report``, ``compare``, LangSmith) treats them as runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from threadcase.harness.journal import JOURNAL_NAME, JournalWriter
from threadcase.harness.merge import MergedRun, merge_journals
from threadcase.harness.regrade import RegradeOutcome, RegradeSettings, regrade_run
from threadcase.harness.runner import default_output_dir, prepare_output_dir
from threadcase.report import write_reports
from threadcase.report.summary import RunSummary, build_summary
from threadcase.verdicts import CaseResult

__all__ = ["merge_and_report", "regrade_and_report"]


async def regrade_and_report(
    settings: RegradeSettings, *, on_result: Callable[[CaseResult], None] | None = None
) -> tuple[RunSummary, RegradeOutcome]:
    """Re-grade a run (:func:`threadcase.harness.regrade.regrade_run`) and write its reports."""
    outcome = await regrade_run(settings, on_result=on_result)
    summary = build_summary(
        outcome.results, run_id=outcome.run_id, suite=str(outcome.suite), output_dir=str(outcome.output_dir)
    )
    write_reports(outcome.results, summary, outcome.output_dir)
    return summary, outcome


def merge_and_report(
    paths: Sequence[Path], *, output_dir: Path | None = None, allow_mixed: bool = False
) -> tuple[RunSummary, MergedRun]:
    """Merge journals (:func:`threadcase.harness.merge.merge_journals`) into a new run with its reports.

    The output directory must not hold a journal already (as for ``run``).
    """
    merged = merge_journals(paths, allow_mixed=allow_mixed)
    target = prepare_output_dir(output_dir or default_output_dir())
    with JournalWriter(target / JOURNAL_NAME) as journal:
        for result in merged.results:
            journal.append(result)
    summary = build_summary(
        merged.results,
        run_id=merged.run_id,
        suite=merged.context.suite if merged.context is not None else "",
        output_dir=str(target),
    )
    write_reports(merged.results, summary, target)
    return summary, merged
