"""The event stream as an ASGI app, driven directly: what ends it, what it leaves behind, when it beats.

The stream runs one helper task (the disconnect watch) and one loop timer (heartbeats) instead of two
anyio tasks; these tests pin what that must not change: a client disconnect ends the stream and frees
its task, an idle stream still gets heartbeats, a busy one does not, and ``Last-Event-ID`` replays.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from threadcase.demo_instance.events import EventHub, SSEResponse
from threadcase.demo_instance.storage import Store

pytestmark = pytest.mark.anyio


class Client:
    """The ASGI side of one connection: records what the stream sent, disconnects on demand."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.wrote = anyio.Event()
        self._gone = anyio.Event()
        self._asked = 0

    async def receive(self) -> dict[str, Any]:
        self._asked += 1
        if self._asked == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.wrote.set()
        self.wrote = anyio.Event()

    def disconnect(self) -> None:
        self._gone.set()

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.messages if m["type"] == "http.response.body")

    @property
    def ended(self) -> bool:
        """Whether the stream closed its response (a final body without ``more_body``)."""
        last = self.messages[-1]
        return last["type"] == "http.response.body" and not last.get("more_body", False)

    async def until(self, data: bytes) -> None:
        with anyio.fail_after(5):
            while data not in self.body:
                await self.wrote.wait()


def _hub() -> tuple[Store, EventHub]:
    store = Store(None)
    return store, EventHub(store, persist=False)


async def test_a_disconnect_ends_an_idle_stream_and_frees_its_task() -> None:
    """Regression guard: the watch is the stream's only helper; nothing of it may outlive the stream."""
    store, hub = _hub()
    log = hub.log("t")
    before = asyncio.all_tasks()
    client = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=None, heartbeat=30.0), {}, client.receive, client.send)
            await client.until(b": connected")
            log.append("run-start", {"n": 1})
            await client.until(b'"id":"1"')
            client.disconnect()  # the stream returns by itself: the task group exits uncancelled (in time)
    await anyio.lowlevel.checkpoint()  # the cancelled watch, if any were left, would finish on this tick
    assert asyncio.all_tasks() == before
    assert not client.ended  # nobody to send the end of the response to
    store.close()


async def test_the_stream_ends_its_response_when_the_server_closes() -> None:
    store, hub = _hub()
    log = hub.log("t")
    before = asyncio.all_tasks()
    client = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=None, heartbeat=30.0), {}, client.receive, client.send)
            await client.until(b": connected")
            hub.close()
    await anyio.lowlevel.checkpoint()
    assert asyncio.all_tasks() == before
    assert client.ended
    store.close()


async def test_an_idle_stream_beats_and_a_busy_one_does_not() -> None:
    store, hub = _hub()
    log = hub.log("t")
    client = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=None, heartbeat=0.2), {}, client.receive, client.send)
            await client.until(b": connected")
            for n in range(6):  # events every 0.05 s keep the stream busy: no heartbeat in between
                log.append("text-delta", {"n": n})
                await anyio.sleep(0.05)
            await client.until(b'"id":"6"')
            assert b"heartbeat" not in client.body
            await client.until(b": heartbeat")  # then idle: a beat after one interval
            await anyio.sleep(0.3)
            beats = client.body.count(b": heartbeat")
            assert 2 <= beats <= 3  # one per idle interval, not one per wake-up
            log.append("run-finish", {"status": "completed"})
            await client.until(b'"id":"7"')  # still live after beating
            client.disconnect()
    store.close()


async def test_last_event_id_replays_what_came_after_it_then_goes_live() -> None:
    store, hub = _hub()
    log = hub.log("t")
    for n in range(4):
        log.append("text-delta", {"n": n})
    client = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=2, heartbeat=30.0), {}, client.receive, client.send)
            await client.until(b'"id":"4"')
            log.append("run-finish", {"status": "completed"})
            await client.until(b'"id":"5"')
            client.disconnect()
    ids = [line for line in client.body.split(b"\n") if line.startswith(b"id: ")]
    assert ids == [b"id: 3", b"id: 4", b"id: 5"]
    store.close()
