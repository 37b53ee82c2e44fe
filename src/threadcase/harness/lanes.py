"""Lanes: one instance (base URL) each; work is shared between them by whichever has room first.

A case-iteration passes three gates of a :class:`LanePool`:

- **Admission** (:meth:`LanePool.lease`): the case gets a lane, and holds it from set-up to clean-up.
  The same case never runs twice at once on one lane (two iterations of one case would fight over
  the same names and ids). A waiting item holds no capacity, so a blocked case never stalls others:
  that is the work-stealing.
- **Housekeeping** (:meth:`LanePool.housekeeping`): set-up (thread, credentials, seed) and clean-up
  pass a small per-lane gate, so a burst of them arrives at the instance spread out instead of all
  at once on top of the running conversations. The gate spreads, it never blocks: whoever waited
  :data:`HOUSEKEEPING_PATIENCE` goes ahead anyway, so slow set-ups (a seed restore, a retry's
  back-off) never hold up the others.
- **Conversation** (:meth:`LanePool.conversation`): at most ``concurrency`` conversations run at once
  across lanes, and at most a lane's ``cap`` on that lane. This is the limit ``--concurrency`` sets.

After the first wave (every slot taken, or any conversation ended), admission lets in up to
``concurrency`` more case-iterations than there are slots, so while a conversation is in its last
turns the next case has already set up its thread and waits for the slot, and the finished one cleans
up after handing the slot on. Set-up and clean-up then cost a conversation slot nothing
(bench/concurrency.py measured a fifth less wall at concurrency 50 than with set-up and clean-up
inside the slot). During the first wave each lane admits only its slots' worth: the first cases set
up alone, and a small lane cannot take the cases a big lane's slots wait for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

__all__ = ["HOUSEKEEPING_PATIENCE", "HOUSEKEEPING_SHARE", "Lane", "LanePool"]

HOUSEKEEPING_SHARE = 12
"""One concurrent set-up or clean-up per this many conversation slots of a lane (at least two)."""
HOUSEKEEPING_PATIENCE = 0.25
"""Seconds a set-up or clean-up waits for the housekeeping gate before it goes ahead without it.

On a quick instance a burst of a hundred set-ups passes four at a time well within it; under
--demo-faults 0.2 a hard gate of two let set-ups in retry back-off hold every other one up, and a
golden run with three iterations took 15.9 s instead of 5.4 s."""


class _Housekeeping:
    """At most ``width`` holders at once; a waiter that waited ``patience`` seconds goes ahead anyway."""

    def __init__(self, width: int, patience: float) -> None:
        self.width = width
        self.patience = patience
        self._places = anyio.Semaphore(width)
        self.overtaken = 0
        """How often someone went ahead without a place (for tests and logs)."""

    def __call__(self) -> _HousekeepingPass:
        return _HousekeepingPass(self)


class _HousekeepingPass:
    """One passage through a :class:`_Housekeeping` gate (``async with``)."""

    __slots__ = ("_gate", "_held")

    def __init__(self, gate: _Housekeeping) -> None:
        self._gate = gate
        self._held = False

    async def __aenter__(self) -> None:
        gate = self._gate
        places = gate._places
        if places.value > 0:
            # A free place (so nobody queues: a release hands its place straight to a waiter) is taken
            # at once. Twice per case-iteration, a timed wait's cancel scope and the semaphore's extra
            # trip through the event loop were a measurable share of the harness's CPU.
            await anyio.lowlevel.checkpoint_if_cancelled()
            places.acquire_nowait()
            self._held = True
            return
        with anyio.move_on_after(gate.patience):
            await places.acquire()
            self._held = True
        if not self._held:
            gate.overtaken += 1

    async def __aexit__(self, *_exc: object) -> None:
        if self._held:
            self._held = False
            self._gate._places.release()


@dataclass(eq=False)
class Lane:
    """One instance the run drives; ``state`` holds what the runner keeps per lane (client, project)."""

    base_url: str
    cap: int
    """Conversations (builds) at once on this lane."""
    index: int = 0
    active: int = 0
    """Case-iterations admitted to this lane: setting up, waiting for a slot, conversing or cleaning up."""
    conversing: int = 0
    running: set[str] = field(default_factory=set)
    started: int = 0
    """Case-iterations this lane has taken (for reports and tests)."""
    state: dict[str, Any] = field(default_factory=dict)


class _Waiter:
    """Someone waiting at one of the pool's gates; the pool hands it a lane directly when one frees up."""

    __slots__ = ("event", "home", "key", "lane")

    def __init__(self, key: str, home: Lane | None = None) -> None:
        self.key = key
        self.home = home
        """The lane a conversation waiter was admitted to (None while waiting for admission)."""
        self.lane: Lane | None = None
        """The lane handed to this waiter."""
        self.event = anyio.Event()


