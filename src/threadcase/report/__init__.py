"""Reports of a run: the journal (source of truth), console output, summary.json, junit.xml, report.html.

Every file report is a pure function of the journal's results, so ``threadcase report JOURNAL``
rebuilds exactly what the run wrote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from threadcase.report.html import render_case_section, render_html
from threadcase.report.journal import JOURNAL_NAME, JournalWriter, read_journal
from threadcase.report.junit import render_junit
from threadcase.report.summary import RunSummary, build_summary, write_atomic
from threadcase.verdicts import CaseResult

__all__ = [
    "JOURNAL_NAME",
    "JournalWriter",
    "RunSummary",
    "build_summary",
    "read_journal",
    "rebuild_reports",
    "render_case_section",
    "write_reports",
]


def write_reports(
    results: Sequence[CaseResult],
    summary: RunSummary,
    output_dir: Path,
    *,
    html_sections: Mapping[tuple[str, int], str] | None = None,
) -> list[Path]:
    """Write ``summary.json``, ``junit.xml`` and ``report.html`` atomically; returns their paths.

    ``html_sections``: the results' :func:`render_case_section`, keyed by (case slug, iteration), where
    the caller rendered them already.
    """
    paths = {
        "summary.json": summary.model_dump_json(indent=2) + "\n",
        "junit.xml": render_junit(results),
        "report.html": render_html(results, summary, prerendered=html_sections),
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
