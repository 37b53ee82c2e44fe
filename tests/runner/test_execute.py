"""The run loop with a stand-in worker: journaling as results arrive, interruption, lane sharing."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from tests.report.factory import result
from threadcase.harness.journal import JournalWriter, read_journal
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.runner import RunSettings, default_output_dir, execute
from threadcase.verdicts import CaseResult


@pytest.mark.anyio
async def test_results_are_journaled_the_moment_they_finish(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    seen_on_disk: list[int] = []

    async def worker(item: str, lane: Lane) -> CaseResult:
        await anyio.sleep(0.01 if item == "fast" else 0.05)
        # By the time the slow one finishes, the fast one is already a line on disk.
        if item == "slow":
            seen_on_disk.append(len(path.read_text().splitlines()))
        return result(item, with_record=False).model_copy(update={"lane": lane.base_url})

    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)
    with JournalWriter(path) as journal:
        results, interrupted = await execute(
            ["slow", "fast"], pool, worker, key=lambda s: s, on_result=journal.append, handle_signals=False
        )
    assert not interrupted
    assert [r.case_slug for r in results] == ["fast", "slow"]
    assert seen_on_disk == [1]
    assert [r.case_slug for r in read_journal(path)] == ["fast", "slow"]


@pytest.mark.anyio
async def test_sigint_stops_new_work_cancels_running_and_keeps_finished(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    cleaned: list[str] = []
    started: list[str] = []

    async def worker(item: str, lane: Lane) -> CaseResult:
        started.append(item)
        try:
            if item == "quick":
                return result(item, with_record=False)
            if item == "trigger":
                await anyio.sleep(0.05)
                os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep(30)
            return result(item, with_record=False)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.01)  # cleanup still gets to await after the cancellation
                cleaned.append(item)

    items = ["quick", "trigger", "long-1", "long-2", "never-1", "never-2"]
    # Concurrency 2 admits four case-iterations (two conversing, two set up ahead of them).
    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)
    with anyio.fail_after(5), JournalWriter(path) as journal:
        results, interrupted = await execute(items, pool, worker, key=lambda s: s, on_result=journal.append)
    assert interrupted
    assert [r.case_slug for r in results] == ["quick"]
    assert [r.case_slug for r in read_journal(path)] == ["quick"]
    assert "never-2" not in started
    assert sorted(cleaned) == sorted(started)


def test_settings_validate_flags() -> None:
    settings = RunSettings(base_urls=["http://a:1/", " "], demo_misbehave=["drops-change"])
    assert settings.base_urls == ["http://a:1"]
    with pytest.raises(ValueError, match="unknown demo misbehaviour 'nope'"):
        RunSettings(demo_misbehave=["nope"])
    with pytest.raises(ValueError, match="must start with http"):
        RunSettings(base_urls=["localhost:5678"])
    assert default_output_dir().parts[0] == "threadcase-results"


def test_a_lane_spreads_its_cases_over_a_few_clients() -> None:
    from threadcase.harness.runner import clients_per_lane

    assert clients_per_lane(50) == 13
    assert clients_per_lane(4) == 1
    assert clients_per_lane(1000) == 16
