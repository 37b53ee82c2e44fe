"""The event stream: SSE parsing, resume with Last-Event-ID, exactly-once delivery, inactivity."""

from __future__ import annotations

import uuid

import anyio
import httpx
import pytest

from tests.instance.fake_instance import FakeInstance
from tests.loop_turns import loop_turns
from threadcase import wire
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.errors import InstanceError
from threadcase.instance import EventSubscription, InstanceClient
from threadcase.instance.models import ClientTimeouts
from threadcase.instance.sse import LineSplitter, SSEParser, decode_event

pytestmark = pytest.mark.anyio


def _feed(parser: SSEParser, text: str) -> list[tuple[str | None, str | None, str]]:
    out = []
    for line in text.split("\n"):
        message = parser.feed_line(line)
        if message is not None:
            out.append((message.id, message.event, message.data))
    return out


def test_parser_joins_data_lines_ignores_comments_and_does_not_carry_ids() -> None:
    parser = SSEParser()
    text = ': heartbeat\n\nid: 7\nevent: text-delta\ndata: {"a":\ndata:1}\n\ndata: {"type": "x"}\n\n'
    assert _feed(parser, text) == [("7", "text-delta", '{"a":\n1}'), (None, None, '{"type": "x"}')]


def test_decode_puts_the_sse_id_on_the_event_and_falls_back_to_the_event_name() -> None:
    parser = SSEParser()
    messages = [
        m for m in map(parser.feed_line, ["id: 3", "event: run-finish", 'data: {"payload": {"x": 1}}', ""]) if m
    ]
    event = decode_event(messages[0])
    assert event is not None
    assert (event.id, event.type, event.payload) == ("3", "run-finish", {"x": 1})
    assert decode_event(type(messages[0])(data="not json")) is None


async def _collect(sub: EventSubscription, count: int) -> list[wire.Event]:
    events: list[wire.Event] = []
    with anyio.fail_after(10):
        while len(events) < count:
            event = await sub.next_event(timeout=5)
            assert event is not None, f"stream went quiet after {[e.id for e in events]}"
            events.append(event)
    return events


