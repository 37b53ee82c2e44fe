"""Set-up ahead of a free conversation slot, clean-up after it: --concurrency bounds conversations."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.runner.one_case import one_case_lane, write_thanks_cases
from threadcase import grading
from threadcase.case.loader import LoadedCase
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.errors import InstanceError
from threadcase.harness import pipeline
from threadcase.harness.conversation import Budgets
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.pipeline import PipelineConfig, WorkItem, run_case
from threadcase.harness.runner import RunSettings
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.report import run_and_report
from threadcase.verdicts import CaseResult

LATENCY_MS = 80


def _at(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


async def _run_behind_a_busy_slot(
    loaded: LoadedCase,
    lane: Lane,
    pool: LanePool,
    config: PipelineConfig,
    hold: float,
    while_held: Callable[[], Awaitable[None]] | None = None,
) -> CaseResult:
    """Run the case while the test holds the lane's only conversation slot for ``hold`` seconds."""
    results: list[CaseResult] = []

    async def run() -> None:
        results.append(await run_case(WorkItem(loaded, 0), lane, config, pool))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg, pool.conversation(lane, "someone-else"):
            tg.start_soon(run)
            await anyio.sleep(hold)
            if while_held is not None:
                await while_held()
    (result,) = results
    return result


def _deadline_config(seconds: float) -> PipelineConfig:
    return PipelineConfig(
        run_id=uuid.uuid4().hex[:12], models=ModelSettings(), budgets=Budgets(), case_deadline_seconds=seconds
    )


@pytest.mark.anyio
async def test_concurrency_bounds_conversations_while_the_next_cases_set_up_ahead(tmp_path: Path) -> None:
    write_thanks_cases(tmp_path / "suite", 6)
    summary = await run_and_report(
        RunSettings(
            suite=tmp_path / "suite",
            concurrency=2,
            demo_latency_ms=LATENCY_MS,
            output_dir=tmp_path / "out",
            models=ModelSettings(),
        )
    )
    assert summary.exit_code == 0
    results = [json.loads(line) for line in (tmp_path / "out" / "journal.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["pass"] * 6
    talks = []
    for r in results:
        turns = r["record"]["turns"]
        talks.append((_at(turns[0]["started_at"]), _at(turns[-1]["ended_at"])))
    # Never more than two conversations at once.
    for start, _ in talks:
        assert sum(1 for s, e in talks if s <= start < e) <= 2
    # Cases 3..6 were admitted while two conversations ran: their threads and credential pins were
    # ready before a slot freed, so each waited at least most of a conversation (2 x 80 ms), and that
    # wait is not counted in the case's own seconds.
    waited = [
        (talk[0] - _at(r["started_at"]), _at(r["finished_at"]) - _at(r["started_at"]), r["seconds"])
        for r, talk in zip(results, talks, strict=True)
        if talk[0] - _at(r["started_at"]) > 0.1
    ]
    assert len(waited) >= 3, waited
    for wait, elapsed, seconds in waited:
        # Had the wait been counted, seconds would be ~elapsed; half the wait of slack keeps a loaded
        # machine's slower clean-up (a fixed 50 ms margin failed there) from reading as counted.
        assert seconds < elapsed - wait / 2


@pytest.mark.anyio
async def test_waiting_for_a_conversation_slot_does_not_count_against_the_case_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = DemoSettings()
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        loaded, lane, pool = await one_case_lane(tmp_path, url, client)
        created: list[str] = []
        create_thread = client.create_thread

        async def spy(thread_id: str, *args: Any, **kwargs: Any) -> Any:
            created.append(thread_id)
            return await create_thread(thread_id, *args, **kwargs)

        monkeypatch.setattr(client, "create_thread", spy)

        async def thread_is_set_up() -> None:
            # Set up and not finished: a finished case has deleted its thread.
            (thread_id,) = created
            assert (await client.thread_status(thread_id)).settled

        # Longer than the case's whole deadline: the case has set up its thread and waits for this slot.
        result = await _run_behind_a_busy_slot(loaded, lane, pool, _deadline_config(0.5), 0.8, thread_is_set_up)
    assert result.error is None, result.error
    assert result.status == "pass"
    assert result.seconds < 0.5


@pytest.mark.anyio
async def test_ctrl_c_while_a_finished_case_waits_to_clean_up_still_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the wait for the housekeeping gate before clean-up was not shielded, so a Ctrl-C
    there left run_case before the clean-up, and the thread stayed on the instance."""
    demo = DemoSettings()
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        loaded, lane, pool = await one_case_lane(tmp_path, url, client, housekeeping=1, patience=5.0)
        config = PipelineConfig(run_id=uuid.uuid4().hex[:12], models=ModelSettings(), budgets=Budgets())
        graded, gate_taken = anyio.Event(), anyio.Event()
        grade_case = grading.grade_case

        async def grade_then_wait(*args: Any, **kwargs: Any) -> Any:
            grading = await grade_case(*args, **kwargs)
            graded.set()
            await gate_taken.wait()  # another case's clean-up holds the only place now
            return grading

        monkeypatch.setattr(pipeline, "grade_case", grade_then_wait)
        created: list[str] = []
        create_thread = client.create_thread

        async def spy(thread_id: str, *args: Any, **kwargs: Any) -> Any:
            created.append(thread_id)
            return await create_thread(thread_id, *args, **kwargs)

        monkeypatch.setattr(client, "create_thread", spy)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run_case, WorkItem(loaded, 0), lane, config, pool)
                await graded.wait()
                async with pool.housekeeping(lane):
                    gate_taken.set()
                    await anyio.sleep(0.1)  # the finished case waits for the gate to clean up
                    tg.cancel_scope.cancel()  # Ctrl-C
        (thread_id,) = created
        with pytest.raises(InstanceError, match="404"):
            await client.thread_status(thread_id)


@pytest.mark.anyio
async def test_a_deadline_that_fires_as_set_up_ends_is_reported_even_when_the_case_must_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the deadline, pausing for the slot wait, absorbed a cancellation its own timer had
    already made: the case ended with no conversation, no verdict and no error."""

    async def answered_as_the_deadline_fires(*args: Any, **kwargs: Any) -> list[str]:
        loop = asyncio.get_running_loop()
        deadline = anyio.current_effective_deadline()
        answer: asyncio.Future[None] = loop.create_future()
        loop.call_at(deadline - 0.02, time.sleep, 0.04)  # one busy loop step spanning the deadline
        loop.call_at(deadline - 0.01, answer.set_result, None)  # the last set-up answer arrives in it
        await answer
        return []

    monkeypatch.setattr(pipeline, "prepare_scenario_tables", answered_as_the_deadline_fires)
    demo = DemoSettings()
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        loaded, lane, pool = await one_case_lane(tmp_path, url, client)
        result = await _run_behind_a_busy_slot(loaded, lane, pool, _deadline_config(0.5), 1.0)
    assert result.error is not None
    assert result.error.type == "CaseTimeout"
    assert result.status == "errored"
