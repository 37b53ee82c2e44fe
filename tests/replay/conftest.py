"""Fixtures of the replay tests: a fake LangSmith API over loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.langsmith_server import FakeLangSmith
from threadcase.demo_instance.serve import serve_in_thread


@pytest.fixture
def fake_langsmith() -> Iterator[tuple[FakeLangSmith, str]]:
    """A fake LangSmith API on 127.0.0.1 (key ``lsv2-test-key``); yields (state, base URL)."""
    fake = FakeLangSmith(page_size=3)
    with serve_in_thread(fake.app) as url:
        yield fake, url
