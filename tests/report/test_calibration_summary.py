"""The judge's calibration at run level: in ``summary.json``, one console line and the HTML header,
rebuilt from the journal alone by ``threadcase report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.report.factory import result
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import build_summary, rebuild_reports, run_and_report
from threadcase.report.console import summary_lines
from threadcase.report.html import render_html

CASE = Path(__file__).resolve().parents[2] / "cases" / "golden" / "build-single-prompt-slack.json"


@pytest.mark.anyio
async def test_a_judge_that_never_answered_shows_in_the_summary_console_and_html(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    """Regression: the calibration lived only in each result's judge info; the run summary, console and
    HTML header never said the judge was uncalibrated, nor that it had not answered at all."""
    _, url = fake_openai  # nothing queued: every call answers 500, so no item is judged
    labelled = tmp_path / "calibration.jsonl"
    item = {"transcript": "### Turn 1\nUser: hi\nAssistant: hello", "expectation": "greets", "human": "pass"}
    labelled.write_text("".join(json.dumps({"id": f"i{i}", **item}) + "\n" for i in range(3)), encoding="utf-8")
    models = ModelSettings(api_key=SecretStr("k"), base_url=url, judge_model="fake-judge", timeout_seconds=2)
    settings = RunSettings(suite=CASE, output_dir=tmp_path / "out", models=models, calibration_set=labelled)
    summary = await run_and_report(settings)

    calibration = summary.calibration
    assert calibration is not None
    assert (calibration.agreement, calibration.n, calibration.unjudged, calibration.passed) == (0.0, 3, 3, False)
    assert (calibration.threshold, calibration.model) == (0.9, "fake-judge")
    line = (
        "judge calibration (fake-judge): agreement 0.00 < 0.90, kappa 0.00, n 3, 3 unjudged — "
        "NOT calibrated: the judge's verdicts are not judged"
    )
    assert line in summary_lines(summary)
    journal = tmp_path / "out" / "journal.jsonl"
    outcome = next(v for v in json.loads(journal.read_text().splitlines()[0])["verdicts"] if v["unit"] == "outcome#0")
    assert outcome["reason"] == (
        "judge uncalibrated: agreement 0.00 < 0.90 (3 of 3 items unjudged: the judge did not answer)"
    )
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["calibration"]["unjudged"] == 3

    rebuilt = rebuild_reports(journal, tmp_path / "again")
    assert rebuilt.calibration == calibration
    header = (tmp_path / "again" / "report.html").read_text().split("</header>")[0]
    assert "agreement 0.00 &lt; 0.90, kappa 0.00, n 3, 3 unjudged" in header


def test_no_calibration_no_line_and_old_journals_still_read() -> None:
    plain = build_summary([result("a", statuses=("pass",))])
    assert plain.calibration is None
    assert not any(line.startswith("judge calibration") for line in summary_lines(plain))
    assert "calibration" not in render_html([], plain)
    # A journal written before n/unjudged were recorded still yields the calibration it has.
    old = result("a", statuses=("pass",)).model_copy(
        update={
            "judge": {
                "model": "m",
                "calibration_agreement": 0.95,
                "calibration_kappa": 0.8,
                "calibration_threshold": 0.9,
                "calibrated": True,
            }
        }
    )
    calibration = build_summary([old]).calibration
    assert calibration is not None
    assert calibration.line() == "judge calibration (m): agreement 0.95 ≥ 0.90, kappa 0.80, n ? — calibrated"
