"""The one fan-out helper: every concurrent loop in threadcase goes through :func:`fan_out`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

import anyio
import anyio.lowlevel

__all__ = ["fan_out"]

T = TypeVar("T")
R = TypeVar("R")


async def fan_out(
    items: Iterable[T],
    worker: Callable[[T], Awaitable[R]],
    *,
    limit: int | anyio.CapacityLimiter,
    on_result: Callable[[int, R], Awaitable[None] | None] | None = None,
) -> list[R]:
    """Run ``worker`` over ``items`` with at most ``limit`` at once; results in input order.

    An exception in one worker cancels the others and propagates: workers that must not stop their
    siblings (a case run) catch their own failures and return them as results. ``on_result`` is
    called as each result arrives (in completion order), e.g. to append a journal line at once.

    With an ``int`` limit and no ``on_result``, ``limit`` workers each take the next item as they
    finish one (see :func:`_pool`); otherwise each item gets a task once the limiter admits it.
    """
    pending: Sequence[T] = list(items)
    if not pending:
        return []  # no limiter and no task group for nothing (an empty fan-out is common per case)
    results: list[R | None] = [None] * len(pending)
    if not isinstance(limit, anyio.CapacityLimiter) and on_result is None:
        await _pool(pending, worker, max(1, limit), results)
        return results  # type: ignore[return-value]  # every slot was filled, or we raised
    limiter = limit if isinstance(limit, anyio.CapacityLimiter) else anyio.CapacityLimiter(max(1, limit))

    async def _one(index: int, item: T, token: object) -> None:
        try:
            result = await worker(item)
        finally:
            # anyio runs a task's body even when its group was cancelled before it started, so this
            # always gives the place back (a caller's shared limiter is never left short).
            limiter.release_on_behalf_of(token)
        results[index] = result
        if on_result is not None:
            maybe = on_result(index, result)
            if maybe is not None:
                await maybe

    async with anyio.create_task_group() as tg:
        for index, item in enumerate(pending):
            # A task is made only once it may run, and each acquire lets the ones already made start:
            # spawning every item up front (200 tasks parked on the limiter) delayed the first worker
            # by the whole spawning loop, ~10 ms at the start of every run.
            token = object()
            await limiter.acquire_on_behalf_of(token)
            tg.start_soon(_one, index, item, token)
    return results  # type: ignore[return-value]  # every slot was filled, or we raised


async def _pool(pending: Sequence[T], worker: Callable[[T], Awaitable[R]], limit: int, results: list[R | None]) -> None:
    """At most ``limit`` workers, each taking the next item (in input order) as it finishes one.

    For a bound of our own and no ``on_result``: a task per item, plus the limiter's acquire and release
    around it, cost several times the work of a small item. A shared limiter must be asked per item and
    an ``on_result`` runs after the item's place is given back, so those keep a task per item.
    """
    queue = iter(enumerate(pending))

    async def _take() -> None:
        for index, item in queue:
            results[index] = await worker(item)

    async with anyio.create_task_group() as tg:
        for _ in range(min(limit, len(pending))):
            tg.start_soon(_take)
            # Let the workers made so far start while the rest are made (see the loop below).
            await anyio.lowlevel.checkpoint()
