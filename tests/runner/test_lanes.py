"""The lane pool: admission, conversation slots (concurrency, per-lane cap), one case key per lane,
housekeeping, work shared across lanes."""

from __future__ import annotations

import anyio
import pytest

from tests.report.factory import result
from threadcase._util.fanout import fan_out
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.runner import execute
from threadcase.verdicts import CaseResult


@pytest.mark.anyio
async def test_caps_and_same_case_never_twice_on_one_lane() -> None:
    pool = LanePool([Lane("http://a", cap=3), Lane("http://b", cap=3)], concurrency=4)
    running: dict[tuple[str, str], int] = {}
    conversing = {"http://a": 0, "http://b": 0}
    peak_conversing = {"http://a": 0, "http://b": 0}
    keys = [f"case-{i % 6}" for i in range(36)]

    async def work(key: str) -> str:
        async with pool.lease(key) as lane:
            slot = (lane.base_url, key)
            running[slot] = running.get(slot, 0) + 1
            assert running[slot] == 1, "same case twice at once on one lane"
            await anyio.sleep(0.002)  # set-up
            async with pool.conversation(lane, key):
                conversing[lane.base_url] += 1
                peak_conversing[lane.base_url] = max(peak_conversing[lane.base_url], conversing[lane.base_url])
                assert sum(conversing.values()) <= 4
                await anyio.sleep(0.01)
                conversing[lane.base_url] -= 1
            await anyio.sleep(0.002)  # clean-up
            running[slot] -= 1
            return lane.base_url

    lanes = await fan_out(keys, work, limit=len(keys))
    assert pool.peak == 4
    assert max(peak_conversing.values()) <= 3
    # Admission lets in a conversation's worth more, to set up ahead: twice the concurrency at most.
    assert 4 < pool.peak_admitted <= 8
    assert set(lanes) == {"http://a", "http://b"}
    assert pool.active == 0
    assert pool.conversing == 0


@pytest.mark.anyio
async def test_a_blocked_case_does_not_hold_capacity() -> None:
    """Three iterations of one slow case plus a quick one: the quick one runs at once beside it."""
    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)
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


@pytest.mark.anyio
async def test_a_case_set_up_ahead_takes_a_freed_conversation_slot_at_once() -> None:
    """Concurrency 1: the second case sets up while the first converses, then converses the moment
    the first hands its slot on, before the first has finished cleaning up."""
    pool = LanePool([Lane("http://a", cap=1)], concurrency=1)
    log: list[str] = []

    async def work(key: str) -> None:
        async with pool.lease(key) as lane:
            log.append(f"{key} set up")
            async with pool.conversation(lane, key):
                log.append(f"{key} converses")
                await anyio.sleep(0.02)
            log.append(f"{key} cleans up")
            await anyio.sleep(0.02)
            log.append(f"{key} done")

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(work, "first")
            await anyio.sleep(0.001)
            tg.start_soon(work, "second")
    assert log == [
        "first set up",
        "first converses",
        "second set up",
        "first cleans up",
        "second converses",
        "first done",
        "second cleans up",
        "second done",
    ]
    assert pool.peak == 1
    assert pool.peak_admitted == 2


@pytest.mark.anyio
async def test_conversation_slots_respect_each_lane_cap_and_go_to_waiters_in_arrival_order() -> None:
    pool = LanePool([Lane("http://a", cap=1), Lane("http://b", cap=2)], concurrency=3)
    a, b = pool.lanes
    order: list[str] = []

    async def converse(lane: Lane, key: str) -> None:
        async with pool.conversation(lane, key):
            order.append(key)
            await anyio.sleep(0.02)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            for lane, key in ((a, "a1"), (a, "a2"), (b, "b1"), (b, "b2"), (a, "a3")):
                tg.start_soon(converse, lane, key)
                await anyio.sleep(0.001)
    # Lane a holds one conversation: a2 waits for a1 although the run has room, and does not hold
    # up b1 and b2 behind it; a3 comes after a2.
    assert order == ["a1", "b1", "b2", "a2", "a3"]
    assert pool.peak == 3
    assert pool.conversing == 0


@pytest.mark.anyio
async def test_a_cancelled_conversation_waiter_gives_its_slot_back() -> None:
    pool = LanePool([Lane("http://a", cap=1)], concurrency=1)
    (lane,) = pool.lanes
    doomed = anyio.CancelScope()
    ran: list[str] = []

    async def wait_in(scope: anyio.CancelScope, key: str) -> None:
        with scope:
            async with pool.conversation(lane, key):
                ran.append(key)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg, pool.conversation(lane, "holder"):
            tg.start_soon(wait_in, doomed, "doomed")
            tg.start_soon(wait_in, anyio.CancelScope(), "next")
            await anyio.sleep(0.01)
            doomed.cancel()  # handed the slot on release, cancelled before it runs
    assert ran == ["next"]
    assert pool.conversing == 0


