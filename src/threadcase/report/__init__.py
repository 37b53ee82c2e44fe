"""Reports of a run: the journal (source of truth), console output, summary.json, junit.xml, report.html.

Every file report is a pure function of the journal's results, so ``threadcase report JOURNAL``
rebuilds exactly what the run wrote. Beside them: the comparison with a baseline
(``compare_view``: compare.json, compare.html), the Markdown summary (``markdown``: summary.md),
``threadcase control``'s matrix (``control_view``: control.json, a section of report.html), runs made
from journals (``derived``: re-grades and merges) and LangSmith experiments and datasets
(``langsmith``, with everything sent built and redacted in ``langsmith_payload``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings, run_suite
from threadcase.report.html import render_case_section, render_html
from threadcase.report.junit import render_junit
from threadcase.report.summary import RunSummary, build_summary, write_atomic
from threadcase.verdicts import CaseResult

__all__ = [
    "RunSummary",
    "build_summary",
    "rebuild_reports",
    "render_case_section",
    "run_and_report",
    "write_reports",
]


def write_reports(
    results: Sequence[CaseResult],
    summary: RunSummary,
    output_dir: Path,
    *,
    html_sections: Mapping[tuple[str, int], str] | None = None,
    html_extra: str = "",
) -> list[Path]:
    """Write ``summary.json``, ``junit.xml`` and ``report.html`` atomically; returns their paths.

    ``html_sections``: the results' :func:`render_case_section`, keyed by (case slug, iteration), where
    the caller rendered them already; ``html_extra``: ready HTML above the cases (a control matrix).
    """
    paths = {
        "summary.json": summary.model_dump_json(indent=2) + "\n",
        "junit.xml": render_junit(results),
        "report.html": render_html(results, summary, prerendered=html_sections, extra=html_extra),
    }
    written: list[Path] = []
    for name, text in paths.items():
        path = output_dir / name
        write_atomic(path, text)
        written.append(path)
    return written


def rebuild_reports(journal: Path, output_dir: Path | None = None) -> RunSummary:
    """Read a journal and (re)write every report beside it, or into ``output_dir``."""
    results = read_journal(journal)
    target = output_dir if output_dir is not None else journal.parent
    summary = build_summary(results, output_dir=str(target))
    write_reports(results, summary, target)
    return summary


async def run_and_report(
    settings: RunSettings,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> RunSummary:
    """Run the suite (:func:`threadcase.harness.runner.run_suite`) and write every report; returns the summary.

    The one call behind ``threadcase run``. Each result's HTML section is rendered the moment it is
    journaled, so the report at the end only assembles them.
    """
    sections: dict[tuple[str, int], str] = {}

    def record(result: CaseResult) -> None:
        sections[(result.case_slug, result.iteration)] = render_case_section(result)
        if on_result is not None:
            on_result(result)

    outcome = await run_suite(settings, on_result=record, on_start=on_start)
    summary = build_summary(
        outcome.results,
        run_id=outcome.run_id,
        suite=str(outcome.suite),
        base_urls=outcome.base_urls,
        output_dir=str(outcome.output_dir),
        interrupted=outcome.interrupted,
        planned=outcome.planned,
    )
    write_reports(outcome.results, summary, outcome.output_dir, html_sections=sections)
    return summary