class _Queue:
    """Waiters in arrival order; a release hands its capacity straight to the first that may take it.

    Nothing else is woken: with fifty cases running and many queued, waking every waiter on each
    release to re-check was a thundering herd per finished case. All bookkeeping is synchronous, so
    it needs no lock on the event loop.
    """

    def __init__(self, pick: Callable[[_Waiter], Lane | None], take: Callable[[Lane, str], None]) -> None:
        self._pick = pick
        self._take = take
        self._waiting: deque[_Waiter] = deque()

    def hand_out(self, full: Callable[[], bool]) -> None:
        still_waiting: deque[_Waiter] = deque()
        while self._waiting:
            waiter = self._waiting.popleft()
            lane = self._pick(waiter)
            if lane is None:
                still_waiting.append(waiter)
                if full():
                    still_waiting.extend(self._waiting)
                    self._waiting.clear()
                continue
            self._take(lane, waiter.key)
            waiter.lane = lane
            waiter.event.set()
        self._waiting = still_waiting

    async def wait(self, waiter: _Waiter, give_back: Callable[[Lane, str], None]) -> Lane:
        """Queue ``waiter`` until it is handed a lane; a cancelled waiter gives a lane it got back."""
        self._waiting.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.lane is not None:
                # Handed a lane in the same instant it was cancelled: give it to the next one.
                give_back(waiter.lane, waiter.key)
            else:
                self._waiting.remove(waiter)
            raise
        assert waiter.lane is not None
        return waiter.lane


