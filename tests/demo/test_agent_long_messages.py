"""Long chat messages: the builder agent's parsers run in linear time, and a long turn computes off the
server's event loop, so health checks and other threads' event streams are answered meanwhile.

Regression: the e-mail pattern (and the clause splitters' ``\\s+and\\s+``) re-scanned the rest of a long
run at every position: a 64 KiB message blocked the whole demo server for seconds, 1 MiB for minutes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import httpx
import pytest

from tests.demo._agent_fake import Thread, approve, questions
from tests.demo.conftest import events, finished, new_thread, session
from threadcase.demo_instance.agent.protocol import READ_LIMIT_CHARS
from threadcase.demo_instance.server import demo_server
from threadcase.demo_instance.settings import DemoSettings

pytestmark = pytest.mark.anyio

# Shapes that each exercised a quadratic pattern (and a few that did not), in words a user might paste.
SHAPES: dict[str, Callable[[int], str]] = {
    "one long token": lambda n: "x" * n,
    "dotted identifiers": lambda n: "node.param." * (n // 11),
    "many at-signs": lambda n: "ops@" * (n // 4),
    "digits": lambda n: "send the report " + "7" * n,
    "a pasted url": lambda n: "call https://" + "q" * n,
    "padding spaces": lambda n: "post it to slack" + " " * n + "then stop",
    "tab padding": lambda n: "email me" + "\t" * n + "and notion",
    "addresses": lambda n: "mail it to " + "team@corp.io " * (n // 13),
    "unclosed quote": lambda n: 'name it "' + "w" * n,
    "skill list": lambda n: "build an agent with skills for " + "triage " * (n // 7),
}


def _answers(request: dict[str, object]) -> dict[str, object]:
    return approve() if request.get("inputType") == "approval" else questions()


async def _turn_seconds(text: str) -> float:
    thread = Thread()
    thread.answer(*[_answers] * 20)
    started = time.perf_counter()
    await thread.send(text)
    return time.perf_counter() - started


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_turn_grows_linearly_with_the_message(shape: str) -> None:
    small = min([await _turn_seconds(SHAPES[shape](6_000)) for _ in range(2)])
    large = min([await _turn_seconds(SHAPES[shape](48_000)) for _ in range(2)])
    # 8x the text: linear is ~8x; quadratic was 40-60x. The floor absorbs timer noise on tiny turns.
    assert large <= max(20 * small, 0.15), f"{shape}: {small * 1000:.1f} ms -> {large * 1000:.1f} ms"


async def _probe_health(url: str, done: Callable[[], Awaitable[bool]], seconds: float = 30) -> tuple[float, int]:
    """Ask for health every 10 ms until ``done()``: (the longest answer in seconds, how many probes)."""
    worst, probes = 0.0, 0
    async with httpx.AsyncClient(base_url=url, timeout=10) as probe:
        with anyio.fail_after(seconds):
            while not await done():
                started = time.perf_counter()
                assert (await probe.get("/healthz/readiness")).status_code == 200
                worst = max(worst, time.perf_counter() - started)
                probes += 1
                await anyio.sleep(0.01)
    return worst, probes


async def _thread_idle(client: httpx.AsyncClient, thread_id: str) -> bool:
    """No run and no memory task left on the thread (observation happens after the run)."""
    status = (await client.get(f"/rest/instance-ai/threads/{thread_id}/status")).json()["data"]
    return not status.get("hasActiveRun") and not status.get("memoryTasks")


async def test_a_long_turn_never_blocks_the_server() -> None:
    """Health and another thread's conversation keep going while a message just under the read limit is
    parsed and observed."""
    # Each agent step takes 200 ms, as a model would: the long turn then lasts long enough to be probed on
    # any machine (with none, a fast one finished it between two probes).
    async with demo_server(DemoSettings(latency_ms=200)) as url, session(url) as client:
        await new_thread(client, "long")
        await new_thread(client, "short")
        order: list[str] = []
        async with events(client, "long") as long_events, events(client, "short") as short_events:
            await client.post("/rest/instance-ai/chat/long", json={"message": "ops@" * (READ_LIMIT_CHARS // 4 - 1)})

            async def long_turn() -> None:
                await long_events.until(finished, within=60)
                order.append("long")

            async def short_turn() -> None:
                await anyio.sleep(0.05)  # once the long turn is under way
                await client.post("/rest/instance-ai/chat/short", json={"message": "thanks, that's all"})
                await short_events.until(finished, within=30)
                order.append("short")

            async def long_finished() -> bool:
                return "long" in order

            async with anyio.create_task_group() as tg:
                tg.start_soon(long_turn)
                tg.start_soon(short_turn)
                worst, probes = await _probe_health(url, long_finished, seconds=60)
            # Then the thread's memory observes the long message (after its run): the loop stays free too.
            after, _ = await _probe_health(url, lambda: _thread_idle(client, "long"))
            worst = max(worst, after)
        assert worst < 1.0, f"a health check waited {worst:.2f} s behind the long turn"
        assert order == ["short", "long"], "the short conversation waited for the long turn"
        assert probes >= 3, "the long turn was too quick to probe the server during it"


async def test_a_message_over_the_read_limit_is_refused_at_once_and_never_holds_the_server() -> None:
    """1 MiB: one reply naming the limit, nothing built or asked, health answered throughout (before the
    limit, one parse of it held every request 2-3 s even from a worker thread)."""
    async with demo_server(DemoSettings()) as url, session(url) as client:
        await new_thread(client, "huge")
        async with events(client, "huge") as reader:
            await client.post("/rest/instance-ai/chat/huge", json={"message": "ops@" * 262_144})
            worst, _ = await _probe_health(url, lambda: _thread_idle(client, "huge"))
            seen = await reader.until(finished)
        text = "".join(str(e["payload"].get("text", "")) for e in seen if e["type"] == "text-delta")
        assert f"{READ_LIMIT_CHARS:,}" in text
        assert "1,048,576" in text
        assert not [e for e in seen if e["type"] in ("tool-call", "confirmation-request")]
        assert worst < 0.5, f"a health check waited {worst:.2f} s behind a refused message"
