"""Timestamps, random ids and JSON of the demo: the cheap forms write exactly what datetime, uuid4 and json wrote."""

from __future__ import annotations

import json
import math
import random
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.responses import JSONResponse

from threadcase.demo_instance.events import _frame, hex_id, utc_now
from threadcase.demo_instance.platform import ok_plain


def _reference(nanos: int) -> str:
    # What utc_now used to be: datetime.now(UTC) floors the clock to microseconds, isoformat to milliseconds.
    stamp = datetime.fromtimestamp(nanos // 1_000_000_000, UTC).replace(microsecond=nanos // 1000 % 1_000_000)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_utc_now_writes_what_datetime_isoformat_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    instants = [0, 999_999_999, 1_000_000_000, 1_709_164_799_999_999_999, 1_709_164_800_000_000_000]
    instants += [951_782_400_000_000_000 - 1, 4_102_444_800_000_000_000 - 1]  # before a leap day, the year 2100
    instants += [rng.randrange(0, 4_102_444_800_000_000_000) for _ in range(2000)]
    instants += [1_767_225_600_000_000_000 + rng.randrange(0, 3_000_000_000) for _ in range(200)]  # same second
    for nanos in instants:
        monkeypatch.setattr(time, "time_ns", lambda nanos=nanos: nanos)
        assert utc_now() == _reference(nanos), nanos


def test_utc_now_reads_the_clock() -> None:
    before = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    now = utc_now()
    after = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert before <= now <= after
    assert len(now) == len("2026-01-02T03:04:05.678Z")
    assert now.endswith("Z")


def test_hex_id_is_a_version_4_uuid_in_hex() -> None:
    seen = set()
    for _ in range(2000):
        value = hex_id()
        parsed = uuid.UUID(hex=value)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert parsed.hex == value
        seen.add(value)
    assert len(seen) == 2000


# --- JSON written by pydantic-core where it writes what json wrote ---------------------------------


def _old_frame(event: dict[str, Any]) -> bytes:
    return f"id: {event['id']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


AWKWARD_VALUES: list[Any] = [
    "plain",
    "é ✓ 😀",
    "\x7f",
    '\x00\x1f\n\t\r\b\f\\ " / \u2028',
    "a\ud800b",  # a lone surrogate: neither encoder writes it as UTF-8
    0,
    -(2**70),
    0.1,
    1e16,
    1e-5,
    1e-7,
    -0.0,
    123456789.125,
    math.nan,
    math.inf,
    -math.inf,
    None,
    True,
    [],
    {},
    {"nested": [{"k": [1, 2.5, "x"]}], "1": None},
]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(8 if depth < 3 else 5)
    if pick == 0:
        return "".join(rng.choice('ab é\x7f\n"\\😀\x01') for _ in range(rng.randrange(6)))
    if pick == 1:
        return rng.randrange(-(10**20), 10**20)
    if pick == 2:
        return rng.random() * 10 ** rng.randrange(-12, 20)
    if pick == 3:
        return rng.choice([None, True, False])
    if pick == 4:
        return rng.choice(AWKWARD_VALUES)
    if pick == 5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randrange(4))}


@pytest.mark.parametrize("type_", ["run-start", "text-delta", "run-finish", "error", "tool-result"])
def test_event_frames_are_the_bytes_json_dumps_wrote(type_: str) -> None:
    rng = random.Random(type_)
    values = AWKWARD_VALUES + [_random_value(rng) for _ in range(600)]
    for index, value in enumerate(values):
        event = {"id": str(index + 1), "type": type_, "runId": "run_1", "payload": {"text": value}}
        try:
            expected = _old_frame(event)
        except UnicodeEncodeError:
            with pytest.raises(UnicodeEncodeError):
                _frame(event)
            continue
        assert _frame(event) == expected, value


def test_plain_answers_are_the_bytes_jsonresponse_wrote() -> None:
    rng = random.Random(3)
    for value in AWKWARD_VALUES + [_random_value(rng) for _ in range(600)]:
        try:
            expected = JSONResponse({"data": value}).body
        except (ValueError, UnicodeEncodeError) as exc:  # NaN refused, a lone surrogate unencodable
            with pytest.raises(type(exc)):
                ok_plain(value)
            continue
        answer = ok_plain(value)
        assert answer.body == expected, value
        assert answer.headers.items() == JSONResponse({"data": value}).headers.items()