class LanePool:
    """Admission, housekeeping and conversation gates over lanes (see the module's docstring)."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        *,
        concurrency: int,
        housekeeping: int | None = None,
        patience: float = HOUSEKEEPING_PATIENCE,
    ) -> None:
        if not lanes:
            raise ValueError("a lane pool needs at least one lane")
        self.lanes = list(lanes)
        self.concurrency = max(1, concurrency)
        self.first_wave = True
        """Until every slot has been taken or any conversation has ended: admission fills each lane's slots
        and no more, so the first wave sets up alone."""
        self._slots_to_fill = min(self.concurrency, sum(lane.cap for lane in self.lanes))
        self.active = 0
        self.conversing = 0
        self.peak = 0
        """Most conversations that ran at once (never above ``concurrency``)."""
        self.peak_admitted = 0
        self.on_conversation: Callable[[], None] | None = None
        """Called in the case's own task the moment it takes a conversation slot (the runner uses it to
        tell running conversations from cases still setting up when it is interrupted)."""
        self._housekeeping: dict[int, _Housekeeping] = {}
        for index, lane in enumerate(self.lanes):
            lane.index = index
            width = housekeeping or max(2, lane.cap // HOUSEKEEPING_SHARE)
            self._housekeeping[index] = _Housekeeping(width, patience)
        self._admission = _Queue(lambda waiter: self._pick(waiter.key), self._admit)
        self._conversations = _Queue(self._conversation_room, self._converse)

    @property
    def admitted_limit(self) -> int:
        """Case-iterations admitted at once: the conversation slots' worth during the first wave, twice
        that (one set up ahead of each slot) after it."""
        return self.concurrency if self.first_wave else 2 * self.concurrency

    # Admission

    def _admission_full(self) -> bool:
        return self.active >= self.admitted_limit

    def _pick(self, key: str) -> Lane | None:
        if self.active >= self.admitted_limit:
            return None
        per_lane = 1 if self.first_wave else 2
        eligible = [lane for lane in self.lanes if lane.active < per_lane * lane.cap and key not in lane.running]
        if not eligible:
            return None
        return min(eligible, key=lambda lane: (lane.active, lane.started, lane.index))

    def _admit(self, lane: Lane, key: str) -> None:
        lane.active += 1
        lane.started += 1
        lane.running.add(key)
        self.active += 1
        self.peak_admitted = max(self.peak_admitted, self.active)

    def _release(self, lane: Lane, key: str) -> None:
        lane.active -= 1
        lane.running.discard(key)
        self.active -= 1
        self._admission.hand_out(self._admission_full)

    def lease(self, key: str) -> AbstractAsyncContextManager[Lane]:
        """Wait for a lane that may take ``key`` now; hold it from set-up to clean-up (the block)."""
        return _Lease(self, key)

    async def _lease(self, key: str) -> Lane:
        lane = self._pick(key)
        if lane is not None:
            self._admit(lane, key)
            return lane
        return await self._admission.wait(_Waiter(key), self._release)

    # Housekeeping

    def housekeeping(self, lane: Lane) -> AbstractAsyncContextManager[None]:
        """The gate set-up and clean-up pass on ``lane`` (``async with pool.housekeeping(lane):``)."""
        return self._housekeeping[lane.index]()

    def housekeeping_overtaken(self, lane: Lane) -> int:
        """How often a set-up or clean-up on ``lane`` went ahead after waiting its patience out."""
        return self._housekeeping[lane.index].overtaken

    # Conversations

    def _has_room(self, lane: Lane) -> bool:
        return self.conversing < self.concurrency and lane.conversing < lane.cap

    def _conversation_room(self, waiter: _Waiter) -> Lane | None:
        lane = waiter.home
        assert lane is not None
        return lane if self._has_room(lane) else None

    def _converse(self, lane: Lane, _key: str) -> None:
        lane.conversing += 1
        self.conversing += 1
        self.peak = max(self.peak, self.conversing)
        if self.first_wave and self.conversing >= self._slots_to_fill:
            self._end_first_wave()

    def _end_first_wave(self) -> None:
        # Only now admit the cases that set up ahead: admitted from the start, their set-up competed with
        # the first wave's and every slot started later. The first conversation to end also ends the
        # wave, or uneven set-up and conversation times could keep it from ever filling every slot.
        self.first_wave = False
        self._admission.hand_out(self._admission_full)

    def _end_conversation(self, lane: Lane, _key: str) -> None:
        lane.conversing -= 1
        self.conversing -= 1
        self._conversations.hand_out(lambda: self.conversing >= self.concurrency)
        if self.first_wave:
            self._end_first_wave()

    def conversation(self, lane: Lane, key: str = "") -> AbstractAsyncContextManager[None]:
        """Wait for a conversation slot on ``lane`` (admitted by :meth:`lease`); hold it for the block."""
        return _ConversationSlot(self, lane, key)

    async def _take_slot(self, lane: Lane, key: str) -> None:
        if self._has_room(lane):
            self._converse(lane, key)
        else:
            await self._conversations.wait(_Waiter(key, lane), self._end_conversation)


# The pool's gates as plain async context managers: two per case-iteration, and a generator-based one
# (asynccontextmanager) costs several times as much to enter and leave.


class _Lease:
    __slots__ = ("_key", "_lane", "_pool")

    def __init__(self, pool: LanePool, key: str) -> None:
        self._pool = pool
        self._key = key
        self._lane: Lane | None = None

    async def __aenter__(self) -> Lane:
        self._lane = await self._pool._lease(self._key)
        return self._lane

    async def __aexit__(self, *_exc: object) -> None:
        assert self._lane is not None
        self._pool._release(self._lane, self._key)


class _ConversationSlot:
    __slots__ = ("_key", "_lane", "_pool")

    def __init__(self, pool: LanePool, lane: Lane, key: str) -> None:
        self._pool = pool
        self._lane = lane
        self._key = key

    async def __aenter__(self) -> None:
        await self._pool._take_slot(self._lane, self._key)
        if self._pool.on_conversation is not None:
            self._pool.on_conversation()

    async def __aexit__(self, *_exc: object) -> None:
        self._pool._end_conversation(self._lane, self._key)
