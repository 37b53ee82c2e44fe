"""Errors keep their cause (exception groups unwrapped to their leaves), green means verified, and each
case-iteration's token usage is split by who spent it: the builder, the user proxy, the judge."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from rich.console import Console

from tests.fakes.openai_server import FakeOpenAI
from tests.models.answers import echo
from tests.report.factory import result
from tests.runner.test_run_demo import GOLDEN
from threadcase.demo_instance import DemoSettings
from threadcase.errors import InstanceError, SeedingError
from threadcase.harness import pipeline
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.records import RunRecord
from threadcase.report import build_summary, run_and_report
from threadcase.report.console import ConsoleReporter, summary_lines
from threadcase.verdicts import ErrorInfo


@pytest.mark.anyio
@pytest.mark.parametrize("debug", [False, True])
async def test_an_exception_group_is_journaled_as_its_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    """Regression: a case error kept only "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)"."""
    password = DemoSettings().password.get_secret_value()

    async def broken(case: object, **kwargs: Any) -> RunRecord:
        record = kwargs["record"]
        assert isinstance(record, RunRecord)
        if record.case_slug == "build-single-prompt-slack":
            raise ExceptionGroup("unhandled errors in a TaskGroup", [InstanceError(f"login as {password} refused")])
        inner = ExceptionGroup("inner", [SeedingError("the folder was gone"), KeyError("missing")])
        raise ExceptionGroup("unhandled errors in a TaskGroup", [inner])

    monkeypatch.setattr(pipeline, "converse", broken)
    out = tmp_path / "out"
    await run_and_report(
        RunSettings(
            suite=GOLDEN,
            filter="build-single-prompt-slack,message-shape-checks",
            output_dir=out,
            models=ModelSettings(),
            debug=debug,
        )
    )
    errors = {r.case_slug: r.error for r in read_journal(out / "journal.jsonl")}
    one = errors["build-single-prompt-slack"]
    assert one is not None
    assert (one.type, one.attribution) == ("InstanceError", "framework_issue")
    assert one.message == "login as [redacted] refused"
    two = errors["message-shape-checks"]
    assert two is not None
    assert two.type == "ExceptionGroup"
    assert two.message == "2 errors: SeedingError: the folder was gone; KeyError: 'missing'"
    assert [(c.type, c.message) for c in two.causes] == [
        ("SeedingError", "the folder was gone"),
        ("KeyError", "'missing'"),
    ]
    tracebacks = [c.traceback for e in (one, two) for c in e.causes]
    if debug:
        assert all(t and "Traceback" in t for t in tracebacks)
        assert not any(password in (t or "") for t in tracebacks)
    else:
        assert tracebacks == [None, None, None]


def test_green_only_when_every_case_iteration_was_verified() -> None:
    """The issue's run: 2 units passed, 22 not judged, 1 case errored, of 5 — it printed GREEN and exited 0."""
    runs = [
        result("a", statuses=("pass", "pass", "not_judged", "not_judged")),
        *(result(slug, statuses=("not_judged",) * 6) for slug in ("b", "c", "d")),
        result("e", statuses=(), error=ErrorInfo(type="InstanceError", message="503 from /rest/login")),
    ]
    summary = build_summary(runs)
    assert (summary.units.passed, summary.units.not_judged, summary.units.errored) == (2, 20, 1)
    assert summary.exit_code == 3
    assert not summary.green
    lines = summary_lines(summary)
    assert lines[-1] == "NOT GREEN: 4 of 5 case-iterations not verified (1 errored); no judged unit failed"
    assert "not verified: 3 × because — b, c, d" in lines
    assert "not verified: 1 × errored: InstanceError: 503 from /rest/login — e" in lines
    # Every case-iteration verified: green, and review criteria still count apart.
    green = build_summary([result("a", statuses=("pass", "reviewed")), result("b", statuses=("pass", "not_judged"))])
    assert (green.exit_code, green.units.reviewed) == (0, 1)
    assert summary_lines(green)[-1] == "GREEN: every case-iteration verified, every judged unit passed"


@pytest.mark.anyio
async def test_token_usage_by_role_in_journal_summary_console_and_html(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    fake.responder = echo
    fake.usage = {"prompt_tokens": 1200, "completion_tokens": 60, "cached_tokens": 400}
    models = ModelSettings(api_key=SecretStr("k"), base_url=url, proxy_model="fake-proxy", judge_model="fake-judge")
    out = tmp_path / "out"
    summary = await run_and_report(
        RunSettings(
            suite=GOLDEN, filter="declined-detail-placeholder", output_dir=out, models=models, skip_calibration=True
        )
    )
    (case,) = read_journal(out / "journal.jsonl")
    usage = case.model_usage
    assert set(usage) == {"agent", "proxy", "judge"}
    proxy_calls = sum(1 for r in fake.requests if "Decision" in r["response_format"]["json_schema"]["name"])
    assert (usage["proxy"].calls, usage["proxy"].input_tokens) == (proxy_calls, 1200 * proxy_calls)
    assert (usage["judge"].calls, usage["judge"].cached_input_tokens, usage["judge"].output_tokens) == (1, 400, 60)
    assert usage["agent"].input_tokens > 0  # the builder's own, from run debug
    totals = json.loads((out / "summary.json").read_text(encoding="utf-8"))["model_usage"]
    assert totals["judge"]["input_tokens"] == 1200
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<table class='usage'><tr><th>tokens</th>" in html
    assert "<td>proxy</td>" in html
    text = io.StringIO()
    ConsoleReporter(Console(file=text, width=300), total=1).print_summary(summary)
    assert "tokens: agent " in text.getvalue()
    assert "judge 1200 in (400 cached), 60 out, 1 call" in text.getvalue()
