"""``compaction-recall`` on the real n8n 2.41, on an n8n of its own with a low observer threshold.

n8n's observer threshold is instance-wide (the chat body's ``observerThresholdTokens`` is dropped), so the
case cannot share the suite's n8n: there it would compact every other case's thread too, and here the
suite's cases are left out. n8n 2.41 has no memory route; the premise is read from run debug, so this is
also the contract test of that reading: the first live run sends the 26 restored messages and the new one,
n8n's observer runs after it, and the next run sends one message with the observations in its system
prompt. Every unit must be judged and pass, the premise included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.n8n.conftest import inventory
from tests.n8n.local import LocalN8n
from tests.n8n.suite_run import agent_n8n, run_suite, scripted_model
from tests.runner.test_n8n_suite_on_demo import COMPACTION
from threadcase.harness.journal import read_journal
from threadcase.instance import InstanceClient
from threadcase.standins.model_server import ScriptedModel

pytestmark = pytest.mark.anyio

THRESHOLD = 1000
"""Tokens of unobserved messages before n8n's observer runs (n8n's default: 30,000). The seed is ~1,600
by n8n's count, so the first live run crosses it; the lowest the demo's chat body accepts, too."""


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[ScriptedModel, str]]:
    with scripted_model() as served:
        yield served


@pytest.fixture(scope="module")
def compacting_n8n(model: tuple[ScriptedModel, str]) -> Iterator[LocalN8n]:
    with agent_n8n(model[1], {"N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS": str(THRESHOLD)}) as n8n:
        yield n8n


@pytest.fixture
async def client(compacting_n8n: LocalN8n) -> AsyncIterator[InstanceClient]:
    n8n = compacting_n8n
    async with InstanceClient(n8n.base_url, email=n8n.email, password=n8n.password) as instance:
        yield instance


async def test_compaction_recall_is_green_with_the_premise_read_from_run_debug(
    compacting_n8n: LocalN8n, client: InstanceClient, model: tuple[ScriptedModel, str], tmp_path: Path
) -> None:
    scripted, url = model
    before = await inventory(client)
    out = tmp_path / "results"
    await run_suite(compacting_n8n, url, out, "--filter", COMPACTION, seconds=120)

    (result,) = read_journal(out / "journal.jsonl")
    assert result.case_slug == COMPACTION
    assert result.error is None
    assert result.verdicts
    assert all(v.status == "pass" for v in result.verdicts), result.verdicts  # judged, and passed
    record = result.record
    assert record is not None
    assert record.memory is None
    assert record.memory_unavailable == "this instance exposes no memory route"
    full, compacted = record.run_prompts
    # Before the observer: every restored message and the new one. After it: the new one only.
    assert (full.turn, full.messages_sent, full.thread_messages, full.observations) == (1, 27, 26, None)
    assert (compacted.turn, compacted.messages_sent, compacted.thread_messages) == (2, 1, 28)
    # The scripted observer keeps one observation per user message it saw: the 13 restored and the first live one.
    assert compacted.observations == 14
    premise = next(p for p in result.premises if p.name == "memory-compaction")
    assert premise.held
    assert premise.reason.startswith(
        "the thread compacted before turn 2: run debug shows its model request sent 1 message(s) where the "
        "thread held 28 before it, with 14 observations in the system prompt"
    )
    # n8n's own observer ran (a helper call, not a step), and the answer came from its observations.
    answered_by = [entry.get("source") for entry in scripted.log]
    assert "builtin:observer" in answered_by
    assert "rule:recall-from-observations" in answered_by
    assert "rule:recall-no-observations" not in answered_by
    assert "unmatched" not in answered_by
    assert await inventory(client) == before
