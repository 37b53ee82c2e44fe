"""The Markdown summary for a pull request: totals, failures with reasons, not judged by reason, comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.factory import result
from tests.results.helpers import cli
from threadcase.harness.compare import compare_results
from threadcase.harness.journal import JournalWriter
from threadcase.report.markdown import MAX_ROWS, render_markdown
from threadcase.report.summary import build_summary
from threadcase.verdicts import CaseResult, ErrorInfo, UnitStatus


def _results() -> list[CaseResult]:
    statuses: list[UnitStatus] = ["pass", "fail", "fail"]
    flaky = [result("flaky-case", i, (status, "not_judged")) for i, status in enumerate(statuses)]
    flaky[2].verdicts[0].reason = "the reply said `a | b` <b>loudly</b>"
    errored = result("broken-case", 0, (), error=ErrorInfo(type="InstanceError", message="HTTP 503 from /rest"))
    return [*flaky, result("fine-case", 0, ("pass", "pass")), errored]


def test_failures_are_one_row_per_unit_with_the_iterations_it_failed_in() -> None:
    results = _results()
    text = render_markdown(build_summary(results), results)
    assert text.startswith("## threadcase: RED: a unit failed\n")
    assert "**3 passed**, **2 failed** (2 against the builder)" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| flaky-case |")]
    # Failed in 2 of 3 judged iterations; the last failure's reason, escaped for a table cell and for HTML.
    assert row.startswith("| flaky-case | check:mustContain#0 | 2/3 | builder_issue | ")
    assert row.endswith(" | the reply said `a \\| b` &lt;b&gt;loudly&lt;/b&gt; |")


def test_not_judged_is_counted_by_reason_and_errors_are_listed() -> None:
    results = _results()
    text = render_markdown(build_summary(results), results)
    assert "| because | 3 |" in text
    assert "| errored: InstanceError: HTTP 503 from /rest | 1 |" in text


def test_a_reason_with_table_syntax_cannot_break_the_table() -> None:
    results = [result("odd", 0, ("fail",))]
    results[0].verdicts[0].reason = "line one\n| injected | row |\n<script>x</script>"
    text = render_markdown(build_summary(results), results)
    row = next(line for line in text.splitlines() if line.startswith("| odd |"))
    assert row.count(" | ") == 4  # five cells, whatever the reason held
    assert "<script>" not in text


def test_long_tables_are_cut_with_a_count() -> None:
    results = [result(f"case-{i:03}", 0, ("fail",)) for i in range(MAX_ROWS + 7)]
    text = render_markdown(build_summary(results), results)
    assert "…and 7 more" in text


def test_the_comparison_lists_regressions_first() -> None:
    baseline = [result("a", i, ("pass", "pass")) for i in range(5)]
    candidate = [result("a", i, ("fail", "pass")) for i in range(5)]
    text = render_markdown(build_summary(candidate), candidate, comparison=compare_results(baseline, candidate))
    assert "### Compared with baseline `run-test`" in text
    assert "**REGRESSED: 1 unit(s) significantly worse" in text
    assert (
        "| a | check:mustContain#0 | 5/5 always-passes | 0/5 always-fails | newly failing | 0.004 | REGRESSED |" in text
    )


def test_report_markdown_prints_it_and_writes_summary_md(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with JournalWriter(tmp_path / "run" / "journal.jsonl") as journal:
        for line in _results():
            journal.append(line)
    code, out, _ = cli(["report", str(tmp_path / "run"), "--markdown"], capsys)
    assert code == 1
    assert out.startswith("## threadcase: RED")
    assert (tmp_path / "run" / "summary.md").read_text(encoding="utf-8") == out
