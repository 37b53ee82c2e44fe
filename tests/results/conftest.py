"""Fixtures of the results tests: a fake LangSmith API, runs of small suites on the demo instance."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.langsmith_server import FakeLangSmith
from threadcase.cli import run as run_cli
from threadcase.demo_instance.serve import serve_in_thread


@pytest.fixture
def fake_langsmith() -> Iterator[tuple[FakeLangSmith, str]]:
    """A fake LangSmith API on 127.0.0.1 (key ``lsv2-test-key``, one workspace); yields (state, base URL)."""
    fake = FakeLangSmith()
    fake.add_workspace("Default")
    with serve_in_thread(fake.app) as url:
        yield fake, url


@pytest.fixture(autouse=True)
def _keep_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs must not re-tune this test process's garbage collector."""
    monkeypatch.setattr(run_cli, "prepare_process", lambda: None)
