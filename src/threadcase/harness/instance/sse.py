"""The instance's event stream: SSE parsing and a resuming subscription.

``GET /rest/instance-ai/events/:threadId`` streams Server-Sent Events; each ``data:`` is a JSON object
with ``type`` and ``payload`` and each event carries an ``id:`` (a per-thread increasing number).
Without ``Last-Event-ID`` the server sends only events after the connection, so a caller opens the
subscription **before** sending a chat message; after a dropped connection the subscription
reconnects with ``Last-Event-ID`` and the server replays what was missed. Ids already delivered are
dropped, so the caller sees every event exactly once.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import ValidationError

from threadcase import wire
from threadcase.harness.errors import InstanceError

if TYPE_CHECKING:
    from threadcase.harness.instance.client import InstanceClient

__all__ = ["EventSubscription", "SSEParser", "ServerSentEvent"]

_log = logging.getLogger("threadcase.instance.sse")


@dataclass
class ServerSentEvent:
    """One dispatched SSE message (before JSON decoding)."""

    data: str
    event: str | None = None
    id: str | None = None


@dataclass
class SSEParser:
    """Incremental parser for the ``text/event-stream`` format, one line at a time.

    Follows the WHATWG rules that matter here: ``:`` lines are comments (heartbeats), a blank line
    dispatches the pending event, multiple ``data:`` lines join with newlines, and one optional
    space after the colon is dropped. One deliberate difference: an event's id is only the id given
    in that event (the spec carries the last one forward), so an id-less event can never be mistaken
    for a duplicate of its predecessor.
    """

    _data: list[str] = field(default_factory=list)
    _event: str | None = None
    _id: str | None = None

    def feed_line(self, line: str) -> ServerSentEvent | None:
        """Consume one line (without its terminator); return an event when a blank line ends one."""
        if line == "":
            event = ServerSentEvent(data="\n".join(self._data), event=self._event, id=self._id) if self._data else None
            self._data, self._event, self._id = [], None, None
            return event
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value or None
        elif name == "id" and "\0" not in value:
            self._id = value or None
        # ``retry:`` and unknown fields are ignored; our reconnect backoff is our own.
        return None


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


async def _lines(response: httpx.Response) -> AsyncIterator[str]:
    """The stream's lines (any of the three SSE line ends), straight from its bytes.

    httpx's ``aiter_lines`` goes through two more generator layers (incremental text decoding, then
    line splitting) for every chunk; the format is UTF-8 by definition, so lines are split as bytes.
    Chunks without a line end are only collected, so a long line costs its length, not its square.
    """
    parts: list[bytes] = []
    async for chunk in response.aiter_bytes():
        if b"\n" not in chunk and b"\r" not in chunk and not (parts and parts[-1].endswith(b"\r")):
            parts.append(chunk)
            continue
        pending = b"".join(parts) + chunk if parts else chunk
        # A CR at the very end may be the first half of a CRLF split across chunks: wait for the next.
        held = pending.endswith(b"\r")
        *complete, rest = _LINE_BREAK.split(pending[:-1] if held else pending)
        if held:
            rest += b"\r"
        parts = [rest] if rest else []
        for line in complete:
            yield line.decode("utf-8", errors="replace")
    if parts:
        yield b"".join(parts).rstrip(b"\r").decode("utf-8", errors="replace")


def decode_event(message: ServerSentEvent) -> wire.Event | None:
    """The typed event inside one SSE message; None for data that is not an event object."""
    try:
        body = json.loads(message.data)
    except ValueError:
        _log.warning("dropping non-JSON SSE data (id=%s)", message.id)
        return None
    if not isinstance(body, dict):
        return None
    if "type" not in body and message.event:
        body["type"] = message.event
    if message.id is not None:
        body["id"] = message.id
    try:
        return wire.Event.model_validate(body)
    except ValidationError:
        _log.warning("dropping malformed event (id=%s)", message.id)
        return None


class _Seen:
    """Which event ids were delivered: a high-water mark for numeric ids, a set otherwise."""

    def __init__(self) -> None:
        self.high: int | None = None
        self.others: set[str] = set()

    def fresh(self, event_id: str | None) -> bool:
        if event_id is None:
            return True
        try:
            number = int(event_id)
        except ValueError:
            if event_id in self.others:
                return False
            self.others.add(event_id)
            return True
        if self.high is not None and number <= self.high:
            return False
        self.high = number
        return True


class _Failed:
    """Sent down the queue when the stream cannot be recovered; raised from ``next_event``."""

    def __init__(self, error: InstanceError) -> None:
        self.error = error


class _Connected:
    """The reader's ``task_status`` when nobody awaits its start: it sets an event instead."""

    def __init__(self, event: anyio.Event) -> None:
        self._event = event

    def started(self, value: object = None) -> None:
        self._event.set()