async def test_live_events_after_subscribing_arrive_in_order(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    fake.emit("t1", "text-delta", {"text": "before the subscription"})
    async with client.subscribe("t1") as sub:
        await client.chat("t1", wire.ChatRequest(message="hi"))
        events = await _collect(sub, 3)
        assert [e.type for e in events] == ["run-start", "text-delta", "run-finish"]
        assert [e.id for e in events] == ["2", "3", "4"]
        assert sub.last_event_id == "4"
        assert await sub.next_event(timeout=0.2) is None, "inactivity must be reported as None"
    assert fake.last_event_ids == [None]


@pytest.mark.parametrize("how", ["end", "cut"])
async def test_a_dropped_stream_resumes_without_loss_or_duplicates(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient, how: str
) -> None:
    fake, _ = fake_instance
    fake.stream_plan = [(how, 2), (how, 3)]
    fake.replay_overlap = 2  # the server re-sends events the client already has
    async with client.subscribe("t1") as sub:
        for n in range(3):
            await client.chat("t1", wire.ChatRequest(message=f"m{n}"))
        events = await _collect(sub, 9)
        assert [e.id for e in events] == [str(i) for i in range(1, 10)]
        assert await sub.next_event(timeout=0.2) is None
        assert sub.reconnects == 2
    # The second connection re-sent 1 and 2 (dropped as duplicates) and delivered 3 before its cut.
    assert fake.last_event_ids[:3] == [None, "2", "3"]


async def test_resume_from_a_known_id(client: InstanceClient) -> None:
    await client.chat("t1", wire.ChatRequest(message="before"))
    async with client.subscribe("t1", last_event_id="1") as sub:
        events = await _collect(sub, 2)
    assert [e.id for e in events] == ["2", "3"]


async def test_a_refused_stream_fails_on_entry_with_a_plain_instance_error(client: InstanceClient) -> None:
    with pytest.raises(InstanceError) as caught:
        async with client.subscribe("missing"):
            pass
    assert caught.value.status == 404
    assert "not found" in caught.value.excerpt


async def test_a_stream_that_keeps_ending_surfaces_after_its_reconnect_budget(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    fake, _ = fake_instance
    fake.stream_plan = [("end", 0)] * 10
    subscription = EventSubscription(client, "t1", max_reconnects=3, reconnect_wait=lambda _attempt: 0.0)
    async with subscription as sub:
        with pytest.raises(InstanceError, match="lost 4 times in a row"):
            await sub.next_event(timeout=5)
        with pytest.raises(InstanceError):
            await sub.next_event(timeout=5)  # the failure sticks
    assert len(fake.last_event_ids) == 4


async def test_an_error_inside_the_block_comes_out_unwrapped(client: InstanceClient) -> None:
    """Regression: the reader's task group wrapped the caller's own exception in an exception group."""

    async def wait_too_long() -> None:
        async with client.subscribe("t1") as sub:
            with anyio.fail_after(0.05):
                await sub.next_event(timeout=5)

    with pytest.raises(TimeoutError):
        await wait_too_long()


async def test_a_stream_connecting_in_background_delivers_once_ready(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    async with client.subscribe("t1", connect_in_background=True) as sub:
        await sub.ready()
        await client.chat("t1", wire.ChatRequest(message="hi"))
        events = await _collect(sub, 3)
    assert [e.type for e in events][-1] == "run-finish"


async def test_ready_on_a_connected_stream_does_not_yield_to_the_loop(client: InstanceClient) -> None:
    """A conversation calls ready() right before its first message; when the stream is already there,
    a trip through a busy event loop would only delay that message."""
    async with client.subscribe("t1", connect_in_background=True) as sub:
        await sub.ready()  # connected now
        async with loop_turns() as turns:
            before = turns()
            await sub.ready()
            assert turns() == before


async def test_a_refused_background_stream_fails_ready_not_the_block(client: InstanceClient) -> None:
    reached = False
    async with client.subscribe("missing", connect_in_background=True) as sub:
        # Set-up that runs while the stream connects is not cancelled by the refusal.
        await anyio.sleep(0.05)
        reached = True
        with pytest.raises(InstanceError) as caught:
            await sub.ready()
        assert caught.value.status == 404
        with pytest.raises(InstanceError):
            await sub.next_event(timeout=5)
    assert reached


def _lines(chunks: list[bytes]) -> list[str]:
    splitter = LineSplitter()
    return [line for chunk in chunks for line in splitter.feed(chunk)] + splitter.end()


@pytest.mark.parametrize(
    "chunks",
    [
        [b"id: 1\ndata: {}\n\n"],
        [b"id: 1\r\ndata: {}\r\n\r\n"],
        [b"id: 1\rdata: {}\r\r"],
        [b"id: 1\r", b"\ndata: {}\r", b"\n\r", b"\n"],  # CRLF split across chunks is one line end
        [b"i", b"d: 1\nda", b"ta: {}\n", b"\n"],
    ],
)
def test_lines_split_on_every_sse_line_end_across_chunks(chunks: list[bytes]) -> None:
    assert _lines(chunks) == ["id: 1", "data: {}", ""]


def test_lines_decode_utf8_split_inside_a_character() -> None:
    text = "data: café ✓\n".encode()
    assert _lines([text[:10], text[10:]]) == ["data: café ✓"]


def test_lines_keep_a_long_line_whole_and_a_lone_cr_before_plain_text_is_a_line_end() -> None:
    long_line = b"data: " + b"x" * 300_000
    chunks = [long_line[i : i + 4096] for i in range(0, len(long_line), 4096)] + [b"\r", b"id: 2", b"\n\n"]
    assert _lines(chunks) == [long_line.decode(), "id: 2", ""]


def test_an_unterminated_last_line_comes_out_at_the_end() -> None:
    assert _lines([b"data: {}\n", b"id: 9"]) == ["data: {}", "id: 9"]


async def test_waiting_for_a_background_stream_is_bounded(
    fake_instance: tuple[FakeInstance, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.instance.fake_instance import PASSWORD
    from threadcase.instance.models import ClientTimeouts

    async def never_answers(self: InstanceClient, path: str, last_event_id: str | None) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError("never reached")  # pragma: no cover

    _, url = fake_instance
    quick = ClientTimeouts(connect=0.05, stream_read=0.05)
    async with InstanceClient(url, email="owner@example.com", password=PASSWORD, timeouts=quick) as client:
        monkeypatch.setattr(InstanceClient, "open_event_stream", never_answers)
        with anyio.fail_after(5):
            async with client.subscribe("t1", connect_in_background=True) as sub:
                with pytest.raises(InstanceError, match="did not connect within"):
                    await sub.ready()


async def test_one_client_holds_more_event_streams_than_its_call_pool_has_connections() -> None:
    """Regression: an http:// lane has one client, and every admitted case (up to twice --concurrency)
    holds a stream; the stream pool shared the call pool's bound of 256, so stream 257 waited out the
    pool timeout and failed."""
    demo = DemoSettings()
    async with (
        demo_server(demo) as url,
        InstanceClient(
            url, email=demo.email, password=demo.password.get_secret_value(), timeouts=ClientTimeouts(default=2.0)
        ) as client,
    ):
        project = await client.personal_project()
        opened = 0
        all_open = anyio.Event()

        async def hold_one() -> None:
            nonlocal opened
            thread_id = str(uuid.uuid4())
            await client.create_thread(thread_id, project.id)
            async with client.subscribe(thread_id):
                opened += 1
                if opened == 270:
                    all_open.set()
                await all_open.wait()

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(270):
                    tg.start_soon(hold_one)
    assert opened == 270


async def test_a_quiet_spell_costs_neither_the_connection_nor_an_event(fake_instance: tuple[FakeInstance, str]) -> None:
    """The caller gives up at each inactivity deadline: reading on afterwards must continue the same
    connection (the body is read by a task into a queue, so only the wait on the queue is interrupted)."""
    from tests.instance.fake_instance import PASSWORD

    _, url = fake_instance
    async with (
        InstanceClient(url, email="owner@example.com", password=PASSWORD) as client,
        client.subscribe("t1") as sub,
    ):
        for n in range(3):
            await client.chat("t1", wire.ChatRequest(message=f"m{n}"))
            events = await _collect(sub, 3)
            assert [e.type for e in events] == ["run-start", "text-delta", "run-finish"]
            # Only heartbeats come now: the deadline passes with bytes read but no event.
            assert await sub.next_event(timeout=0.05) is None
        assert sub.reconnects == 0
        assert sub.last_event_id == "9"
    fake, _ = fake_instance
    assert fake.last_event_ids == [None]


async def test_deadlines_during_the_reconnect_backoff_count_no_extra_loss(
    fake_instance: tuple[FakeInstance, str], client: InstanceClient
) -> None:
    """Regression guard: a caller polling with short timeouts while the stream waits out its backoff must
    not use up the reconnect budget (each interrupted wait would otherwise count as one more loss)."""
    fake, _ = fake_instance
    fake.stream_plan = [("end", 0)]
    subscription = EventSubscription(client, "t1", max_reconnects=2, reconnect_wait=lambda _attempt: 0.3)
    async with subscription as sub:
        for _ in range(25):  # 0.5 s of polls: through the backoff and the reconnect
            assert await sub.next_event(timeout=0.02) is None
        assert sub.reconnects == 1
        await client.chat("t1", wire.ChatRequest(message="hi"))
        events = await _collect(sub, 3)
        assert events[-1].type == "run-finish"
        assert sub.reconnects == 1
    # A connect a 20 ms deadline interrupted may still have reached the server on a loaded machine: it
    # counts no loss (above), and every attempt resumes from the start (no event was seen before).
    assert len(fake.last_event_ids) >= 2
    assert set(fake.last_event_ids) == {None}
