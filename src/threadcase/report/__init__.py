"""Reports of a run: the journal (source of truth), console output, summary.json, junit.xml, report.html.

Every file report is a pure function of the journal's lines, so ``threadcase report JOURNAL``
rebuilds exactly what the run wrote, and every report passes through the run's redactor on its way out.
Beside them: the comparison with a baseline (``compare_view``: compare.json, compare.html), the
Markdown summary (``markdown``: summary.md), ``threadcase control``'s matrix (``control_view``:
control.json, a section of report.html), runs made from journals (``derived``: re-grades and merges)
and LangSmith experiments and datasets (``langsmith``, with everything sent built and redacted in
``langsmith_payload``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from threadcase.errors import ConfigError
from threadcase.harness.interrupts import Interrupts
from threadcase.harness.journal import read_journal_entries, redacted_line
from threadcase.harness.runner import RunSettings, run_redactor, run_suite, say_left_on_exit
from threadcase.leftovers import LeftoverReport
from threadcase.redaction import Redactor
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
    redactor: Redactor | None = None,
) -> list[Path]:
    """Write ``summary.json``, ``junit.xml`` and ``report.html`` atomically; returns their paths.

    ``html_sections``: the results' :func:`render_case_section`, keyed by (case slug, iteration), where
    the caller rendered them already; ``html_extra``: ready HTML above the cases (a control matrix). The
    summary's strings pass through ``redactor`` (default: one that knows the secrets of the process
    environment) before anything is rendered. A directory that cannot be written is a
    :class:`ConfigError` naming it.
    """
    redactor = redactor or Redactor.from_environment(os.environ)
    # The results were redacted as they were journaled; the summary's own strings (suite, paths, URLs)
    # are redacted here, value by value, and every file is rendered from what is redacted.
    summary = RunSummary.model_validate(redactor.json_values(summary.model_dump(mode="json")))
    paths = {
        "summary.json": summary.model_dump_json(indent=2) + "\n",
        "junit.xml": render_junit(results),
        "report.html": render_html(results, summary, prerendered=html_sections, extra=html_extra),
    }
    written: list[Path] = []
    for name, text in paths.items():
        path = output_dir / name
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise ConfigError(
                f"cannot write {name} into {str(output_dir)!r} ({exc.strerror or exc}); "
                "choose a writable directory (--output-dir)"
            ) from None
        written.append(path)
    return written


def rebuild_reports(journal: Path, output_dir: Path | None = None, *, redactor: Redactor | None = None) -> RunSummary:
    """Read a journal and (re)write every report beside it, or into ``output_dir``."""
    entries = read_journal_entries(journal)
    redactor = redactor or Redactor.from_environment(os.environ)
    # A journal may predate redaction, or the secrets it holds may be known only now: its lines pass
    # through this command's redactor before anything is rendered from them.
    results = [redacted_line(result, redactor)[1] for result in entries.results]
    target = output_dir if output_dir is not None else journal.parent
    # A leftover report of an interrupted case-iteration is the journal's record that the run was interrupted.
    interrupted = any(report.interrupted for report in entries.leftover_reports)
    summary = build_summary(results, output_dir=str(target), leftovers=entries.leftovers, interrupted=interrupted)
    write_reports(results, summary, target, redactor=redactor)
    return summary


async def run_and_report(
    settings: RunSettings,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_leftovers: Callable[[LeftoverReport], None] | None = None,
    interrupts: Interrupts | None = None,
    redactor: Redactor | None = None,
) -> RunSummary:
    """Run the suite (:func:`threadcase.harness.runner.run_suite`) and write every report; returns the summary.

    The one call behind ``threadcase run``. Each result's HTML section is rendered the moment it is
    journaled, so the report at the end only assembles them. ``interrupts``: the caller's (watching
    the whole command); None = signals are received for the duration of this call, reports included.
    """
    if interrupts is None:
        interrupts = Interrupts()
        async with interrupts.watching():
            return await run_and_report(
                settings, on_result=on_result, on_start=on_start, on_leftovers=on_leftovers, interrupts=interrupts,
                redactor=redactor,
            )  # fmt: skip
    redactor = redactor or run_redactor(settings)
    sections: dict[tuple[str, int], str] = {}

    def record(result: CaseResult) -> None:
        sections[(result.case_slug, result.iteration)] = render_case_section(result)
        if on_result is not None:
            on_result(result)

    outcome = await run_suite(
        settings,
        on_result=record,
        on_start=on_start,
        on_leftovers=on_leftovers,
        interrupts=interrupts,
        redactor=redactor,
    )

    def exit_now() -> None:
        # A third interrupt while the reports are written: the cases are over, so what is left is known.
        say_left_on_exit(interrupts, redactor, outcome.leftovers, outcome.output_dir / "journal.jsonl")

    forget_exit = interrupts.on_exit(exit_now)
    try:
        summary = build_summary(
            outcome.results,
            run_id=outcome.run_id,
            suite=str(outcome.suite),
            base_urls=outcome.base_urls,
            output_dir=str(outcome.output_dir),
            interrupted=outcome.interrupted or interrupts.interrupted,
            planned=outcome.planned,
            leftovers=outcome.leftovers,
        )
        write_reports(outcome.results, summary, outcome.output_dir, html_sections=sections, redactor=redactor)
    finally:
        forget_exit()
    if interrupts.interrupted and not summary.interrupted:
        # Interrupted while the reports were written: still an interrupted run (exit 130), as it says.
        summary = summary.model_copy(update={"interrupted": True, "exit_code": 130})
    return summary
