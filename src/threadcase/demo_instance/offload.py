"""Run an agent turn's computing in a worker thread, so a long message never blocks the server's event loop.

The rule-based agent is a coroutine that awaits nothing but its :class:`AgentContext`; between two
context calls it only computes (parses the message and the history). :func:`run_turn_off_loop` steps
that coroutine in a worker thread, one stretch of computing at a time; each context call it makes is
handed back to the event loop, run there (events, storage and widgets stay on the loop's thread), and
its result (or exception) sent back in. Health checks, event streams and every other request are served
between two stretches — and within a long one, as the interpreter switches threads every few
milliseconds.

A thread hop per context call costs more than a short turn computes, so the platform uses this only for
turns with a lot of text (:data:`OFFLOAD_CHARS`); the parsers are linear, so a short turn is quick.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

import anyio.to_thread

from threadcase.demo_instance.agent.protocol import AgentContext, BuilderAgent, TurnInput

__all__ = ["OFFLOAD_CHARS", "heavy_turn", "run_turn_off_loop"]

OFFLOAD_CHARS = 4096
"""Text (message plus visible history) from which a turn computes in a worker thread: below it a whole turn
takes a few milliseconds of CPU, less than the hops would add."""


def heavy_turn(turn: TurnInput) -> bool:
    """Whether ``turn`` carries enough text to compute off the event loop."""
    size = len(turn.message)
    for message in turn.history:
        if size >= OFFLOAD_CHARS:
            break
        size += len(message.text)
    return size >= OFFLOAD_CHARS


class _Call:
    """One context call the agent awaits: yielded up to the driver on the event loop, which runs it."""

    __slots__ = ("args", "method")

    def __init__(self, method: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> None:
        self.method = method
        self.args = args

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self)


class _ThreadSideContext:
    """The :class:`AgentContext` the agent sees in the worker thread: every call goes back to the loop."""

    def __init__(self, ctx: AgentContext) -> None:
        self._ctx = ctx

    async def say(self, text: str) -> None:
        await _Call(self._ctx.say, (text,))

    async def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await _Call(self._ctx.call_tool, (name, args))
        return result

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = await _Call(self._ctx.ask, (request,))
        return answer

    async def spawn(self, role: str, target: dict[str, Any] | None = None) -> str:
        agent_id: str = await _Call(self._ctx.spawn, (role, target))
        return agent_id

    async def complete(self, agent_id: str) -> None:
        await _Call(self._ctx.complete, (agent_id,))


def _step(coro: Coroutine[Any, Any, Any], value: Any, error: BaseException | None) -> tuple[bool, Any]:
    """Run the agent up to its next context call (in the worker thread): (finished, the call)."""
    try:
        yielded = coro.throw(error) if error is not None else coro.send(value)
    except StopIteration:
        return True, None
    return False, yielded


async def run_turn_off_loop(agent: BuilderAgent, turn: TurnInput, ctx: AgentContext) -> None:
    """``await agent(turn, ctx)``, its computing in a worker thread; ``agent`` must await only ``ctx``.

    Cancelling the caller cancels the agent as the loop would: the current stretch ends, the coroutine is
    closed (its ``finally`` blocks run), and the cancellation propagates.
    """
    coro = agent(turn, _ThreadSideContext(ctx))
    if not inspect.iscoroutine(coro):
        await coro
        return
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            done, call = await anyio.to_thread.run_sync(_step, coro, value, error)
            if done:
                return
            if not isinstance(call, _Call):
                raise RuntimeError(f"the agent awaited {call!r}, not its context: it cannot run off the loop")
            try:
                value, error = await call.method(*call.args), None
            except Exception as exc:  # a ToolFailed, say: the agent handles it, as it would on the loop
                value, error = None, exc
    finally:
        coro.close()
