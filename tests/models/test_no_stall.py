"""No stall from the harness's own waiting: a case that waited for its conversation slot behind slow
user-proxy calls, or for the proxy's model mid-conversation, still hears every event of its run.

Regression (issue 23, item 3): at ``--concurrency 2`` with a slow local model as the user, three of
five cases ended "stalled before the agent produced any output" after waiting minutes for a slot.
Root cause: the event stream connects while the case sets up, ahead of its slot, but the stream's
silence clock was stamped only when the *caller* read a byte. After a wait longer than the stream's
read timeout the first read found the connection "silent", dropped it together with the run's events
already received, and reconnected after the last event *read* — none yet, so the server resumed after
the run had finished, and nothing came until the inactivity budget called it a stall.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import anyio
import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.models.answers import DONE, follow_up
from threadcase.case.loader import load_suite
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.harness.conversation import Budgets
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.pipeline import LaneResources, PipelineConfig, WorkItem, run_case
from threadcase.instance import InstanceClient
from threadcase.instance.models import ClientTimeouts
from threadcase.models import ModelSettings
from threadcase.verdicts import CaseResult

pytestmark = pytest.mark.anyio

INACTIVITY = 1.0
STREAM_READ = 0.8
MODEL_DELAY = 1.6
"""Each proxy decision takes longer than the inactivity budget and the stream's read timeout."""


def _write_cases(directory: Path, count: int) -> None:
    directory.mkdir()
    for index in range(count):
        body = {
            "complexity": "simple",
            "tags": ["slow-user"],
            "conversation": [{"role": "user", "text": "Thanks!"}, {"role": "user", "text": "Cheers, that helps"}],
            "messageBudget": 2,
            "checks": {"mustContain": ["You're welcome"]},
        }
        (directory / f"slow-user-{index}.json").write_text(json.dumps(body), encoding="utf-8")


async def test_slow_user_model_at_concurrency_one_never_stalls(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    fake.delay_seconds = MODEL_DELAY
    for index in range(2):
        fake.queue(follow_up(f"Cheers, that helps ({index})"), DONE)
    _write_cases(tmp_path / "suite", 2)
    cases = load_suite([tmp_path / "suite"])
    models = ModelSettings(api_key=SecretStr("sk-test"), base_url=url, proxy_model="slow-proxy", timeout_seconds=10)
    settings = DemoSettings(heartbeat_seconds=0.2)
    config = PipelineConfig(
        run_id=uuid.uuid4().hex[:12],
        models=models,
        budgets=Budgets(turn_seconds=30, inactivity_seconds=INACTIVITY, settle_seconds=0.01, status_poll_seconds=0.02),
    )
    results: list[CaseResult] = []
    async with (
        demo_server(settings) as base,
        InstanceClient(
            base,
            email=settings.email,
            password=settings.password.get_secret_value(),
            timeouts=ClientTimeouts(stream_read=STREAM_READ),
        ) as client,
    ):
        project = await client.personal_project()
        lane = Lane(base, cap=1)
        lane.state["resources"] = LaneResources(clients=[client], project_id=project.id)
        pool = LanePool([lane], concurrency=1)

        async def one(index: int) -> None:
            results.append(await run_case(WorkItem(cases[index], 0), lane, config, pool))

        with anyio.fail_after(40):
            async with anyio.create_task_group() as tg:
                for index in range(2):
                    tg.start_soon(one, index)
    assert len(results) == 2
    for result in results:
        record = result.record
        assert record is not None
        assert record.ended_by == "done", (result.case_slug, record.ended_by, record.warnings)
        assert result.status == "pass", [v.reason for v in result.verdicts]
        assert next(t.text for t in record.live_turns if t.role == "assistant").startswith("You're welcome")
    # The second case waited longer than the stream's read timeout for its slot (two slow decisions).
    assert fake.pending == 0
