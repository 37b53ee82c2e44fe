"""Per-thread event logs and the Server-Sent Events stream that serves them, as n8n 2.41 does it.

Durable events get the next per-thread integer id (``1, 2, ...``), are persisted (with ``--db``) and
replayed; ephemeral ones (``text-delta``) are sent live without an ``id:`` and never replayed. As on
n8n, a response's deltas are also gathered into one durable ``text-block`` (keyed by run, agent and
``responseId``), written before the next durable event of that agent (or at the run's finish) and
never sent live, so live ids skip the block's number. The stream
(``GET /rest/instance-ai/events/:threadId``):

- without ``Last-Event-ID`` starts *after* the events that existed when the connection was accepted
  (live only), so a client subscribes before it sends a chat message (n8n replays the whole durable
  log there; for a fresh thread, the only kind a client subscribes to first, that is nothing);
- with ``Last-Event-ID: N`` first replays every durable event with id > N (``text-block`` instead of
  the deltas), then one ``text-delta`` with all the text so far of each response still open, then
  goes live;
- writes a heartbeat comment line (``: heartbeat``) after ``heartbeat`` seconds without events;
- never ends by itself: it ends when the client disconnects, when the server closes, or when the
  fault injector drops it (after an event, mid-run).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import time
from typing import Any

import anyio
from pydantic_core import PydanticSerializationError, to_json

from threadcase.demo_instance.faults import FaultInjector
from threadcase.demo_instance.storage import Store

__all__ = ["EPHEMERAL", "EventHub", "EventLog", "SSEResponse", "epoch_ms", "fast_json", "hex_id", "utc_now"]


_second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text


def utc_now() -> str:
    """An explicit UTC ISO timestamp with milliseconds, as n8n writes them (``2026-01-02T03:04:05.678Z``).

    The same text as ``datetime.now(UTC).isoformat(timespec="milliseconds")`` with a ``Z`` (both floor
    the system clock), at a fraction of its cost: a turn stamps ~10 times, and the date part changes
    once a second, so it is formatted once per second.
    """
    global _second
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    cached, text = _second
    if cached != seconds:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        _second = (seconds, text)
    return f"{text}.{nanos // 1_000_000:03d}Z"


def hex_id() -> str:
    """``uuid.uuid4().hex`` (the same 32 hex digits: version 4, RFC 4122 variant) without building a UUID."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()


EPHEMERAL = frozenset({"text-delta", "reasoning-delta", "status", "filesystem-request"})
"""Event types sent live only, without an id (n8n's ``INSTANCE_AI_EPHEMERAL_EVENT_TYPES``)."""

_Segment = tuple[str | None, str | None]


