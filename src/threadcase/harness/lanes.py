"""Lanes: one instance (base URL) each; work is shared between them by whichever has room first.

A :class:`LanePool` admits a case-iteration when a lane has capacity (its build cap) and the run's
total concurrency allows it, and never runs the same case twice at once on one lane (two iterations
of one case would fight over the same names and ids). A waiting item holds no capacity, so a blocked
case never stalls others: that is the work-stealing.
"""

from __future__ import annotations

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


class LanePool:
    """Admission control over lanes: total concurrency, per-lane cap, one case key per lane at once."""

    def __init__(self, lanes: Sequence[Lane], *, concurrency: int) -> None:
        if not lanes:
            raise ValueError("a lane pool needs at least one lane")
        self.lanes = list(lanes)
        for index, lane in enumerate(self.lanes):
            lane.index = index
        self.concurrency = max(1, concurrency)
        self.active = 0
        self.peak = 0
        self._cond = anyio.Condition()

    def _pick(self, key: str) -> Lane | None:
        if self.active >= self.concurrency:
            return None
        eligible = [lane for lane in self.lanes if lane.active < lane.cap and key not in lane.running]
        if not eligible:
            return None
        return min(eligible, key=lambda lane: (lane.active, lane.started, lane.index))

    @asynccontextmanager
    async def lease(self, key: str) -> AsyncIterator[Lane]:
        """Wait for a lane that may run ``key`` now; hold it for the block."""
        async with self._cond:
            while (lane := self._pick(key)) is None:
                await self._cond.wait()
            lane.active += 1
            lane.started += 1
            lane.running.add(key)
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            yield lane
        finally:
            # Shielded: a cancelled case must still give its slot back, or the pool would leak it.
            with anyio.CancelScope(shield=True):
                async with self._cond:
                    lane.active -= 1
                    lane.running.discard(key)
                    self.active -= 1
                    self._cond.notify_all()
