"""The instance's event stream: SSE parsing and a resuming subscription.

``GET /rest/instance-ai/events/:threadId`` streams Server-Sent Events; each ``data:`` is a JSON object
with ``type`` and ``payload`` and each event carries an ``id:`` (a per-thread increasing number).
Without ``Last-Event-ID`` the server sends only events after the connection, so a caller opens the
subscription **before** sending a chat message; after a dropped connection the subscription
reconnects with ``Last-Event-ID`` and the server replays what was missed. Ids already delivered are
dropped, so the caller sees every event exactly once.

A small task reads the body into a queue and the caller takes events from the queue: an httpx body
iterator interrupted by a deadline is gone for good (httpcore closes the connection), while an
interrupted wait on the queue loses nothing, so a caller's short wait never costs a reconnect.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

import anyio
import httpx
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream
from pydantic import ValidationError

from threadcase import wire
from threadcase.errors import InstanceError

if TYPE_CHECKING:
    from threadcase.instance.models import ClientTimeouts
    from threadcase.instance.redact import Redactor

__all__ = ["EventSubscription", "SSEParser", "ServerSentEvent", "StreamSession"]

_log = logging.getLogger("threadcase.instance.sse")


class StreamSession(Protocol):
    """What a subscription needs of its client (:class:`~threadcase.instance.client.InstanceClient`)."""

    timeouts: ClientTimeouts
    redactor: Redactor

    async def open_event_stream(self, path: str, last_event_id: str | None) -> httpx.Response:
        """The stream's response once its head arrived, body unread; the caller closes it."""
        ...

    async def login(self) -> None:
        """Log in again (the session expired)."""
        ...

    def refusal(self, message: str, method: str, path: str, response: httpx.Response, body: bytes) -> InstanceError:
        """The error for an answer with an error status (body excerpt redacted)."""
        ...


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


