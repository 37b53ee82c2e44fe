"""The n8n suite (``cases/n8n/``) on the real n8n 2.41, its own agent driven by the suite's scripted model.

One n8n of its own is started for this module with the sandbox stand-in (``--sandbox``: n8n builds only
through a workspace) and the scripted model as its agent's and mocked execution's model
(``--model-url``), then ``threadcase run`` is started as a user would start it. Every flow must be
judged and pass — a build, a question through n8n's widget, a credential setup card with none and with
one existing credential, an edit in place of a seeded workflow, token numbers from run debug, a mocked
execution — and the instance must be left as it was found. ``compaction-recall`` runs on an n8n of its
own (``test_n8n_compaction.py``): the observer threshold it needs is instance-wide. The same suite is green on the demo
(``tests/runner/test_n8n_suite_on_demo.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.n8n.conftest import Inventory, inventory
from tests.n8n.local import LocalN8n
from tests.n8n.suite_run import agent_n8n, run_suite, scripted_model
from tests.runner.test_n8n_suite_on_demo import COMPACTION, FLOWS
from threadcase.harness.journal import read_journal
from threadcase.instance import InstanceClient
from threadcase.render import render_transcript
from threadcase.standins.model_server import ScriptedModel

pytestmark = pytest.mark.anyio

TURN_HEADER = re.compile(r"^### Turn (\d+)(?: \((\d+) steps, (\d+) tokens in)?", re.MULTILINE)


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[ScriptedModel, str]]:
    with scripted_model() as served:
        yield served


@pytest.fixture(scope="module")
def n8n_for_suite(model: tuple[ScriptedModel, str]) -> Iterator[LocalN8n]:
    with agent_n8n(model[1]) as n8n:
        yield n8n


@pytest.fixture
async def agent_client(n8n_for_suite: LocalN8n) -> AsyncIterator[InstanceClient]:
    async with InstanceClient(
        n8n_for_suite.base_url, email=n8n_for_suite.email, password=n8n_for_suite.password
    ) as client:
        yield client


async def test_the_n8n_suite_is_green_on_n8ns_own_agent_with_every_flow_judged(
    n8n_for_suite: LocalN8n, agent_client: InstanceClient, model: tuple[ScriptedModel, str], tmp_path: Path
) -> None:
    scripted, url = model
    before: Inventory = await inventory(agent_client)
    out = tmp_path / "results"
    # compaction-recall needs a low observer threshold, which is instance-wide: test_n8n_compaction.py.
    await run_suite(n8n_for_suite, url, out, "--exclude", COMPACTION)
    results = read_journal(out / "journal.jsonl")
    assert {r.case_slug for r in results} == FLOWS - {COMPACTION}
    for result in results:
        assert result.error is None, (result.case_slug, result.error)
        assert result.verdicts, result.case_slug
        for verdict in result.verdicts:
            assert verdict.status == "pass", (result.case_slug, verdict)  # judged, and passed
        record = result.record
        assert record is not None
        # Token numbers come from n8n's run debug: every live turn's header carries a non-zero count.
        headers = TURN_HEADER.findall(render_transcript(record))
        live = [h for h in headers if h[1]]
        assert live, (result.case_slug, headers)
        assert all(int(tokens_in) > 0 for _, _, tokens_in in live), (result.case_slug, headers)
    by_slug = {r.case_slug: r for r in results}
    assert any(v.unit.startswith("scenario:") for v in by_slug["build-evening-revenue"].verdicts)
    # The widget and the cards were n8n's own: what the scripted model logged shows its tools ran.
    answered_by = {entry.get("source") for entry in scripted.log}
    driven = {"rule:wrapup-ask", "rule:card-after-build", "rule:edit-write", "rule:verifier-slack-post-seen"}
    assert driven <= answered_by
    unmatched = [e for e in scripted.log if e.get("source") == "unmatched"]
    assert not unmatched, [(e["agent"], e.get("userText", "")[:300]) for e in unmatched]
    assert await inventory(agent_client) == before
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units"]["not_judged"] == 0


async def test_without_a_low_observer_threshold_the_compaction_case_is_not_judged_never_red(
    n8n_for_suite: LocalN8n, model: tuple[ScriptedModel, str], tmp_path: Path
) -> None:
    """This n8n keeps n8n's default threshold (30,000 tokens): the thread never compacts, run debug shows
    every request carrying the whole history, and the case is not judged with that reason (exit 3), never
    charged to the builder."""
    out = tmp_path / "results"
    await run_suite(n8n_for_suite, model[1], out, "--filter", COMPACTION, exit_code=3)
    (result,) = read_journal(out / "journal.jsonl")
    assert result.record is not None
    assert [(p.turn, p.messages_sent - p.thread_messages, p.observations) for p in result.record.run_prompts] == [
        (1, 1, None),
        (2, 1, None),
    ]
    premise = next(p for p in result.premises if p.name == "memory-compaction")
    assert not premise.held
    assert premise.reason.startswith("the threshold was never crossed: no live run's model request read the thread")
    assert "turn 1 sent 27 message(s) after 26, no observations" in premise.reason
    assert result.verdicts
    assert all((v.status, v.attribution) == ("not_judged", "framework_issue") for v in result.verdicts)
