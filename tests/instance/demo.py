"""Fixtures serving the real demo instance over loopback, for the client, credential and seed tests.

Import the fixtures into a test module (``from tests.instance.demo import demo, demo_client``).
The app object is kept so tests can look at the demo's own store for what the API does not show
(a thread's pinned credential view, its bypass list).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from threadcase.demo_instance import DemoSettings, create_app
from threadcase.demo_instance.app import platform_of
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.instance import InstanceClient, RetryPolicy

FAST_RETRY = RetryPolicy(attempts=6, initial_wait=0.01, max_wait=0.05, jitter=0.01)


@dataclass
class Demo:
    url: str
    app: Any

    @property
    def store(self) -> Any:
        return platform_of(self.app).store

    def thread(self, thread_id: str) -> dict[str, Any]:
        doc = self.store.get("threads", thread_id)
        assert doc is not None, f"thread {thread_id} does not exist on the demo"
        return dict(doc)

    def client(self, *, claims: Counter[str] | None = None) -> InstanceClient:
        return InstanceClient(self.url, email=DEFAULT_EMAIL, password=DEFAULT_PASSWORD, retry=FAST_RETRY, claims=claims)


def serve_demo(settings: DemoSettings | None = None) -> Iterator[Demo]:
    app = create_app(settings or DemoSettings())
    with serve_in_thread(app) as url:
        yield Demo(url, app)


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    """One demo instance per test module (tests isolate themselves with fresh threads and names)."""
    yield from serve_demo()


@pytest.fixture
async def demo_client(demo: Demo) -> AsyncIterator[InstanceClient]:
    async with demo.client() as client:
        yield client