class LineSplitter:
    """The stream's lines (any of the three SSE line ends), from its bytes as they come.

    The format is UTF-8 by definition, so lines are split as bytes and decoded one by one. Chunks
    without a line end are only collected, so a long line costs its length, not its square.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> list[str]:
        """The lines ``chunk`` completes (without their ends)."""
        parts = self._parts
        if b"\n" not in chunk and b"\r" not in chunk and not (parts and parts[-1].endswith(b"\r")):
            parts.append(chunk)
            return []
        pending = b"".join(parts) + chunk if parts else chunk
        # A CR at the very end may be the first half of a CRLF split across chunks: wait for the next.
        held = pending.endswith(b"\r")
        *complete, rest = _LINE_BREAK.split(pending[:-1] if held else pending)
        if held:
            rest += b"\r"
        self._parts = [rest] if rest else []
        return [line.decode("utf-8", errors="replace") for line in complete]

    def end(self) -> list[str]:
        """The unterminated last line, once the stream ended."""
        parts, self._parts = self._parts, []
        return [b"".join(parts).rstrip(b"\r").decode("utf-8", errors="replace")] if parts else []


def decode_event(message: ServerSentEvent) -> wire.Event | None:
    """The typed event inside one SSE message; None for data that is not an event object."""
    try:
        # The usual event is complete as sent (its type, and the id the SSE line repeats): one pass of
        # pydantic-core over the text, instead of a JSON decode and a validation of the result.
        event = wire.Event.model_validate_json(message.data)
    except ValidationError:
        return _decode_slowly(message)
    if message.id is not None and event.id != message.id:
        event.id = message.id
    return event


def _decode_slowly(message: ServerSentEvent) -> wire.Event | None:
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


class _BodyReader:
    """A response body, read by a task into a queue: an httpx body iterator interrupted by a timeout is
    gone, so only the queue's receive is ever interrupted.

    ``heard`` is when the connection last delivered a byte (or opened), stamped by the reading task as
    the bytes arrive — not when the caller takes them: a caller busy elsewhere (waiting for a
    conversation slot, for the user proxy's model, for a widget's answer) must not find a live
    connection silent, drop it with the events it already holds, and resume after what it read last.
    """

    def __init__(self, response: httpx.Response, task_group: TaskGroup) -> None:
        self._response = response
        self.heard = anyio.current_time()
        send, self._receive = anyio.create_memory_object_stream[bytes | BaseException](math.inf)
        self._scope = anyio.CancelScope()
        task_group.start_soon(self._pump, send)

    async def _pump(self, send: MemoryObjectSendStream[bytes | BaseException]) -> None:
        with self._scope, send:
            try:
                async for chunk in self._response.aiter_raw():
                    if chunk:
                        self.heard = anyio.current_time()
                        send.send_nowait(chunk)
                send.send_nowait(b"")
            except Exception as exc:
                send.send_nowait(exc)

    async def read(self, deadline: float) -> bytes | None:
        """The next bytes; ``b""`` once the server ended the stream; None when nothing came by ``deadline``
        (anyio time). Raises ``httpx.TransportError`` when the connection failed."""
        item: bytes | BaseException | None = None
        try:
            # What already arrived is taken even when ``deadline`` has passed.
            item = self._receive.receive_nowait()
        except anyio.WouldBlock:
            with anyio.move_on_at(deadline):
                try:
                    item = await self._receive.receive()
                except anyio.EndOfStream:
                    item = b""
        except anyio.EndOfStream:
            item = b""
        if isinstance(item, BaseException):
            raise item
        return item

    async def aclose(self) -> None:
        self._scope.cancel()
        self._receive.close()
        await self._response.aclose()


class EventSubscription:
    """An open event stream on one thread; an async context manager.

    Entering returns once the server has accepted the connection (response headers received), so a
    chat sent afterwards cannot outrun the subscription; with ``connect_in_background`` entering returns
    at once and :meth:`ready` waits for that moment (other set-up can go on while the stream connects).
    :meth:`next_event` reads the stream. Dropped connections and streams the server ends are resumed
    with ``Last-Event-ID`` transparently; only repeated failure to reconnect (or an error status)
    surfaces, as :class:`InstanceError` from :meth:`next_event`.
    """

    def __init__(
        self,
        client: StreamSession,
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
        self._source: _BodyReader | None = None
        self._splitter = LineSplitter()
        self._parser = SSEParser()
        self._pending: deque[wire.Event] = deque()
        """Parsed, not yet handed to the caller (a chunk often carries several events)."""
        self._failure: InstanceError | None = None
        self._failures = 0
        """Connections lost (or attempts failed) in a row: reset by every fresh event."""
        self._retry_at = -math.inf
        """When the next connection attempt may go, after a loss (the backoff)."""
        self._started = False
        self._relogged = False
        self._in_use = False
        self._background = connect_in_background
        self._pumped = False
        """A :class:`_BodyReader` was made (its pump is a task of the group)."""
        self._connected = anyio.Event()
        self._connect_error: InstanceError | None = None

    @property
    def path(self) -> str:
        """The thread's event-stream path (``GET /rest/instance-ai/events/:threadId``)."""
        return f"/rest/instance-ai/events/{self.thread_id}"

    async def __aenter__(self) -> EventSubscription:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        try:
            if self._background:
                self._task_group.start_soon(self._connect_in_background)
            else:
                await self._connect()
                self._connected.set()
        except BaseException:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task_group is not None
        if self._children_may_run():
            # Cancelling a scope formats the current task into its reason: only when there is a child.
            self._task_group.cancel_scope.cancel()
        try:
            # The caller's exception is not handed to the task group: it would come back wrapped in
            # an exception group, and ``except TimeoutError`` around this block would miss it.
            await self._task_group.__aexit__(None, None, None)
        finally:
            await self._drop_source()

    def _children_may_run(self) -> bool:
        """Whether a task of this subscription's group may still run: the background connect (it sets
        ``_connected`` last, with nothing after it to wait for) or a pump of some other transport's body."""
        return (self._background and not self._connected.is_set()) or self._pumped

    async def ready(self) -> None:
        """Return once the server has accepted the stream; raise :class:`InstanceError` if it never will.

        Bounded by what the connecting itself may take (three attempts, each a connect and a wait for
        the answer's head), so a caller can never wait here for longer than the stream could.
        """
        if not self._connected.is_set():
            # Only when there is something to wait for: Event.wait() yields to the loop even when the
            # event is set, and every conversation calls this right before its first message.
            t = self._client.timeouts
            bound = 3 * (t.connect + t.stream_read) + 2 * self._reconnect_wait(2)
            with anyio.move_on_after(bound):
                await self._connected.wait()
            if not self._connected.is_set():
                raise InstanceError(f"event stream did not connect within {bound:.0f} s", method="GET", path=self.path)
        if self._connect_error is not None:
            raise self._connect_error

    async def _connect_in_background(self) -> None:
        try:
            await self._connect()
        except InstanceError as exc:
            # Not raised into the task group (it would cancel the caller's set-up): ``ready`` raises it.
            self._connect_error = self._failure = exc
        finally:
            self._connected.set()

    async def next_event(self, timeout: float) -> wire.Event | None:  # noqa: ASYNC109 - the agreed API; inactivity is an answer, not an error
        """The next event, or None when nothing arrived within ``timeout`` seconds (inactivity).

        Raises :class:`InstanceError` when the stream failed for good.
        """
        if self._task_group is None:
            raise RuntimeError("EventSubscription used outside its 'async with' block")
        if self._failure is not None:
            raise self._failure
        if self._pending:
            return self._deliver(self._pending.popleft())
        if self._in_use:
            raise anyio.BusyResourceError("reading events from")
        self._in_use = True
        try:
            deadline = anyio.current_time() + timeout
            if not self._connected.is_set():
                # Still connecting in the background: its outcome comes first.
                with anyio.move_on_at(deadline):
                    await self._connected.wait()
                if self._failure is not None:
                    raise self._failure
                if not self._connected.is_set():
                    return None
            while not self._pending:
                if not await self._read(deadline):
                    return None
            return self._deliver(self._pending.popleft())
        except InstanceError as exc:
            self._failure = exc
            raise
        finally:
            self._in_use = False

    def _deliver(self, event: wire.Event) -> wire.Event:
        if event.id is not None:
            self.last_event_id = event.id
        return event

    async def _read(self, deadline: float) -> bool:
        """Read and parse what the stream has (reconnecting when it was lost); False at ``deadline``."""
        if self._source is None:
            with anyio.move_on_at(deadline):
                await self._connect()
            if self._source is None:
                return False
        stream_read = self._client.timeouts.stream_read
        source = self._source
        try:
            chunk = await source.read(min(deadline, source.heard + stream_read))
        except httpx.TransportError as exc:
            await self._lose(f"{type(exc).__name__}: {self._client.redactor.text(str(exc))}")
            return True
        except httpx.HTTPError as exc:
            await self._drop_source()
            raise InstanceError(str(exc), method="GET", path=self.path) from exc
        if chunk is None:
            if anyio.current_time() < source.heard + stream_read:
                return False  # the caller's deadline, not the stream's silence
            await self._lose(f"no byte for {stream_read:.0f} s")
            return True
        if not chunk:
            self._take(self._splitter.end())
            await self._lose("the server ended the stream")
            return True
        self._take(self._splitter.feed(chunk))
        return True

    def _take(self, lines: list[str]) -> None:
        for line in lines:
            message = self._parser.feed_line(line)
            if message is None or not self._seen.fresh(message.id):
                continue
            if message.id is not None:
                self._received_id = message.id
            # Progress: the connection works, so the reconnect budget starts over.
            self._failures = 0
            event = decode_event(message)
            if event is not None:
                self._pending.append(event)

    async def _lose(self, why: str) -> None:
        """The connection is gone: drop it and schedule the next attempt (raises past the budget)."""
        await self._drop_source()
        self._count_failure(why)

    async def _drop_source(self) -> None:
        source, self._source = self._source, None
        if source is not None:
            with anyio.CancelScope(shield=True):
                await source.aclose()

    def _count_failure(self, why: str) -> None:
        self._failures += 1
        # Before the first connection, give up fast: the caller is waiting to send a chat.
        if self._failures > (self._max_reconnects if self._started else 2):
            raise InstanceError(
                f"event stream lost {self._failures} times in a row (last: {why})", method="GET", path=self.path
            )
        _log.debug("event stream on %s lost (%s); resuming after %s", self.thread_id, why, self._received_id)
        self.reconnects += 1
        self._retry_at = anyio.current_time() + self._reconnect_wait(self._failures)

    async def _connect(self) -> None:
        """Open the stream (after ``_received_id``), trying again while failures are transient.

        Interrupted (a deadline, a cancellation), it counts nothing: the next call simply goes on.
        """
        while True:
            if self._retry_at > anyio.current_time():
                await anyio.sleep_until(self._retry_at)
            try:
                await self._open()
                self._started = True
                return
            except httpx.TransportError as exc:
                lost = f"{type(exc).__name__}: {self._client.redactor.text(str(exc))}"
            except InstanceError as exc:
                if not (self._started and exc.transient):
                    raise
                lost = str(exc)
            except httpx.HTTPError as exc:
                raise InstanceError(str(exc), method="GET", path=self.path) from exc
            self._count_failure(lost)

    async def _open(self) -> None:
        """One connection; raises ``InstanceError`` for a refusal, ``httpx.TransportError`` when unreachable."""
        while True:
            response = await self._client.open_event_stream(self.path, self._received_id)
            if response.status_code == 401 and not self._relogged:
                # The session expired (an instance restart): log in again once and resume.
                self._relogged = True
                await response.aclose()
                await self._client.login()
                continue
            if response.status_code >= 400:
                try:
                    body = await response.aread()
                finally:
                    await response.aclose()
                raise self._client.refusal("event stream refused", "GET", self.path, response, body)
            break
        assert self._task_group is not None
        self._source = _BodyReader(response, self._task_group)
        self._pumped = True
        self._splitter = LineSplitter()
        self._parser = SSEParser()
