"""The lane pool: concurrency cap, per-lane cap, one case key per lane, work shared across lanes."""

from __future__ import annotations

import anyio
import pytest

from threadcase._util.fanout import fan_out
from threadcase.harness.lanes import Lane, LanePool


@pytest.mark.anyio
async def test_caps_and_same_case_never_twice_on_one_lane() -> None:
    pool = LanePool([Lane("http://a", cap=3), Lane("http://b", cap=3)], concurrency=4)
    running: dict[tuple[str, str], int] = {}
    per_lane: dict[str, int] = {"http://a": 0, "http://b": 0}
    peak_lane = {"http://a": 0, "http://b": 0}
    keys = [f"case-{i % 3}" for i in range(18)]

    async def work(key: str) -> str:
        async with pool.lease(key) as lane:
            slot = (lane.base_url, key)
            running[slot] = running.get(slot, 0) + 1
            assert running[slot] == 1, "same case twice at once on one lane"
            per_lane[lane.base_url] += 1
            peak_lane[lane.base_url] = max(peak_lane[lane.base_url], per_lane[lane.base_url])
            await anyio.sleep(0.01)
            per_lane[lane.base_url] -= 1
            running[slot] -= 1
            return lane.base_url

    lanes = await fan_out(keys, work, limit=len(keys))
    assert pool.peak == 4
    assert max(peak_lane.values()) <= 3
    assert set(lanes) == {"http://a", "http://b"}
    assert pool.active == 0


@pytest.mark.anyio
async def test_a_blocked_case_does_not_hold_capacity() -> None:
    """Three iterations of one slow case plus a quick one: the quick one runs at once beside it."""
    pool = LanePool([Lane("http://a", cap=4)], concurrency=4)
    finished: list[str] = []

    async def work(key: str) -> None:
        async with pool.lease(key):
            await anyio.sleep(0.05 if key == "slow" else 0.0)
            finished.append(key)

    await fan_out(["slow", "slow", "slow", "quick"], work, limit=4)
    assert finished.index("quick") == 0


@pytest.mark.anyio
async def test_cancelled_lease_gives_its_slot_back() -> None:
    pool = LanePool([Lane("http://a", cap=1)], concurrency=1)
    with anyio.move_on_after(0.02):
        async with pool.lease("x"):
            await anyio.sleep(1)
    assert pool.active == 0
    with anyio.fail_after(1):
        async with pool.lease("x") as lane:
            assert lane.active == 1


@pytest.mark.anyio
async def test_waiters_get_freed_slots_in_arrival_order() -> None:
    pool = LanePool([Lane("http://a", cap=1)], concurrency=1)
    order: list[str] = []

    async def work(key: str) -> None:
        async with pool.lease(key):
            order.append(key)
            await anyio.sleep(0.005)

    async with anyio.create_task_group() as tg:
        for key in ("first", "second", "third", "fourth"):
            tg.start_soon(work, key)
            await anyio.sleep(0.001)  # arrive in this order
    assert order == ["first", "second", "third", "fourth"]
    assert pool.active == 0


@pytest.mark.anyio
async def test_a_slot_handed_to_a_waiter_cancelled_that_instant_goes_to_the_next() -> None:
    pool = LanePool([Lane("http://a", cap=1)], concurrency=1)
    ran: list[str] = []
    doomed = anyio.CancelScope()

    async def wait_in(scope: anyio.CancelScope, key: str) -> None:
        with scope:
            async with pool.lease(key):
                ran.append(key)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg, pool.lease("holder"):
            tg.start_soon(wait_in, doomed, "doomed")
            tg.start_soon(wait_in, anyio.CancelScope(), "next")
            await anyio.sleep(0.01)  # both are queued now
            # The release below hands the slot to "doomed", which is cancelled before it runs.
            doomed.cancel()
    assert ran == ["next"]
    assert pool.active == 0