class EventSubscription:
    """An open event stream on one thread; an async context manager.

    Entering returns once the server has accepted the connection (response headers received), so a
    chat sent afterwards cannot outrun the subscription; with ``connect_in_background`` entering returns
    at once and :meth:`ready` waits for that moment (other set-up can go on while the stream connects).
    A background task reads the stream into a memory queue; :meth:`next_event` takes from it. Dropped
    connections and streams the server ends are resumed with ``Last-Event-ID`` transparently; only
    repeated failure to reconnect (or an error status) surfaces, as :class:`InstanceError` from
    :meth:`next_event`.
    """

    def __init__(
        self,
        client: InstanceClient,
        thread_id: str,
        *,
        last_event_id: str | None = None,
        max_reconnects: int = 8,
        reconnect_wait: Callable[[int], float] | None = None,
        connect_in_background: bool = False,
    ) -> None:
        self._client = client
        self.thread_id = thread_id
        self.last_event_id: str | None = last_event_id
        """The id of the last event handed to the caller (what a reconnect resumes after)."""
        self.reconnects = 0
        """How many times the stream was re-opened (a statistic for tests and logs)."""
        self._seen = _Seen()
        if last_event_id is not None:
            self._seen.fresh(last_event_id)
        self._received_id: str | None = last_event_id
        self._max_reconnects = max_reconnects
        self._reconnect_wait = reconnect_wait or (lambda attempt: min(2.0, 0.05 * 2**attempt))
        self._task_group: TaskGroup | None = None
        self._send: MemoryObjectSendStream[wire.Event | _Failed] | None = None
        self._receive: MemoryObjectReceiveStream[wire.Event | _Failed] | None = None
        self._failure: InstanceError | None = None
        self._failures = 0
        self._background = connect_in_background
        self._connected = anyio.Event()
        self._connect_error: InstanceError | None = None

    @property
    def path(self) -> str:
        """The thread's event-stream path (``GET /rest/instance-ai/events/:threadId``)."""
        return f"/rest/instance-ai/events/{self.thread_id}"

    async def __aenter__(self) -> EventSubscription:
        send, receive = anyio.create_memory_object_stream[wire.Event | _Failed](math.inf)
        self._send, self._receive = send, receive
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        try:
            if self._background:
                self._task_group.start_soon(self._connect_then_read, send)
            else:
                await self._task_group.start(self._reader, send)
                self._connected.set()
        except BaseException:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)
            send.close()
            receive.close()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            # The caller's exception is not handed to the task group: it would come back wrapped in
            # an exception group, and ``except TimeoutError`` around this block would miss it.
            await self._task_group.__aexit__(None, None, None)
        finally:
            if self._send is not None:
                self._send.close()
            if self._receive is not None:
                self._receive.close()

    async def ready(self) -> None:
        """Return once the server has accepted the stream; raise :class:`InstanceError` if it never will.

        Bounded by what the connecting itself may take (three attempts, each a connect and a wait for
        the answer's head), so a caller can never wait here for longer than the stream could.
        """
        t = self._client.timeouts
        bound = 3 * (t.connect + t.stream_read) + 2 * self._reconnect_wait(2)
        with anyio.move_on_after(bound):
            await self._connected.wait()
        if self._connect_error is not None:
            raise self._connect_error
        if not self._connected.is_set():
            raise InstanceError(f"event stream did not connect within {bound:.0f} s", method="GET", path=self.path)

    def _closed(self) -> InstanceError:
        self._failure = InstanceError("event stream closed", method="GET", path=self.path)
        return self._failure

    async def _connect_then_read(self, send: MemoryObjectSendStream[wire.Event | _Failed]) -> None:
        try:
            await self._reader(send, task_status=_Connected(self._connected))
        except InstanceError as exc:
            # Not raised into the task group (it would cancel the caller's set-up): ``ready`` raises it.
            self._connect_error = exc
            self._connected.set()
            send.send_nowait(_Failed(exc))

    async def next_event(self, timeout: float) -> wire.Event | None:  # noqa: ASYNC109 - the agreed API; inactivity is an answer, not an error
        """The next event, or None when nothing arrived within ``timeout`` seconds (inactivity).

        Raises :class:`InstanceError` when the stream failed for good.
        """
        if self._receive is None:
            raise RuntimeError("EventSubscription used outside its 'async with' block")
        if self._failure is not None:
            raise self._failure
        item: wire.Event | _Failed | None = None
        try:
            # Events often arrive together (a reply's last delta and its run-finish): the ones already
            # queued are taken without a timeout scope and a trip through the event loop each.
            item = self._receive.receive_nowait()
        except anyio.WouldBlock:
            with anyio.move_on_after(timeout):
                try:
                    item = await self._receive.receive()
                except anyio.EndOfStream:
                    raise self._closed() from None
            if item is None:
                return None
        except anyio.EndOfStream:
            raise self._closed() from None
        if isinstance(item, _Failed):
            self._failure = item.error
            raise item.error
        if item.id is not None:
            self.last_event_id = item.id
        return item

    async def _reader(
        self, send: MemoryObjectSendStream[wire.Event | _Failed], *, task_status: TaskStatus[None]
    ) -> None:
        started = False
        relogged = False
        while True:
            lost: str
            try:
                async with self._client._open_stream(self.path, self._received_id) as response:
                    if response.status_code == 401 and not relogged:
                        # The session expired (an instance restart): log in again once and resume.
                        relogged = True
                        await self._client.login()
                        continue
                    if response.status_code >= 400:
                        body = await response.aread()
                        error = self._client._error("event stream refused", "GET", self.path, response, body)
                        if not (started and error.transient):
                            raise error
                        lost = str(error)
                    else:
                        if not started:
                            started = True
                            task_status.started()
                        await self._pump(response, send)
                        # The server ended the stream (a restart, a proxy timeout): resume where we were.
                        lost = "the server ended the stream"
            except httpx.TransportError as exc:
                lost = f"{type(exc).__name__}: {self._client.redactor.text(str(exc))}"
            except (InstanceError, httpx.HTTPError) as exc:
                error = exc if isinstance(exc, InstanceError) else InstanceError(str(exc), method="GET", path=self.path)
                if not started:
                    raise error from None
                send.send_nowait(_Failed(error))
                return
            self._failures += 1
            # Before the first connection, give up fast: the caller is waiting to send a chat.
            if self._failures > (self._max_reconnects if started else 2):
                error = InstanceError(
                    f"event stream lost {self._failures} times in a row (last: {lost})", method="GET", path=self.path
                )
                if not started:
                    raise error
                send.send_nowait(_Failed(error))
                return
            _log.debug("event stream on %s lost (%s); resuming after %s", self.thread_id, lost, self._received_id)
            self.reconnects += 1
            await anyio.sleep(self._reconnect_wait(self._failures))

    async def _pump(self, response: httpx.Response, send: MemoryObjectSendStream[wire.Event | _Failed]) -> None:
        parser = SSEParser()
        async for line in _lines(response):
            message = parser.feed_line(line)
            if message is None or not self._seen.fresh(message.id):
                continue
            if message.id is not None:
                self._received_id = message.id
            # Progress: the connection works, so the reconnect budget starts over.
            self._failures = 0
            event = decode_event(message)
            if event is not None:
                send.send_nowait(event)
