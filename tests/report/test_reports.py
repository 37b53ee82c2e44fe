"""Journal, summary, JUnit, HTML and console output from hand-made results."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from tests.report.factory import result
from threadcase.errors import ConfigError
from threadcase.harness.journal import JournalWriter, read_journal
from threadcase.report import build_summary, rebuild_reports
from threadcase.report.console import ConsoleReporter, build_line, case_line, summary_lines
from threadcase.report.html import render_case_section, render_html
from threadcase.report.junit import render_junit
from threadcase.report.markdown import render_markdown
from threadcase.verdicts import CaseResult, ErrorInfo


def _mixed() -> list[CaseResult]:
    return [
        result("alpha", 0, ("pass", "pass")),
        result("beta", 0, ("pass", "fail")),
        result("gamma", 0, ("not_judged", "reviewed")),
        result("delta", 0, (), error=ErrorInfo(type="InstanceError", message="503 from /rest/x"), with_record=False),
    ]


def test_journal_appends_flushed_lines_and_tolerates_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(result("alpha"))
        # Flushed at once: another reader sees the line before the writer closes.
        assert len(path.read_text().splitlines()) == 1
        journal.append(result("beta", statuses=("fail",)))
    with path.open("a") as handle:
        handle.write('{"schema_version": 1, "run_id": "x", "case_sl')
    results = read_journal(path)
    assert [r.case_slug for r in results] == ["alpha", "beta"]
    assert results[1].verdicts[0].status == "fail"


def test_journal_rejects_a_bad_middle_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(result("alpha").model_dump_json() + "\nnot json\n" + result("beta").model_dump_json() + "\n")
    with pytest.raises(ConfigError, match=r"journal.jsonl:2: not a threadcase journal line"):
        read_journal(path)
    with pytest.raises(ConfigError, match="journal not found"):
        read_journal(tmp_path / "missing.jsonl")


def test_summary_counts_apart_and_exit_codes() -> None:
    summary = build_summary(_mixed())
    u = summary.units
    assert (u.passed, u.failed, u.not_judged, u.reviewed, u.errored) == (3, 1, 1, 1, 1)
    assert u.builder_failures == 1
    assert summary.exit_code == 1
    assert summary.case_statuses == {"pass": 1, "fail": 1, "not_verified": 1, "errored": 1}
    # Green means verified: a passing case beside one that tested nothing is not green (exit 3).
    partly = build_summary([result("a", statuses=("pass",)), result("g", statuses=("not_judged",))])
    assert (partly.exit_code, partly.units.not_verified) == (3, 1)
    assert [(g.reason, g.count, g.cases) for g in partly.not_verified] == [("because", 1, ["g"])]
    assert summary_lines(partly)[-1] == "NOT GREEN: 1 of 2 case-iterations not verified; no judged unit failed"
    assert summary_lines(partly)[-2] == "not verified: 1 × because — g"
    assert build_summary([result("a", statuses=("pass",)), result("b", statuses=("pass", "not_judged"))]).green
    nothing = build_summary([result("g", statuses=("not_judged", "reviewed"))])
    assert nothing.exit_code == 3
    assert not nothing.green
    assert build_summary([]).exit_code == 3
    assert build_summary(_mixed(), interrupted=True).exit_code == 130


def test_junit_one_testcase_per_unit_and_skips_not_judged() -> None:
    root = ET.fromstring(render_junit(_mixed()))
    assert root.get("tests") == "7"
    assert root.get("failures") == "1"
    assert root.get("skipped") == "2"
    assert root.get("errors") == "1"
    beta = root.find("testsuite[@name='beta']")
    assert beta is not None
    failure = beta.find("testcase/failure")
    assert failure is not None
    assert failure.get("type") == "builder_issue"
    skipped = root.findall("testsuite[@name='gamma']/testcase/skipped")
    assert skipped[0].get("message", "").startswith("not judged: ")
    many = ET.fromstring(render_junit([result("a", 0), result("a", 1)]))
    names = [c.get("name") for c in many.iter("testcase")]
    assert names == ["check:mustContain#0 [iteration 0]", "check:mustContain#0 [iteration 1]"]


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, str | None]] = []
        self.scripts: list[str] = []
        self.details = 0
        self.seed_tags = 0
        self.external: list[str] = []
        self._in_script = False
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.classes.extend((a.get("class") or "").split())
        if tag == "section":
            self.sections.append(a)
        if tag == "details":
            self.details += 1
        if tag == "script":
            self._in_script = True
            if a.get("src"):
                self.external.append(a["src"] or "")
        if tag in ("link", "img") and (a.get("href") or a.get("src")):
            self.external.append(a.get("href") or a.get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        if data == "SEEDED":
            self.seed_tags += 1


def test_html_is_self_contained_escaped_and_filterable() -> None:
    results = _mixed()
    page = render_html(results, build_summary(results))
    parser = _Collect()
    parser.feed(page)
    assert [s.get("data-status") for s in parser.sections] == ["fail", "errored", "not_judged", "pass"]
    assert parser.external == []
    assert "alert(1)" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Three records, each with two seeded turns marked; tool calls and widget payloads folded.
    assert parser.seed_tags == 6
    assert parser.details >= 9
    assert "data-filter" in page
    assert "querySelectorAll('section.case')" in "".join(parser.scripts)
    # Token numbers once per agent turn, never again on the user turn that started the run.
    assert page.count("tokens: 1200 in (1000 cached), 80 out over 1 step") == 3
    assert "seed-restored" in page
    assert "builder_issue" in page


def test_console_lines_and_summary() -> None:
    mixed = _mixed()
    assert case_line(mixed[0]).startswith("PASS       alpha  2/2 judged units passed")
    assert case_line(mixed[1]).startswith("FAIL       beta  check:mustContain#1: because")
    assert case_line(mixed[2]).startswith("NOT JUDGED gamma  because")
    assert "errored: InstanceError: 503" in case_line(mixed[3])
    assert case_line(result("a", 2), iterations=3).startswith("PASS       a#2")
    line = build_line(mixed[0])
    assert line.startswith("  build: 2 nodes, 1 turn, 2.0 s")
    assert "[proxy: decisions 1" in line
    lines = summary_lines(build_summary(mixed))
    assert lines[1] == (
        "units: 3 passed, 1 failed (1 against the builder), 1 not judged, 1 reviewed; 1 case-iterations errored"
    )
    assert lines[-1] == "RED: a unit failed; 2 of 4 case-iterations not verified (1 errored)"
    assert summary_lines(build_summary([result("g", statuses=("not_judged",))]))[-1].startswith("NOT GREEN")

    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    with ConsoleReporter(console, total=len(mixed)) as reporter:
        for r in mixed:
            reporter.case_done(r)
    text = out.getvalue()
    assert text.count("\n") == 8
    assert reporter.counts == {"pass": 1, "fail": 1, "not_judged": 1, "errored": 1}


def test_rebuild_reports_from_journal(tmp_path: Path) -> None:
    journal = tmp_path / "run" / "journal.jsonl"
    with JournalWriter(journal) as writer:
        for r in _mixed():
            writer.append(r)
    out = tmp_path / "out"
    summary = rebuild_reports(journal, out)
    assert summary.exit_code == 1
    assert json.loads((out / "summary.json").read_text())["units"]["failed"] == 1
    assert ET.parse(out / "junit.xml").getroot().get("tests") == "7"
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_statistics_across_iterations_in_console_and_html() -> None:
    results = [result("a", 0, ("pass", "pass")), result("a", 1, ("fail", "pass")), result("a", 2, ("pass", "pass"))]
    summary = build_summary(results)
    lines = summary_lines(summary)
    assert "unstable: a check:mustContain#0: passed 2/3 (95% 21%–94%), flip rate 100%" in lines
    assert not any("check:mustContain#1" in line for line in lines)
    page = render_html(results, summary)
    assert "statistics across iterations" in page
    assert "<td>check:mustContain#0</td><td>3/3</td><td>67%</td><td>21%–94%</td><td>67% 100% 100%</td>" in page
    assert "statistics across iterations" not in render_html(results[:1], build_summary(results[:1]))


def test_sections_rendered_during_the_run_are_used_and_ordered_with_the_rest() -> None:
    results = _mixed()
    # The runner renders each section as its result arrives; the page takes those and renders the
    # missing ones, and still puts failures first.
    early = {("alpha", 0): render_case_section(results[0]).replace("alpha", "alpha-rendered-early")}
    page = render_html(results, build_summary(results), prerendered=early)
    assert "alpha-rendered-early" in page
    assert page.index('id="case-beta-0"') < page.index('id="case-delta-0"') < page.index("alpha-rendered-early")
    assert page.count('<section class="case"') == 4


def test_section_anchors_stay_unique_for_slugs_that_differ_only_in_unsafe_characters() -> None:
    results = [result("a b"), result("a-b"), result("a_b"), result("a_20_b")]
    page = render_html(results, build_summary(results))
    anchors = re.findall(r'<section class="case" id="([^"]+)"', page)
    assert len(anchors) == 4
    assert len(set(anchors)) == 4
    assert all(re.fullmatch(r"case-[A-Za-z0-9._-]+-0", a) for a in anchors)


def _blamed_on_the_user() -> list[CaseResult]:
    """A scripted run whose user could not follow a note, and a unit some user fault failed."""
    from threadcase.records import DirectiveDelivery, ScriptDelivery, ScriptTurnDelivery, UserPlayer, UserValue

    judged = result("omega", 0, ("pass", "fail"))
    failed = judged.verdicts[1].model_copy(update={"attribution": "proxy_issue", "reason": "the user approved it"})
    judged = judged.model_copy(update={"verdicts": [judged.verdicts[0], failed]})
    voided = result("sigma", 0, ("not_judged",))
    reason = 'not judged — premise failed: the scripted user could not follow conversation[1]: note "dance"'
    voided.verdicts[0] = voided.verdicts[0].model_copy(update={"attribution": "proxy_issue", "reason": reason})
    for r in (judged, voided):
        assert r.record is not None
        r.record.user = UserPlayer(kind="scripted")
        r.record.script = ScriptDelivery(
            turns=[ScriptTurnDelivery(turn=1, says="Thanks", delivered=False, why_not="the message budget was spent")],
            directives=[
                DirectiveDelivery(
                    turn=1, note="dance", does="say x", required=True, fired=False, why_not="its turn was never reached"
                )
            ],
            not_understood=["conversation[1]: note \"dance\": 'dance' (no directive matches these words)"],
            values=[UserValue(message=0, request_id="r1", asked="Which channel?", value="#ops", source="stated")],
        )
    return [judged, voided]


def test_what_the_simulated_user_caused_is_counted_apart_everywhere() -> None:
    results = _blamed_on_the_user()
    summary = build_summary(results)
    assert (summary.units.failed, summary.units.builder_failures, summary.units.proxy_failures) == (1, 0, 1)
    assert summary.units.proxy_not_judged == 1
    lines = summary_lines(summary)
    assert lines[1] == (
        "units: 1 passed, 1 failed (0 against the builder, 1 the simulated user's), 1 not judged "
        "(1 because of the simulated user), 0 reviewed; 0 case-iterations errored"
    )
    assert lines[2] == "simulated user: scripted (no proxy model configured)"
    junit = ET.fromstring(render_junit(results))
    assert junit.attrib["failures"] == "0"
    skipped = [s.attrib["message"] for s in junit.iter("skipped")]
    assert "not judged: caused by the simulated user (proxy_issue): the user approved it" in skipped
    assert any(m.startswith("not judged (the simulated user's): not judged — premise failed") for m in skipped)
    page = render_html(results, summary)
    assert "simulated user: scripted (no proxy model configured)" in page
    assert "2 because of the simulated user" in page
    assert "NOT DELIVERED" in page
    assert "NEVER FIRED" in page
    assert "not understood: conversation[1]: note &quot;dance&quot;" in page
    assert "user: scripted (no proxy model configured)" in render_case_section(results[1])
    markdown = render_markdown(summary, results)
    assert "(0 against the builder, 1 the simulated user's), 1 not judged (1 because of the simulated user)" in markdown
    assert "simulated user: scripted (no proxy model configured)" in markdown