class EventLog:
    """One thread's events: the durable log (replay, persistence) and the live feed (streams)."""

    def __init__(self, thread_id: str, store: Store, *, persist: bool = True) -> None:
        self.thread_id = thread_id
        self._store = store
        self._persist = persist
        self.events: list[dict[str, Any]] = store.list("events", thread_id) if persist else []
        """The durable events, by id (what ``Last-Event-ID`` replays)."""
        self.events.sort(key=lambda event: int(event["id"]))
        self.feed: list[dict[str, Any]] = []
        """What live streams send, in order: durable events but text blocks, and the ephemeral ones."""
        self._open: dict[_Segment, tuple[str | None, list[str]]] = {}
        """Text of each (run, agent) response still open: its responseId and the deltas so far."""
        # Made when a stream starts waiting, not at every append: a reply's events are appended together
        # while nobody waits, and an event object per append was a measurable share of a turn's CPU.
        self._changed: anyio.Event | None = None
        self.closed = False

    def append(
        self,
        type: str,
        payload: dict[str, Any],
        *,
        run_id: str | None = None,
        agent_id: str | None = None,
        response_id: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Publish one event (persisting it unless ephemeral); ``extra`` = top-level keys beside n8n's
        (threadcase extensions)."""
        event: dict[str, Any] = {"type": type, "runId": run_id, "agentId": agent_id, "payload": payload}
        if response_id is not None:
            event["responseId"] = response_id
        if extra:
            event.update(extra)
        if type in EPHEMERAL:
            if type == "text-delta":
                self._gather((run_id, agent_id), response_id, str(payload.get("text", "")))
        else:
            for block in self._close((run_id, agent_id), whole_run=type == "run-finish"):
                self._keep(block)
            self._keep(event)
        self.feed.append(event)
        self.wake()
        return event

    def _keep(self, event: dict[str, Any]) -> None:
        event["id"] = str(len(self.events) + 1)
        if self._persist:
            self._store.insert("events", event["id"], event, scope=self.thread_id)
        self.events.append(event)

    def _gather(self, segment: _Segment, response_id: str | None, text: str) -> None:
        current = self._open.get(segment)
        if current is not None and current[0] != response_id:
            # A new response of the same agent: the previous one is done, as a block.
            for block in self._close(segment, whole_run=False):
                self._keep(block)
            current = None
        if current is None:
            self._open[segment] = (response_id, [text])
        else:
            current[1].append(text)

    def _close(self, segment: _Segment, *, whole_run: bool) -> list[dict[str, Any]]:
        """The open text of ``segment`` (every agent of its run, at run-finish) as durable text blocks."""
        keys = [k for k in self._open if k[0] == segment[0]] if whole_run else [segment]
        blocks = []
        for key in keys:
            found = self._open.pop(key, None)
            if found is None:
                continue
            response_id, parts = found
            block: dict[str, Any] = {"type": "text-block", "runId": key[0], "agentId": key[1]}
            if response_id is not None:
                block["responseId"] = response_id
            block["payload"] = {"text": "".join(parts)}
            blocks.append(block)
        return blocks

    def open_segments(self) -> list[dict[str, Any]]:
        """One ``text-delta`` per response still open, with all its text so far (what a reconnect gets)."""
        out = []
        for (run_id, agent_id), (response_id, parts) in self._open.items():
            event: dict[str, Any] = {"type": "text-delta", "runId": run_id, "agentId": agent_id}
            if response_id is not None:
                event["responseId"] = response_id
            event["payload"] = {"text": "".join(parts)}
            out.append(event)
        return out

    def wake(self) -> None:
        """Wake every stream waiting on this log (an event arrived or the log closed)."""
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def changed(self) -> None:
        """Wait for the next event (or close)."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()


class EventHub:
    """The event logs of every thread, created on first use."""

    def __init__(self, store: Store, *, persist: bool = True) -> None:
        """``persist=False`` keeps events in memory only: right for a temporary database, which does not
        outlive the process, so a stored copy would never be read (a log is loaded once and kept)."""
        self._store = store
        self._persist = persist
        self._logs: dict[str, EventLog] = {}
        self.closing = False

    def log(self, thread_id: str) -> EventLog:
        """The event log of ``thread_id`` (loaded from storage on first use)."""
        log = self._logs.get(thread_id)
        if log is None:
            log = self._logs[thread_id] = EventLog(thread_id, self._store, persist=self._persist)
        return log

    def forget(self, thread_id: str) -> None:
        """Close and drop the log of a deleted thread."""
        log = self._logs.pop(thread_id, None)
        if log is not None:
            log.closed = True
            log.wake()

    def close(self) -> None:
        """End every open stream (server shutdown)."""
        self.closing = True
        for log in self._logs.values():
            log.closed = True
            log.wake()


# Events whose every value the run manager builds from strings, ints, bools and None (no agent-made
# arguments or tool results): pydantic-core may encode them (see fast_json).
_PLAIN_EVENTS = frozenset({"run-start", "text-delta", "text-block", "run-finish", "error"})


def fast_json(value: Any, *, ascii_only: bool) -> bytes | None:
    """``value`` as ``json.dumps`` (compact separators) writes it, by pydantic-core's encoder (a run-finish
    frame: ~25k instructions against json's ~90k), or None where the two could differ: use ``json`` then.

    Call it only for values made of JSON's own types (``json`` refuses others, pydantic-core does not).
    For those the two write the same bytes except: floats below 1e-4 (``1e-05`` vs ``0.00001``; in
    pydantic-core's text a number after ``:``, ``,`` or ``[`` with ``e-`` or ``0.0000``), NaN/Infinity
    (``json`` raises where told to, so their text falls back too) and a lone surrogate (pydantic-core
    raises). ``ascii_only`` is ``json``'s default ``ensure_ascii``: every non-ASCII character and DEL
    written as ``\\uXXXX``.
    """
    try:
        data = to_json(value, inf_nan_mode="constants")
    except PydanticSerializationError:
        return None
    if (b"e-" in data or b"0.0000" in data) and _SMALL_FLOAT.search(data):  # the plain search is ~20x cheaper
        return None
    if b"NaN" in data or b"Infinity" in data:
        return None
    if ascii_only and (not data.isascii() or b"\x7f" in data):
        # Outside strings pydantic-core writes ASCII only, so escaping every other character (and DEL) of
        # the text as json's ensure_ascii does gives its bytes (a reply's em dash is common).
        data = data.decode().encode("ascii", _JSON_ESCAPE).replace(b"\x7f", b"\\u007f")
    return data


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler writing each run of non-ASCII characters as json's ``\\uXXXX`` escapes."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(_escape(char) for char in error.object[error.start : error.end]), error.end


_JSON_ESCAPE = "threadcase-json-escape"
codecs.register_error(_JSON_ESCAPE, _json_escapes)
# A number pydantic-core may write unlike json (any value starts after ":", "," or "["; a string that
# happens to look so only costs the fallback).
_SMALL_FLOAT = re.compile(rb"[:,\[]-?(?:[0-9.]+e-|0\.0000)")


def _escape(char: str) -> str:
    """One non-ASCII character as json's ensure_ascii writes it."""
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # beyond the BMP: a UTF-16 surrogate pair, as json writes it
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _frame(event: dict[str, Any]) -> bytes:
    data = fast_json(event, ascii_only=True) if event["type"] in _PLAIN_EVENTS else None
    if data is None:
        data = json.dumps(event, separators=(",", ":")).encode()
    if "id" not in event:
        return b"data: " + data + b"\n\n"  # ephemeral: no id, as n8n sends deltas
    return b"id: " + str(event["id"]).encode() + b"\ndata: " + data + b"\n\n"


def epoch_ms() -> int:
    """Now, in epoch milliseconds (how n8n writes run-debug ``startedAt`` and node ``startTime``)."""
    return time.time_ns() // 1_000_000


class SSEResponse:
    """An ASGI response streaming one thread's events; stops as soon as the client disconnects."""

    def __init__(
        self,
        hub: EventHub,
        log: EventLog,
        *,
        after: int | None,
        heartbeat: float,
        faults: FaultInjector | None = None,
        run_active: Any = None,
    ) -> None:
        self._hub = hub
        self._log = log
        # Fixed now, at accept time: "live only" means events after this connection was accepted. A
        # resume first replays the durable events after its id (a Last-Event-ID past the end, from before
        # a restart or made up, replays nothing), then the text of responses still open, then goes live.
        self._cursor = len(log.feed)
        self._replay: list[dict[str, Any]] = []
        if after is not None:
            self._replay = [*log.events[max(0, after) :], *log.open_segments()]
        self._heartbeat = heartbeat
        self._last_write = 0.0
        self._faults = faults
        self._run_active = run_active
        self._disconnected = False
        self._beat_due = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        # One helper task per stream: it watches for the client going away and, between messages, marks a
        # heartbeat due; the stream writes it. Two tasks (a watch and a heartbeat loop) cost a measurable
        # share of a stream's CPU.
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch, receive)
            try:
                await self._write(send, b": connected\n\n")
                await self._stream(send)
            except OSError:
                self._disconnected = True
            tg.cancel_scope.cancel()
        if not self._disconnected:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _watch(self, receive: Any) -> None:
        """Until the client goes away: wake the stream for a heartbeat after each idle interval."""
        try:
            while True:
                idle = time.monotonic() - self._last_write
                if idle >= self._heartbeat:
                    if not self._beat_due:  # not yet written (a slow client): one wake is enough
                        self._beat_due = True
                        self._log.wake()
                    wait = self._heartbeat
                else:
                    wait = self._heartbeat - idle
                with anyio.move_on_after(wait):
                    if (await receive())["type"] == "http.disconnect":
                        break
        except Exception:  # a failed receive ends the stream as a disconnect does
            pass
        self._disconnected = True
        self._log.wake()

    async def _stream(self, send: Any) -> None:
        log = self._log
        if self._replay:
            replay, self._replay = self._replay, []
            await self._write(send, b"".join(_frame(event) for event in replay))
        while not (log.closed or self._hub.closing or self._disconnected):
            pending = log.feed[self._cursor :]
            # Events appended together (a reply's last text-delta and its run-finish) leave in one write:
            # one send and one read instead of one per event, on both sides of the connection.
            frames: list[bytes] = []
            dropped = False
            for event in pending:
                frames.append(_frame(event))
                mid_run = event["type"] not in ("run-finish", "error") and (
                    self._run_active is None or self._run_active()
                )
                if mid_run and self._faults is not None and self._faults.drop():
                    dropped = True  # the connection drops right after this event, as before
                    break
            if frames:
                await self._write(send, b"".join(frames))
                self._cursor += len(frames)
            if dropped:
                return
            if pending:
                continue
            if self._beat_due:
                self._beat_due = False
                if time.monotonic() - self._last_write >= self._heartbeat:
                    await self._write(send, b": heartbeat\n\n")
                continue
            await log.changed()

    async def _write(self, send: Any, body: bytes) -> None:
        await send({"type": "http.response.body", "body": body, "more_body": True})
        self._last_write = time.monotonic()  # the loop's clock (anyio.current_time) costs a backend lookup
