"""Timestamps and random ids of the demo: the cheap forms write exactly what datetime and uuid4 wrote."""

from __future__ import annotations

import random
import time
import uuid
from datetime import UTC, datetime

import pytest

from threadcase.demo_instance.events import hex_id, utc_now


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
