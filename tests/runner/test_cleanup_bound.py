"""Clean-up is shielded from cancellation and bounded in time, by one cancel scope."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.runner.one_case import one_case_lane
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.harness.conversation import Budgets
from threadcase.harness.pipeline import PipelineConfig, WorkItem, run_case
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.verdicts import CaseResult

GAVE_UP = "cleanup: gave up after 0 s; leftovers possible"


@pytest.mark.anyio
@pytest.mark.parametrize("cancelled", [False, True], ids=["finished", "cancelled meanwhile"])
async def test_a_cleanup_stuck_on_the_instance_gives_up_after_its_bound_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cancelled: bool
) -> None:
    """A thread delete that never answers ends the clean-up after ``cleanup_seconds``, with the warning;
    a Ctrl-C meanwhile neither cuts it short nor lets it run past its bound."""
    config = PipelineConfig(
        run_id=uuid.uuid4().hex[:12], models=ModelSettings(), budgets=Budgets(), cleanup_seconds=0.3
    )
    stuck = anyio.Event()

    async def never_answers(thread_id: str) -> None:
        stuck.set()
        await anyio.sleep(60)

    demo = DemoSettings()
    results: list[CaseResult] = []
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        loaded, lane, pool = await one_case_lane(tmp_path, url, client)
        monkeypatch.setattr(client, "delete_thread", never_answers)

        async def run() -> None:
            results.append(await run_case(WorkItem(loaded, 0), lane, config, pool))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await stuck.wait()
                if cancelled:
                    tg.cancel_scope.cancel()
    (result,) = results
    assert result.record is not None
    assert result.status == "pass"
    assert GAVE_UP in result.record.warnings


@pytest.mark.anyio
async def test_a_case_cancelled_mid_conversation_still_cleans_up_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the conversation: the clean-up runs outside the pipeline's own shield, so its
    scope alone must keep the cancellation out (the deletes are attempted) and still end it in time."""
    config = PipelineConfig(
        run_id=uuid.uuid4().hex[:12], models=ModelSettings(), budgets=Budgets(), cleanup_seconds=0.3
    )
    chatting, stuck = anyio.Event(), anyio.Event()

    async def never_answers(thread_id: str) -> None:
        stuck.set()
        await anyio.sleep(60)

    demo = DemoSettings(latency_ms=2000)
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        loaded, lane, pool = await one_case_lane(tmp_path, url, client)
        chat = client.chat

        async def spy(*args: Any, **kwargs: Any) -> Any:
            run_id = await chat(*args, **kwargs)
            chatting.set()
            return run_id

        monkeypatch.setattr(client, "chat", spy)
        monkeypatch.setattr(client, "delete_thread", never_answers)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run_case, WorkItem(loaded, 0), lane, config, pool)
                await chatting.wait()
                tg.cancel_scope.cancel()
    assert stuck.is_set(), "the clean-up was cancelled before it reached the thread"
