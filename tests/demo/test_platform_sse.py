"""The event stream as an ASGI app, driven directly: what ends it, what it leaves behind, when it beats.

The stream runs one helper task (the disconnect watch) and one loop timer (heartbeats) instead of two
anyio tasks; these tests pin what that must not change: a client disconnect ends the stream and frees
its task, an idle stream still gets heartbeats, a busy one does not, and ``Last-Event-ID`` replays.
"""

from __future__ import annotations

import asyncio
import json
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
                log.append("tool-call", {"n": n})
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
        log.append("tool-call", {"n": n})
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


def _frames(body: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """(SSE id or None, event JSON) of every event frame in a stream's body."""
    out = []
    for frame in body.split(b"\n\n"):
        lines = frame.split(b"\n")
        data = [line[6:] for line in lines if line.startswith(b"data: ")]
        if not data:
            continue
        ids = [line[4:].decode() for line in lines if line.startswith(b"id: ")]
        out.append((ids[0] if ids else None, json.loads(b"\n".join(data))))
    return out


async def test_deltas_stream_live_without_ids_and_a_replay_sends_their_block() -> None:
    """n8n's durable log: a response's deltas go out live with no id, the response is kept as one
    ``text-block`` (never sent live, so live ids skip its number), and a replay sends the block."""
    store, hub = _hub()
    log = hub.log("t")
    live = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=None, heartbeat=30.0), {}, live.receive, live.send)
            await live.until(b": connected")
            log.append("run-start", {}, run_id="r1", agent_id="o1")
            log.append("text-delta", {"text": "Checking "}, run_id="r1", agent_id="o1", response_id="r1:step:1")
            log.append("text-delta", {"text": "the rota."}, run_id="r1", agent_id="o1", response_id="r1:step:1")
            log.append("tool-call", {"toolCallId": "c1"}, run_id="r1", agent_id="o1")
            log.append("text-delta", {"text": "Done"}, run_id="r1", agent_id="o1", response_id="r1:step:2")
            log.append("run-finish", {"status": "completed"}, run_id="r1", agent_id="o1")
            await live.until(b'"run-finish"')
            live.disconnect()
    seen = [(i, e["type"]) for i, e in _frames(live.body)]
    assert seen == [
        ("1", "run-start"),
        (None, "text-delta"),
        (None, "text-delta"),
        ("3", "tool-call"),
        (None, "text-delta"),
        ("5", "run-finish"),
    ]
    replay = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=1, heartbeat=30.0), {}, replay.receive, replay.send)
            await replay.until(b'"run-finish"')
            replay.disconnect()
    replayed = _frames(replay.body)
    assert [(i, e["type"]) for i, e in replayed] == [
        ("2", "text-block"),
        ("3", "tool-call"),
        ("4", "text-block"),
        ("5", "run-finish"),
    ]
    assert [e["payload"]["text"] for _, e in replayed if e["type"] == "text-block"] == ["Checking the rota.", "Done"]
    assert replayed[0][1]["responseId"] == "r1:step:1"
    store.close()


async def test_a_resume_mid_response_gets_the_open_text_so_far_as_one_delta() -> None:
    store, hub = _hub()
    log = hub.log("t")
    log.append("run-start", {}, run_id="r1", agent_id="o1")
    log.append("text-delta", {"text": "Half "}, run_id="r1", agent_id="o1", response_id="r1:step:1")
    log.append("text-delta", {"text": "way"}, run_id="r1", agent_id="o1", response_id="r1:step:1")
    client = Client()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(SSEResponse(hub, log, after=1, heartbeat=30.0), {}, client.receive, client.send)
            await client.until(b"Half way")
            log.append("text-delta", {"text": " there"}, run_id="r1", agent_id="o1", response_id="r1:step:1")
            await client.until(b" there")
            client.disconnect()
    frames = _frames(client.body)
    assert [(i, e["type"], e["payload"]["text"]) for i, e in frames] == [
        (None, "text-delta", "Half way"),
        (None, "text-delta", " there"),
    ]
    store.close()
