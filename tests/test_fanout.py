"""The one fan-out helper: order, bound, early start, failure, and a shared limiter left whole."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from threadcase._util.fanout import fan_out


@pytest.mark.anyio
async def test_results_keep_input_order_and_the_limit_holds() -> None:
    running = 0
    peak = 0
    seen: list[tuple[int, int]] = []

    async def work(item: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.001 * (item % 3))
        running -= 1
        return item * 10

    results = await fan_out(range(20), work, limit=4, on_result=lambda index, value: seen.append((index, value)))
    assert results == [i * 10 for i in range(20)]
    assert peak == 4
    assert sorted(seen) == [(i, i * 10) for i in range(20)]


@pytest.mark.anyio
async def test_the_first_worker_starts_before_every_item_has_a_task() -> None:
    """With a limit as large as the input, spawning every task before any ran delayed the first case
    of a run by the whole loop; tasks are now made as the limit admits them, each admission a yield."""
    tasks_when_first_started: list[int] = []

    async def work(item: int) -> None:
        if item == 0:
            tasks_when_first_started.append(len(anyio.get_running_tasks()))
        await anyio.lowlevel.checkpoint()

    await fan_out(range(500), work, limit=500)
    assert tasks_when_first_started[0] < 10


@pytest.mark.anyio
@pytest.mark.parametrize("failing", [0, 1])
async def test_a_failure_cancels_the_rest_and_a_shared_limiter_gets_every_place_back(failing: int) -> None:
    """Item 0 fails before its first await, while the loop admits the next: that task starts in a
    cancelled group and must still give its place back."""
    limiter = anyio.CapacityLimiter(3)
    started: list[int] = []

    async def work(item: int) -> None:
        started.append(item)
        if item == failing:
            raise ValueError("boom")
        await anyio.sleep(10)

    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as caught:
        await fan_out(range(10), work, limit=limiter)
    assert caught.group_contains(ValueError, match="boom")
    assert 9 not in started
    assert limiter.borrowed_tokens == 0


@pytest.mark.anyio
async def test_without_on_result_a_few_workers_take_the_items_in_order() -> None:
    """An own bound and no on_result: ``limit`` workers, each taking the next item, instead of a task
    per item; order, the bound and failure handling stay what they were."""
    running = 0
    peak = 0
    started: list[int] = []
    tasks: set[object] = set()

    async def work(item: int) -> int:
        nonlocal running, peak
        started.append(item)
        tasks.add(anyio.get_current_task().id)
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.001 * (item % 3))
        running -= 1
        return item * 10

    assert await fan_out(range(40), work, limit=4) == [i * 10 for i in range(40)]
    assert peak == 4
    assert started[:4] == [0, 1, 2, 3]
    assert sorted(started) == list(range(40))
    assert len(tasks) == 4

    async def failing(item: int) -> None:
        started.append(item)
        if item == 1:
            raise ValueError("boom")
        await anyio.sleep(10)

    started.clear()
    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as caught:
        await fan_out(range(10), failing, limit=3)
    assert caught.group_contains(ValueError, match="boom")
    assert 9 not in started
