"""Lanes: one instance (base URL) each; work is shared between them by whichever has room first.

A :class:`LanePool` admits a case-iteration when a lane has capacity (its build cap) and the run's
total concurrency allows it, and never runs the same case twice at once on one lane (two iterations
of one case would fight over the same names and ids). A waiting item holds no capacity, so a blocked
case never stalls others: that is the work-stealing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["Lane", "LanePool"]


@dataclass(eq=False)
class Lane:
    """One instance the run drives; ``state`` holds what the runner keeps per lane (client, project)."""

    base_url: str
    cap: int
    index: int = 0
    active: int = 0
    running: set[str] = field(default_factory=set)
    started: int = 0
    """Case-iterations this lane has taken (for reports and tests)."""
    state: dict[str, Any] = field(default_factory=dict)


class _Waiter:
    """A case-iteration waiting for a lane; the pool hands it one directly when one frees up."""

    __slots__ = ("event", "key", "lane")

    def __init__(self, key: str) -> None:
        self.key = key
        self.lane: Lane | None = None
        self.event = anyio.Event()


class LanePool:
    """Admission control over lanes: total concurrency, per-lane cap, one case key per lane at once.

    Waiters queue in arrival order and a released slot goes straight to the first one that may take it
    (its case is not running on that lane). Nothing else is woken: with fifty cases running and many
    queued, waking every waiter on each release to re-check was a thundering herd per finished case.
    All bookkeeping is synchronous, so it needs no lock on the event loop.
    """

    def __init__(self, lanes: Sequence[Lane], *, concurrency: int) -> None:
        if not lanes:
            raise ValueError("a lane pool needs at least one lane")
        self.lanes = list(lanes)
        for index, lane in enumerate(self.lanes):
            lane.index = index
        self.concurrency = max(1, concurrency)
        self.active = 0
        self.peak = 0
        self._waiting: deque[_Waiter] = deque()

    def _pick(self, key: str) -> Lane | None:
        if self.active >= self.concurrency:
            return None
        eligible = [lane for lane in self.lanes if lane.active < lane.cap and key not in lane.running]
        if not eligible:
            return None
        return min(eligible, key=lambda lane: (lane.active, lane.started, lane.index))

    def _admit(self, lane: Lane, key: str) -> None:
        lane.active += 1
        lane.started += 1
        lane.running.add(key)
        self.active += 1
        self.peak = max(self.peak, self.active)

    def _release(self, lane: Lane, key: str) -> None:
        lane.active -= 1
        lane.running.discard(key)
        self.active -= 1
        still_waiting: deque[_Waiter] = deque()
        while self._waiting:
            waiter = self._waiting.popleft()
            lane_for = self._pick(waiter.key)
            if lane_for is None:
                still_waiting.append(waiter)
                if self.active >= self.concurrency:
                    still_waiting.extend(self._waiting)
                    self._waiting.clear()
                continue
            self._admit(lane_for, waiter.key)
            waiter.lane = lane_for
            waiter.event.set()
        self._waiting = still_waiting

    @asynccontextmanager
    async def lease(self, key: str) -> AsyncIterator[Lane]:
        """Wait for a lane that may run ``key`` now; hold it for the block."""
        lane = self._pick(key)
        if lane is not None:
            self._admit(lane, key)
        else:
            waiter = _Waiter(key)
            self._waiting.append(waiter)
            try:
                await waiter.event.wait()
            except BaseException:
                if waiter.lane is not None:
                    # Handed a lane in the same instant it was cancelled: give the slot to the next one.
                    self._release(waiter.lane, key)
                else:
                    self._waiting.remove(waiter)
                raise
            assert waiter.lane is not None
            lane = waiter.lane
        try:
            yield lane
        finally:
            self._release(lane, key)
