"""Fixtures: a fake n8n-shaped instance on loopback, and a client logged in to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.instance.fake_instance import PASSWORD, FakeInstance
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.instance import InstanceClient, RetryPolicy


@pytest.fixture
def fake_instance() -> Iterator[tuple[FakeInstance, str]]:
    fake = FakeInstance()
    with serve_in_thread(fake.app) as url:
        yield fake, url


@pytest.fixture
async def client(fake_instance: tuple[FakeInstance, str]) -> AsyncIterator[InstanceClient]:
    _, url = fake_instance
    fast = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.05, jitter=0.0)
    async with InstanceClient(url, email="owner@example.com", password=PASSWORD, retry=fast) as c:
        yield c
