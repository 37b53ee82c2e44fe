"""Any number of SIGINT/SIGTERM at any moment: the first finishes the running conversations, the second
stops them and cleans up, the third exits at once after printing and journaling what is left. Exit 130
every time, never a traceback, and nothing on the instance that the run does not report.

Regression: a second signal during the first one's cleanup met the default handlers: the harness died
(-2, -6, -15; twice an exception-group traceback) and left threads, workflows, folders and credentials
on the instance with nothing telling the user.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from bench.reliability import stored

from tests.reliability.instances import Trouble, troubled_demo
from tests.report.factory import result
from tests.runner.test_run_demo import GOLDEN
from threadcase.demo_instance.settings import DemoSettings
from threadcase.harness.interrupts import Interrupts
from threadcase.harness.journal import read_journal_entries
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.runner import execute
from threadcase.verdicts import CaseResult

THREADCASE = Path(sys.executable).parent / "threadcase"
DEMO = DemoSettings()


def _start(url: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "THREADCASE_PASSWORD": DEMO.password.get_secret_value(), "THREADCASE_EMAIL": DEMO.email}
    return subprocess.Popen(
        [
            str(THREADCASE),
            "run",
            "--suite",
            str(GOLDEN),
            "--base-url",
            url,
            "--concurrency",
            "4",
            "--no-progress",
            "--output-dir",
            str(out),
            "--inactivity-seconds",
            "10",
            *extra,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_results(proc: subprocess.Popen[str], journal: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) >= count:
            return
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be interrupted"


def _reported(journal: Path) -> set[tuple[str, str]]:
    return {(x.kind, x.id) for x in read_journal_entries(journal).leftovers}


@pytest.mark.slow
def test_a_second_signal_stops_the_conversations_but_still_cleans_up(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    with troubled_demo(db, Trouble(), latency_ms=60) as url:
        before = stored(db)
        proc = _start(url, tmp_path / "out")
        _wait_for_results(proc, tmp_path / "out" / "journal.jsonl", 1)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        after = stored(db)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "internal error" not in stderr
    assert "finishing the running conversations" in stderr
    assert "stopping the running conversations" in stderr
    assert "INTERRUPTED" in stdout
    assert after - before <= _reported(tmp_path / "out" / "journal.jsonl")


@pytest.mark.slow
def test_a_third_signal_exits_at_once_and_says_exactly_what_is_left(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    # Slow deletes: the third signal lands while the cleanups are still at work.
    trouble = Trouble(slow=[("DELETE", r"/rest/.*")], seconds=1.0)
    with troubled_demo(db, trouble, latency_ms=60) as url:
        before = stored(db)
        proc = _start(url, tmp_path / "out")
        journal = tmp_path / "out" / "journal.jsonl"
        _wait_for_results(proc, journal, 1)
        for gap in (0.05, 0.05, 0.0):
            proc.send_signal(signal.SIGINT)
            time.sleep(gap)
        sent = time.monotonic()
        _stdout, stderr = proc.communicate(timeout=60)
        exited_after = time.monotonic() - sent
        left = stored(db) - before
    assert proc.returncode == 130, stderr
    assert exited_after < 5, "the third signal did not exit at once"
    assert "Traceback" not in stderr
    assert "exiting now; left on the instance:" in stderr
    reported = _reported(journal)
    assert left, "the cleanups had nothing in flight: the test proved nothing"
    assert left <= reported, f"left on the instance but not reported: {left - reported}"
    for _, resource_id in left:
        assert resource_id in stderr  # ids per kind, on the terminal too
    # And what the journal says is left, `threadcase cleanup` removes: the instance is as it was.
    with troubled_demo(db, Trouble()) as url:
        env = {**os.environ, "THREADCASE_PASSWORD": DEMO.password.get_secret_value(), "THREADCASE_EMAIL": DEMO.email}
        cleanup = subprocess.run(
            [str(THREADCASE), "cleanup", "--journal", str(journal), "--base-url", url],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert cleanup.returncode == 0, cleanup.stderr
        assert stored(db) == before


@pytest.mark.anyio
async def test_the_first_interrupt_lets_running_conversations_finish_and_starts_nothing_new() -> None:
    """Case-iterations in their conversation finish and are kept; those still setting up are stopped."""
    interrupts = Interrupts(say=lambda line: None)
    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)
    stopped: list[str] = []
    started: list[str] = []

    async def worker(item: str, lane: Lane) -> CaseResult:
        started.append(item)
        try:
            if item.startswith("talk"):
                async with pool.conversation(lane, item):
                    if item == "talk-1":
                        await anyio.sleep(0.05)
                        interrupts.interrupt()
                    await anyio.sleep(0.2)  # the rest of its conversation, after the interrupt
            else:
                await anyio.sleep(30)  # a set-up that never reaches its conversation
            return result(item, with_record=False)
        except anyio.get_cancelled_exc_class():
            stopped.append(item)
            raise

    items = ["talk-1", "talk-2", "setup-1", "setup-2", "later-1", "later-2"]
    with anyio.fail_after(5):
        results, interrupted = await execute(items, pool, worker, key=lambda s: s, interrupts=interrupts)
    assert interrupted
    assert sorted(r.case_slug for r in results) == ["talk-1", "talk-2"]
    assert sorted(stopped) == ["setup-1", "setup-2"]
    assert "later-1" not in started


@pytest.mark.anyio
async def test_the_second_interrupt_stops_the_conversations_too() -> None:
    interrupts = Interrupts(say=lambda line: None)
    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)

    async def worker(item: str, lane: Lane) -> CaseResult:
        async with pool.conversation(lane, item):
            if item == "a":
                interrupts.interrupt()
                interrupts.interrupt()
            await anyio.sleep(30)
        return result(item, with_record=False)

    with anyio.fail_after(5):
        results, interrupted = await execute(["a", "b"], pool, worker, key=lambda s: s, interrupts=interrupts)
    assert interrupted
    assert results == []


def test_the_third_interrupt_runs_the_exit_hooks_then_exits_130() -> None:
    said: list[str] = []
    interrupts = Interrupts(say=said.append)
    exits: list[int] = []
    interrupts.exit = exits.append
    hooks: list[str] = []
    interrupts.on_exit(lambda: hooks.append("journal"))

    def broken() -> None:
        raise RuntimeError("a failing hook must not keep the exit from happening")

    interrupts.on_exit(broken)
    interrupts.on_exit(lambda: hooks.append("print"))
    for _ in range(3):
        interrupts.interrupt()
    assert hooks == ["journal", "print"]
    assert exits == [130]
    assert len(said) == 2
