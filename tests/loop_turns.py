"""Counting the trips a test's task lets through the event loop (to check that something does not yield)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel


@asynccontextmanager
async def loop_turns() -> AsyncIterator[Callable[[], int]]:
    """Run a task that counts each turn it gets; yields a function returning the count so far."""
    turns = 0

    async def count() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(count)
        await anyio.lowlevel.checkpoint()  # let it start
        yield lambda: turns
        group.cancel_scope.cancel()
