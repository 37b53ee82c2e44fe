"""``threadcase run`` / ``threadcase report`` as a user runs them: exit codes, --json, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runner.test_run_demo import GOLDEN, leftovers
from threadcase.cli import main
from threadcase.cli import run as run_cli
from threadcase.demo_instance import DemoSettings, demo_server_sync
from threadcase.harness.journal import read_journal

THREADCASE = Path(sys.executable).parent / "threadcase"


@pytest.fixture(autouse=True)
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """In-process runs must not re-tune this test process's garbage collector: record the call instead."""
    calls: list[int] = []
    monkeypatch.setattr(run_cli, "prepare_process", lambda: calls.append(1))
    return calls


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_run_json_green_then_report_rebuilds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prepared: list[int]
) -> None:
    out_dir = tmp_path / "out"
    code, out, _ = _run(
        [
            "run",
            "--suite",
            str(GOLDEN),
            "--filter",
            "build-single-prompt,folder",
            "--json",
            "--output-dir",
            f"{out_dir}",
        ],
        capsys,
    )
    assert code == 0
    assert prepared == [1]  # the run prepared its process once; report (below) does not
    summary = json.loads(out)
    assert summary["case_iterations"] == 2
    assert summary["units"]["passed"] > 0
    assert summary["exit_code"] == 0
    written = (out_dir / "report.html").read_text(encoding="utf-8")
    (out_dir / "report.html").unlink()
    code, out, _ = _run(["report", str(out_dir / "journal.jsonl"), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["case_iterations"] == 2
    assert prepared == [1]
    # The run rendered each case's section as its result arrived; the rebuild renders them all from
    # the journal: the same sections, in the same order.
    rebuilt = (out_dir / "report.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section class="case".*?</section>', written, flags=re.DOTALL)
    assert len(sections) == 2
    assert sections == re.findall(r'<section class="case".*?</section>', rebuilt, flags=re.DOTALL)


def test_a_failing_unit_exits_1_and_prints_per_case_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        [
            "run",
            "--suite",
            str(GOLDEN),
            "--filter",
            "declined-detail",
            "--demo-misbehave",
            "ignores-declined",
            "--no-progress",
            "--output-dir",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 1
    assert "FAIL       declined-detail-placeholder  check:mustContain#0" in out
    assert "  build: 2 nodes, 2 turns" in out
    assert "[proxy: decisions" in out
    assert "RED: a unit failed" in out


def test_nothing_judged_is_never_green(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "judge-only.json").write_text(
        json.dumps(
            {
                "complexity": "simple",
                "tags": ["t"],
                "conversation": [{"role": "user", "text": "Every day at 9am post a summary to #general on Slack"}],
                "outcomeExpectations": ["It posts to #general"],
            }
        )
    )
    code, out, _ = _run(["run", "--suite", str(suite), "--no-progress", "--output-dir", str(tmp_path / "o")], capsys)
    assert code == 3
    assert "NOT JUDGED judge-only  no judge model configured" in out
    assert "not verified: 1 × no judge model configured — judge-only" in out
    assert "NOT GREEN: 1 of 1 case-iterations not verified; no judged unit failed" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--demo-misbehave", "nope"], "--demo-misbehave: unknown demo misbehaviour 'nope'"),
        (["--suite", "no/such/dir"], "suite 'no/such/dir' does not exist"),
        (["--filter", "matches-nothing-at-all"], "no case in"),
        (["--base-url", "http://127.0.0.1:9"], "--email and --password"),
        (["--iterations", "0"], "--iterations: Input should be greater than or equal to 1"),
        (["--output-dir", "/proc/no-such-dir/out"], "cannot create it"),
        (["--base-url", "http://127.0.0.1:9", "--demo-misbehave", "drops-change"], "only apply to the embedded"),
        (["--base-url", "ftp://x", "--email", "e", "--password", "p"], "--base-url: base URL 'ftp://x'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THREADCASE_EMAIL", raising=False)
    code, _, err = _run(["run", "--suite", str(GOLDEN), "--output-dir", str(tmp_path), *argv], capsys)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_output_dir_holding_a_journal_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: a second run appended to the first one's journal, merging two runs' statistics."""
    (tmp_path / "journal.jsonl").write_text("{}\n", encoding="utf-8")
    code, _, err = _run(["run", "--suite", str(GOLDEN), "--output-dir", str(tmp_path)], capsys)
    assert code == 2
    assert "already holds a run's journal" in err
    assert (tmp_path / "journal.jsonl").read_text(encoding="utf-8") == "{}\n"


def test_unreachable_instance_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        [
            "run",
            "--suite",
            str(GOLDEN),
            "--base-url",
            "http://127.0.0.1:9",
            "--email",
            "a@b.c",
            "--password",
            "pw",
            "--output-dir",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 3
    assert "instance not ready at http://127.0.0.1:9" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_halfway_keeps_finished_cases_and_leaves_nothing_behind(tmp_path: Path, signum: int) -> None:
    """Ctrl-C (or a TERM) on a real `threadcase run` process: finished cases journaled, the instance left clean."""
    db = tmp_path / "demo.sqlite"
    demo = DemoSettings(db_path=db, latency_ms=60)
    out_dir = tmp_path / "out"
    with demo_server_sync(demo) as url:
        before = leftovers(db)
        env = {**os.environ, "THREADCASE_PASSWORD": demo.password.get_secret_value(), "THREADCASE_EMAIL": demo.email}
        proc = subprocess.Popen(
            [
                str(THREADCASE),
                "run",
                "--suite",
                str(GOLDEN),
                "--base-url",
                url,
                "--concurrency",
                "3",
                "--no-progress",
                "--output-dir",
                str(out_dir),
                "--inactivity-seconds",
                "10",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        journal = out_dir / "journal.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and len(journal.read_text().splitlines()) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
        after = leftovers(db)
    assert proc.returncode == 130, stderr
    results = read_journal(journal)
    assert 2 <= len(results) < 19
    assert all(r.status == "pass" for r in results)
    assert "INTERRUPTED" in stdout
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["case_iterations"] == len(results)
    assert after == before, "the interrupted run left resources behind"


def test_run_with_no_arguments_is_the_golden_suite_on_the_embedded_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(GOLDEN.parents[1])
    for name in ("THREADCASE_SUITE", "THREADCASE_BASE_URL", "OPENAI_API_KEY", "THREADCASE_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("THREADCASE_OUTPUT_DIR", str(tmp_path))
    code, out, _ = _run(["run", "--json"], capsys)
    summary = json.loads(out)
    assert code == 0
    assert summary["cases"] == len(list(GOLDEN.glob("*.json"))) >= 14
    assert summary["suite"] == "cases/golden"
    assert summary["units"]["failed"] == 0


def test_a_refused_login_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with demo_server_sync(DemoSettings()) as url:
        code, _, err = _run(
            [
                "run",
                "--suite",
                str(GOLDEN),
                "--base-url",
                url,
                "--email",
                "owner@threadcase.dev",
                "--password",
                "nope",
                "--output-dir",
                str(tmp_path),
            ],
            capsys,
        )
    assert code == 2
    assert f"login to {url} refused for 'owner@threadcase.dev'" in err
    assert "nope" not in err


def test_a_reader_that_goes_away_does_not_break_the_run(tmp_path: Path) -> None:
    """Regression: `threadcase run | head -1` ended in a SystemExit traceback raised by rich mid-run."""
    out = tmp_path / "out"
    for extra in ([], ["--json"]):
        target = out / ("json" if extra else "text")
        proc = subprocess.run(
            f"'{THREADCASE}' run --suite '{GOLDEN}' --output-dir '{target}' --no-progress {' '.join(extra)}"
            " | head -c 5",
            shell=True,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert "Traceback" not in proc.stderr
        assert "internal error" not in proc.stderr
        assert (target / "report.html").exists()
