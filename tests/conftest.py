"""Shared fixtures: the anyio backend, and real local servers over loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI
from threadcase.demo_instance.serve import serve_in_thread


@pytest.fixture
def anyio_backend() -> str:
    # uvicorn and the openai SDK run on asyncio; trio would test nothing we ship.
    return "asyncio"


@pytest.fixture
def fake_openai() -> Iterator[tuple[FakeOpenAI, str]]:
    """A fake OpenAI-compatible server on 127.0.0.1; yields (state, base_url ending in /v1)."""
    fake = FakeOpenAI()
    with serve_in_thread(fake.app) as url:
        yield fake, f"{url}/v1"
