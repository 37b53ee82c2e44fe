"""Ctrl-C and SIGTERM, counted: the first stops gently, the second stops now, the third exits at once.

- **First** interrupt: nothing new starts. Conversations already running finish, are graded and
  journaled; case-iterations still setting up or waiting for a conversation slot are stopped and
  cleaned up.
- **Second**: the running conversations are stopped too; every case-iteration still runs its cleanup,
  shielded and bounded in time (``RunSettings.cleanup_seconds``, 30 s).
- **Third**: the process exits at once (exit 130), after printing exactly what is still on the
  instance because of the run (ids per kind) and appending it to the journal, so ``threadcase
  cleanup --journal J`` can delete it later. Requests that create something and are in flight at that
  moment get up to :data:`SETTLE_SECONDS` to be answered first, so their new ids are in that list.

Every later signal counts the same way until the process ends; the exit code of an interrupted run is
130 whichever level it reached, and no signal ever ends in a traceback. One :class:`Interrupts` per
run: the CLI creates it around the whole command (reports included); :func:`run_suite` makes its own
when called without one. Signals are only received on the main thread (anyio's signal receiver); an
``Interrupts`` can also be driven by calling :meth:`Interrupts.interrupt` (tests, embedding code).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

__all__ = ["EXIT_INTERRUPTED", "Interrupts"]

EXIT_INTERRUPTED = 130
SETTLE_SECONDS = 1.0
"""Longest the third interrupt waits for creating requests in flight (see :meth:`Interrupts.on_settle`)."""

_HINTS = {
    1: "interrupt: finishing the running conversations and starting nothing new (interrupt again to stop them now)",
    2: "interrupt: stopping the running conversations; cleaning up (interrupt again to exit at once)",
}


class Interrupts:
    """How many times the run was asked to stop, and what happens at each level.

    ``say`` prints one line for a person (default: stderr). Listeners (:meth:`on_level`) are called
    synchronously on the event loop's thread with the new level; exit hooks (:meth:`on_exit`) run at
    the third interrupt, just before the process exits.
    """

    def __init__(self, *, say: Callable[[str], None] | None = None) -> None:
        self.level = 0
        self._say = say or _to_stderr
        self._listeners: list[Callable[[int], None]] = []
        self._exit_hooks: list[Callable[[], None]] = []
        self._settlers: list[Callable[[float], Awaitable[None]]] = []
        self.exit: Callable[[int], None] = _exit_now
        """How the third interrupt ends the process (``os._exit``; tests replace it)."""

    @property
    def interrupted(self) -> bool:
        return self.level > 0

    def on_level(self, listener: Callable[[int], None]) -> Callable[[], None]:
        """Call ``listener(level)`` on every interrupt; returns a function that removes it."""
        self._listeners.append(listener)
        if self.level:
            listener(self.level)  # a listener added after an interrupt must still see it
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on_exit(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook`` at the third interrupt, before exiting (report leftovers, flush the journal)."""
        self._exit_hooks.append(hook)
        return lambda: self._exit_hooks.remove(hook) if hook in self._exit_hooks else None

    def on_settle(self, settler: Callable[[float], Awaitable[None]]) -> Callable[[], None]:
        """Before a third signal's exit, await ``settler(seconds)`` (bounded): let in-flight creations land."""
        self._settlers.append(settler)
        return lambda: self._settlers.remove(settler) if settler in self._settlers else None

    async def signal_received(self) -> None:
        """What a SIGINT or SIGTERM does: :meth:`interrupt`, after a bounded settle before the third."""
        if self.level == 2 and self._settlers:
            with anyio.move_on_after(SETTLE_SECONDS):
                for settler in list(self._settlers):
                    await settler(SETTLE_SECONDS)
        self.interrupt()

    def say(self, line: str) -> None:
        """Print one line for the person at the terminal (never raises: a closed stderr is fine)."""
        with contextlib.suppress(Exception):
            self._say(line)

    def interrupt(self) -> None:
        """One more interrupt (what a SIGINT or SIGTERM does)."""
        self.level += 1
        level = self.level
        if level in _HINTS:
            self.say(f"threadcase: {_HINTS[level]}")
        for listener in list(self._listeners):
            listener(level)
        if level >= 3:
            for hook in list(self._exit_hooks):
                # Each hook is on its own: one that fails must not keep the others (or the exit) from running.
                with contextlib.suppress(Exception):
                    hook()
            self.exit(EXIT_INTERRUPTED)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[Interrupts]:
        """Receive SIGINT and SIGTERM for the block (main thread only; elsewhere a no-op), counting each.

        The receiver stays open for the whole block, so a second signal is counted like the first
        instead of meeting the default handler (a traceback, or death by SIGTERM). When the block ends,
        the handlers from before it are put back (anyio's receiver leaves the defaults behind).
        """
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
        raised: BaseException | None = None
        try:
            async with anyio.create_task_group() as watchers:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

                    async def watch() -> None:
                        async for _ in signals:
                            await self.signal_received()

                    watchers.start_soon(watch)
                    try:
                        yield self
                    except BaseException as exc:
                        # Held until the watcher's group is closed, then raised as it is: through the group
                        # it would come out wrapped in an exception group.
                        raised = exc
                    finally:
                        watchers.cancel_scope.cancel()
        finally:
            for signum, handler in before.items():
                if handler is not None:
                    signal.signal(signum, handler)
        if raised is not None:
            raise raised


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