@pytest.mark.anyio
async def test_housekeeping_lets_a_few_set_ups_through_at_once_per_lane() -> None:
    pool = LanePool([Lane("http://a", cap=48), Lane("http://b", cap=8)], concurrency=56)
    a, b = pool.lanes
    inside = {"http://a": 0, "http://b": 0}
    peak = {"http://a": 0, "http://b": 0}

    async def set_up(lane: Lane) -> None:
        async with pool.housekeeping(lane):
            inside[lane.base_url] += 1
            peak[lane.base_url] = max(peak[lane.base_url], inside[lane.base_url])
            await anyio.sleep(0.005)
            inside[lane.base_url] -= 1

    await fan_out([a] * 20 + [b] * 20, set_up, limit=40)
    # One per twelve conversation slots, at least two.
    assert peak == {"http://a": 4, "http://b": 2}


@pytest.mark.anyio
async def test_housekeeping_spreads_but_never_holds_anyone_up_beyond_its_patience() -> None:
    """Regression: with a hard gate, set-ups in a retry's back-off held every other set-up and clean-up
    of the lane, and a faulty run took three times as long."""
    pool = LanePool([Lane("http://a", cap=4)], concurrency=4, housekeeping=1, patience=0.05)
    (lane,) = pool.lanes
    entered: list[float] = []

    async def slow_holder() -> None:
        async with pool.housekeeping(lane):
            await anyio.sleep(1.0)

    async def quick() -> None:
        async with pool.housekeeping(lane):
            entered.append(anyio.current_time())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_holder)
            await anyio.sleep(0.01)
            started = anyio.current_time()
            tg.start_soon(quick)
            await anyio.sleep(0.3)
            assert entered, "the quick one still waits behind the slow holder"
            assert entered[0] - started >= 0.04  # it did wait its patience for the place first
            tg.cancel_scope.cancel()
    assert pool.housekeeping_overtaken(lane) == 1


@pytest.mark.anyio
async def test_cases_are_admitted_ahead_only_once_every_slot_has_its_first_conversation() -> None:
    """Admitted from the start, the cases set up ahead competed with the first wave's set-up, and
    every slot's first conversation started later."""
    pool = LanePool([Lane("http://a", cap=2)], concurrency=2)
    (lane,) = pool.lanes
    admitted: list[str] = []

    async def case(key: str) -> None:
        async with pool.lease(key):
            admitted.append(key)
            await anyio.sleep(0.05)  # set-up
            async with pool.conversation(lane, key):
                await anyio.sleep(0.05)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            for key in ("a", "b", "c", "d", "e"):
                tg.start_soon(case, key)
            await anyio.sleep(0.03)
            assert admitted == ["a", "b"]  # the first wave sets up alone
            await anyio.sleep(0.04)
            # Both slots talk now: two more are admitted to set up ahead of them, and no more.
            assert admitted == ["a", "b", "c", "d"]
    assert pool.peak_admitted == 4


@pytest.mark.anyio
async def test_the_first_conversation_to_end_also_ends_the_first_wave() -> None:
    """Regression: the places ahead opened only when every slot was taken at one instant; with a quick
    first case and slow set-ups someone was always setting up or cleaning up, and they never opened."""
    pool = LanePool([Lane("http://a", cap=3)], concurrency=3)
    (lane,) = pool.lanes
    setup = {"quick": 0.0, "slow-1": 0.1, "slow-2": 0.1}

    async def case(key: str) -> None:
        async with pool.lease(key):
            await anyio.sleep(setup.get(key, 0.0))
            async with pool.conversation(lane, key):
                await anyio.sleep(0.01 if key == "quick" else 0.05)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            for key in ("quick", "slow-1", "slow-2", "next-1", "next-2", "next-3"):
                tg.start_soon(case, key)
            await anyio.sleep(0.05)  # "quick" has finished; the slow ones still set up
            assert not pool.first_wave
            assert pool.active >= 4  # the next ones were let in to set up ahead
    assert pool.peak_admitted > 3


@pytest.mark.anyio
async def test_unequal_lane_caps_fill_every_slot() -> None:
    """Regression: during the first wave, admissions went to the lane with fewest cases, so a small
    lane took twice its cap and the big lane's slots never all filled."""
    pool = LanePool([Lane("http://small", cap=1), Lane("http://big", cap=3)], concurrency=4)

    async def worker(item: str, lane: Lane) -> CaseResult:
        async with pool.conversation(lane, item):
            await anyio.sleep(0.02)
        return result(item, with_record=False)

    with anyio.fail_after(5):
        await execute([f"case-{i}" for i in range(16)], pool, worker, key=lambda k: k, handle_signals=False)
    assert pool.peak == 4
