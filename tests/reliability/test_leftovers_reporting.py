"""Leftovers are a result: the ledger knows what is on the instance, the journal keeps it, and the
summary, console and HTML report say it — a run with leftovers is never plain GREEN."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report.factory import result
from threadcase.harness.journal import JournalWriter, read_journal, read_journal_entries
from threadcase.harness.ledger import CaseLedger, RunLedger
from threadcase.leftovers import CleanupReport, Leftover, LeftoverReport
from threadcase.redaction import Redactor
from threadcase.report import rebuild_reports
from threadcase.report.console import leftover_lines, summary_lines
from threadcase.report.html import render_html
from threadcase.report.summary import build_summary


def _leftover(kind: str, resource_id: str, lane: str = "http://lane-a") -> Leftover:
    return Leftover.model_validate(
        {"lane": lane, "kind": kind, "id": resource_id, "case_slug": "case-a", "reason": "delete failed: 503"}
    )


def test_a_green_run_with_leftovers_says_so() -> None:
    results = [result("case-a")]
    plain = summary_lines(build_summary(results))
    assert plain[-1] == "GREEN: every case-iteration verified, every judged unit passed"
    left = [_leftover("workflow", "wf-1"), _leftover("thread", "th-1")]
    summary = build_summary(results, leftovers=left)
    lines = summary_lines(summary)
    assert summary.exit_code == 0
    assert lines[-1].startswith("GREEN, with 2 leftovers on the instance: workflow wf-1; thread th-1")
    assert not any(line.startswith("GREEN: every") for line in lines)
    assert any("threadcase cleanup --journal" in line for line in lines)
    assert json.loads(summary.model_dump_json())["leftovers"][0]["id"] == "wf-1"
    page = render_html(results, summary)
    assert "2 leftovers on the instance" in page
    assert "wf-1" in page
    assert "th-1" in page


def test_leftover_console_lines_name_kind_id_lane_and_reason() -> None:
    report = LeftoverReport(run_id="r", resources=[_leftover("credential", "cred-9")])
    (line,) = leftover_lines(report)
    assert line.startswith("LEFTOVER")
    assert "case-a#0  credential cred-9 on http://lane-a: delete failed: 503" in line


def test_the_journal_keeps_leftovers_and_a_later_cleanup(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(result("case-a"))
        journal.append_line(LeftoverReport(run_id="r", resources=[_leftover("workflow", "wf-1")]))
        journal.append_line(LeftoverReport(run_id="r", interrupted=True, resources=[_leftover("thread", "th-1")]))
    entries = read_journal_entries(path)
    assert [r.case_slug for r in entries.results] == ["case-a"]
    assert [x.id for x in entries.leftovers] == ["wf-1", "th-1"]
    assert [r.case_slug for r in read_journal(path)] == ["case-a"]  # results alone, as before
    summary = rebuild_reports(path)
    assert summary.interrupted  # an interrupted case-iteration's leftovers say the run was interrupted
    assert [x.id for x in summary.leftovers] == ["wf-1", "th-1"]
    with JournalWriter(path) as journal:
        journal.append_line(CleanupReport(deleted=[_leftover("workflow", "wf-1")]))
    assert [x.id for x in read_journal_entries(path).leftovers] == ["th-1"]
    assert [x.id for x in rebuild_reports(path).leftovers] == ["th-1"]


def test_a_lone_surrogate_in_a_result_cannot_break_the_journal(tmp_path: Path) -> None:
    """Regression: a lone surrogate (escaped in a case text, or an instance's answer) crashed the run at
    the journal line ("internal error: ExceptionGroup"), leaving no summary, JUnit or report."""
    broken = result("case-a").model_copy(update={"case_file": "cases/odd-\udfff.json"})
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        written = journal.append(broken)
    assert written.case_file == "cases/odd-\ufffd.json"
    (back,) = read_journal(path)
    assert back.case_file == "cases/odd-\ufffd.json"
    rebuild_reports(path)
    assert "odd-\ufffd" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_journal_lines_pass_through_the_run_redactor(tmp_path: Path) -> None:
    leaked = result("case-a").model_copy(update={"case_file": "case for s3cret-value-7"})
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path, Redactor(["s3cret-value-7"])) as journal:
        written = journal.append(leaked)
    assert "s3cret-value-7" not in path.read_text(encoding="utf-8")
    assert "s3cret-value-7" not in written.case_file  # the reports are built from what was written


def test_the_ledger_reports_what_cleanup_could_not_delete() -> None:
    reports: list[LeftoverReport] = []
    run = RunLedger("run-1", on_report=reports.append)
    seeded = ["cred-1", "cred-2"]
    case = CaseLedger(lane="http://lane-a", project_id="p-1", case_slug="case-a", iteration=0, keep={"wf-old"})
    case.watch(lambda: [("credential", c) for c in seeded])
    run.open(case)
    case.add("thread", "th-1")
    case.add("workflow", "wf-new")
    case.add("workflow", "wf-old")  # existed before the run: never ours
    case.add("data_table", "tb-1")
    assert {x.id for x in run.outstanding()} == {"th-1", "wf-new", "tb-1", "cred-1", "cred-2"}
    case.gone("thread", "th-1")
    case.gone("workflow", "wf-new")
    seeded.remove("cred-1")
    case.failed("data_table", "tb-1", "delete failed: instance refused the call (503)")
    left = run.close(case)
    assert [(x.kind, x.id) for x in left] == [("data_table", "tb-1"), ("credential", "cred-2")]
    assert left[0].project_id == "p-1"
    assert left[0].reason == "delete failed: instance refused the call (503)"
    assert "the run stopped first" in left[1].reason
    assert [len(r.resources) for r in reports] == [2]
    assert run.close(case) == []  # reported once


def test_abort_reports_every_open_case_once() -> None:
    reports: list[LeftoverReport] = []
    run = RunLedger("run-1", on_report=reports.append)
    first = CaseLedger(lane="http://a", project_id="p", case_slug="one", iteration=0)
    second = CaseLedger(lane="http://a", project_id="p", case_slug="two", iteration=1)
    for ledger, thread in ((first, "t1"), (second, "t2")):
        run.open(ledger)
        ledger.add("thread", thread)
    left = run.abort("exited at the third interrupt")
    assert sorted(x.id for x in left) == ["t1", "t2"]
    assert reports[0].interrupted
    assert run.close(first) == []  # a case finishing its cleanup after the abort reports nothing twice


@pytest.mark.anyio
async def test_settling_asks_each_open_thread_what_it_built() -> None:
    """Regression: a run still going when the third interrupt came built a workflow no event had told of
    yet; it was on the instance and not in the list printed at exit."""
    run = RunLedger("run-1")
    case = CaseLedger(lane="http://a", project_id="p", case_slug="one", iteration=0)
    run.open(case)
    case.add("thread", "t1")
    asked: list[str] = []

    async def reconcile() -> None:
        asked.append("t1")
        case.add("workflow", "built-late")

    case.reconcile = reconcile
    finished = CaseLedger(lane="http://a", project_id="p", case_slug="two", iteration=0)
    run.open(finished)
    finished.add("thread", "t2")
    finished.gone("thread", "t2")  # its thread is gone: nothing to ask

    async def never() -> None:
        raise AssertionError("a case-iteration without a thread on the instance was asked")

    finished.reconcile = never
    await run.settle(1.0)
    assert asked == ["t1"]
    assert {x.id for x in run.abort("exit")} == {"t1", "built-late"}
