"""Failed cleanup is a result: what a run could not delete is on the console, in summary.json, in
report.html and the journal; the run is never plain GREEN; `threadcase cleanup --journal` deletes it.
A login answered 503 for longer than one call's retries no longer aborts the run."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from bench.reliability import stored
from pydantic import SecretStr

from tests.reliability.instances import Trouble, troubled_demo
from tests.runner.test_run_demo import GOLDEN
from threadcase.cli import main
from threadcase.demo_instance.settings import DemoSettings
from threadcase.harness.journal import read_journal_entries
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report
from threadcase.report.console import summary_lines

pytestmark = pytest.mark.anyio

DEMO = DemoSettings()


def _cli(argv: list[str]) -> int:
    """The CLI's exit code (run in a worker thread: the command starts its own event loop)."""
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def _settings(tmp_path: Path, url: str, **extra: object) -> RunSettings:
    return RunSettings.model_validate(
        {
            "suite": GOLDEN,
            "base_urls": [url],
            "email": DEMO.email,
            "password": SecretStr(DEMO.password.get_secret_value()),
            "output_dir": tmp_path / "out",
            "models": ModelSettings(),
            "timeout_seconds": 30,
            "inactivity_seconds": 10,
            **extra,
        }
    )


async def test_a_workflow_that_cannot_be_deleted_is_reported_then_cleaned_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "demo.sqlite"
    trouble = Trouble(refuse=[("DELETE", r"/rest/workflows/[^/]+")])
    with troubled_demo(db, trouble) as url:
        before = stored(db)
        summary = await run_and_report(_settings(tmp_path, url, filter="build-single-prompt-slack"))
        after = stored(db)
    assert trouble.refused >= 8, "the first sweep and the second both tried, each with its retries"
    left = after - before
    assert left
    assert all(kind == "workflow" for kind, _ in left)
    assert {(x.kind, x.id) for x in summary.leftovers} == left
    assert all("503" in x.reason for x in summary.leftovers)
    assert summary.exit_code == 0  # the builder passed; the instance is not as the run found it
    verdict = summary_lines(summary)[-1]
    assert verdict.startswith("GREEN, with 1 leftover on the instance: workflow ")
    out = tmp_path / "out"
    assert json.loads((out / "summary.json").read_text())["leftovers"][0]["kind"] == "workflow"
    assert "1 leftover on the instance" in (out / "report.html").read_text(encoding="utf-8")
    assert [x.id for x in read_journal_entries(out / "journal.jsonl").leftovers] == [i for _, i in left]

    # The instance behaves again: `threadcase cleanup --journal J` deletes what the journal names.
    monkeypatch.setenv("THREADCASE_EMAIL", DEMO.email)
    monkeypatch.setenv("THREADCASE_PASSWORD", DEMO.password.get_secret_value())
    with troubled_demo(db, Trouble()) as url:
        argv = ["cleanup", "--journal", str(out / "journal.jsonl"), "--base-url", url]
        code = await anyio.to_thread.run_sync(_cli, argv)
        cleaned = stored(db)
    assert code == 0
    assert cleaned == before
    assert "deleted 1: workflow" in capsys.readouterr().out
    rebuilt = read_journal_entries(out / "journal.jsonl")
    assert rebuilt.leftovers == []
    assert await anyio.to_thread.run_sync(_cli, ["report", str(out / "journal.jsonl")]) == 0
    assert "GREEN: every case-iteration verified, every judged unit passed" in capsys.readouterr().out


async def test_credentials_and_threads_that_stay_are_reported_too(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    trouble = Trouble(refuse=[("DELETE", r"/rest/credentials/[^/]+"), ("DELETE", r"/rest/instance-ai/threads/[^/]+")])
    with troubled_demo(db, trouble) as url:
        before = stored(db)
        summary = await run_and_report(
            _settings(tmp_path, url, filter="credentials-engaged-two-existing", cleanup_seconds=20)
        )
        after = stored(db)
    left = after - before
    assert {kind for kind, _ in left} == {"credential", "thread"}
    assert {(x.kind, x.id) for x in summary.leftovers} == left


async def test_a_login_refused_503_longer_than_one_calls_retries_does_not_abort_the_run(tmp_path: Path) -> None:
    """Regression: at a 0.4 fault rate, a 503 on login that outlasted the client's four attempts aborted
    the whole run (exit 3)."""
    db = tmp_path / "demo.sqlite"
    trouble = Trouble(refuse=[("POST", "/rest/login"), ("GET", "/rest/projects/personal")], times=9)
    with troubled_demo(db, trouble) as url:
        summary = await run_and_report(_settings(tmp_path, url, filter="folder-with-decoys"))
    assert trouble.refused == 9
    assert summary.exit_code == 0, summary.case_statuses
