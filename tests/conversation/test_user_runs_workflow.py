"""The simulated user runs a saved workflow for real (``allowUserExecution`` / ``runWorkflowId``).

End to end on the demo instance with the fake model server: the proxy picks ``runWorkflowId``, the
harness runs it at the turn boundary (before the follow-up is sent), the demo records exactly one
execution, the message to the agent never mentions it, and the transcript the judge reads shows a
``User action:`` line.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from pydantic import SecretStr

from tests.conversation.helpers import FAST, drive, make_case
from tests.fakes.openai_server import FakeOpenAI
from threadcase import records
from threadcase.credentials.seeder import CredentialSeeder
from threadcase.demo_instance import DemoSettings
from threadcase.demo_instance.agent.protocol import AgentContext, BuilderAgent, TurnInput
from threadcase.demo_instance.storage import Store
from threadcase.harness.conversation import Budgets, _Conversation
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.render import render_transcript
from threadcase.user_proxy import Script

pytestmark = pytest.mark.anyio

FOLLOW_UP = "I just tried it. Can you also tell me what it outputs?"
DONE = {"decision": {"action": "declare_done"}}


def _models(url: str) -> ModelSettings:
    return ModelSettings(api_key=SecretStr("sk-test"), base_url=url, proxy_model="fake-proxy", max_attempts=1)


def _building_agent(fake: FakeOpenAI, trigger: str) -> BuilderAgent:
    """Builds one workflow on the first message and only then queues the model's choice to run it (its
    id is only known once built); afterwards it reports how many executions the workflow has."""

    async def agent(turn: TurnInput, ctx: AgentContext) -> None:
        if "workflowId" not in turn.state:
            spec = {
                "name": "Greeter",
                "nodes": [
                    {"name": "Start", "type": f"n8n-nodes-base.{trigger}", "parameters": {}},
                    {
                        "name": "Greet",
                        "type": "n8n-nodes-base.set",
                        "parameters": {"assignments": {"assignments": [{"name": "hello", "value": "world"}]}},
                    },
                ],
                "connections": {"Start": {"main": [[{"node": "Greet", "type": "main", "index": 0}]]}},
            }
            result = await ctx.call_tool("build-workflow", {"workflow": spec})
            turn.state["workflowId"] = result["workflowId"]
            decision = {
                "action": "send_follow_up_message",
                "message": FOLLOW_UP,
                "renameWorkflowTo": None,
                "runWorkflowId": result["workflowId"],
            }
            fake.queue({"decision": decision}, DONE)
            await ctx.say("Built Greeter.")
            return
        await ctx.say("It sets hello to world.")

    return agent


async def test_the_proxy_runs_the_saved_workflow_before_its_follow_up(
    fake_openai: tuple[FakeOpenAI, str], tmp_path: Path
) -> None:
    fake, url = fake_openai
    db = tmp_path / "demo.sqlite"
    case = make_case(["Build a greeter I can run by hand", "Check what it outputs"], allowUserExecution=True)
    out = await drive(
        case, agent=_building_agent(fake, "manualTrigger"), models=_models(url), settings=DemoSettings(db_path=db)
    )
    record = out.record
    workflow_id = record.artifacts.workflows[0].id
    store = Store(db)
    try:
        executions = store.list("executions", workflow_id)
    finally:
        store.close()
    assert len(executions) == 1
    execution = executions[0]
    assert execution["status"] == "success"

    users = [t for t in record.turns if t.role == "user"]
    assert users[0].user_actions == []
    assert users[1].user_actions == [f"ran workflow 'Greeter' (execution {execution['id']}: success)"]
    # Run before the follow-up reached the agent: its execution started before the second message.
    assert users[1].started_at is not None
    assert datetime.fromisoformat(execution["startedAt"]) <= users[1].started_at
    # The agent heard exactly the user's words, nothing about the run.
    assert out.user_texts[-1] == FOLLOW_UP
    assert record.instance_failures == []
    assert not any("no run call" in w for w in record.warnings)

    rendered = render_transcript(record)
    expected = f"User action: ran workflow 'Greeter' (execution {execution['id']}: success)\nUser: {FOLLOW_UP}"
    assert expected in rendered
    # The model was offered the workflow to run, and its next decision knows how the run went.
    assert f"- {workflow_id}: Greeter" in fake.requests[0]["messages"][1]["content"]
    later = fake.requests[1]["messages"][1]["content"]
    assert f"User action (not told to the assistant): ran workflow 'Greeter' (execution {execution['id']}" in later


async def test_a_run_the_instance_refuses_is_an_instance_failure(
    fake_openai: tuple[FakeOpenAI, str], tmp_path: Path
) -> None:
    fake, url = fake_openai
    case = make_case(["Build a greeter behind a webhook", "Check what it outputs"], allowUserExecution=True)
    out = await drive(case, agent=_building_agent(fake, "webhook"), models=_models(url))
    record = out.record
    users = [t for t in record.turns if t.role == "user"]
    assert users[1].user_actions == ["tried to run workflow 'Greeter'; the instance did not run it"]
    assert len(record.instance_failures) == 1
    assert "only manual or schedule triggers run" in record.instance_failures[0]
    # The conversation went on: the follow-up was still sent, unchanged.
    assert out.user_texts[-1] == FOLLOW_UP


def _scripted_builder(trigger: str = "manualTrigger") -> BuilderAgent:
    """The same greeter, without a model server: the scripted user decides from its notes."""

    async def agent(turn: TurnInput, ctx: AgentContext) -> None:
        if "workflowId" not in turn.state:
            spec = {
                "name": "Greeter",
                "nodes": [{"name": "Start", "type": f"n8n-nodes-base.{trigger}", "parameters": {}}],
                "connections": {},
            }
            turn.state["workflowId"] = (await ctx.call_tool("build-workflow", {"workflow": spec}))["workflowId"]
            await ctx.say("Built Greeter.")
            return
        await ctx.say("Noted.")

    return agent


RUN_NOTE = "[run the workflow yourself before answering]"


@pytest.mark.parametrize(
    "script",
    [
        ["Build a greeter", f"{RUN_NOTE} It ran fine, thanks."],
        # A note-only turn says nothing itself: its run goes with the next message said.
        ["Build a greeter", RUN_NOTE, "It ran fine, thanks."],
    ],
)
async def test_scripted_user_runs_the_workflow_when_a_note_says_so(tmp_path: Path, script: list[str]) -> None:
    db = tmp_path / "demo.sqlite"
    case = make_case(script, allowUserExecution=True)
    out = await drive(case, agent=_scripted_builder(), settings=DemoSettings(db_path=db))
    workflow_id = out.record.artifacts.workflows[0].id
    store = Store(db)
    try:
        executions = store.list("executions", workflow_id)
    finally:
        store.close()
    assert [e["status"] for e in executions] == ["success"]
    users = [t for t in out.record.turns if t.role == "user"]
    assert users[1].sent_by == "script"
    assert users[1].user_actions == [f"ran workflow 'Greeter' (execution {executions[0]['id']}: success)"]
    assert out.user_texts == ["Build a greeter", "It ran fine, thanks."]


async def test_scripted_run_note_without_allow_user_execution_runs_nothing() -> None:
    case = make_case(["Build a greeter", f"{RUN_NOTE} It ran fine, thanks."])
    out = await drive(case, agent=_scripted_builder())
    users = [t for t in out.record.turns if t.role == "user"]
    assert users[1].user_actions == []
    assert any("does not set allowUserExecution" in w for w in out.record.warnings)
    assert out.user_texts[-1] == "It ran fine, thanks."


async def _outcome(statuses: list[dict[str, Any]], budgets: Budgets) -> tuple[str, records.RunRecord, int]:
    """``_execution_outcome`` against an instance whose execution reads answer ``statuses`` in turn
    (a real n8n runs executions in the background, so the first reads may say ``running``)."""
    reads: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/rest/executions/"):
            reads.append(1)
            return httpx.Response(200, json={"data": statuses[min(len(reads), len(statuses)) - 1]})
        return httpx.Response(200, json={"data": {}})

    case = make_case(["Build a greeter", "thanks"], allowUserExecution=True)
    record = records.RunRecord(case_slug="t", thread_id="t1", mode=case.mode)
    transport = httpx.MockTransport(handler)
    async with InstanceClient("http://instance.test", email="a@b.c", password="pw", transport=transport) as client:
        conversation = _Conversation(
            case,
            client=client,
            thread_id="t1",
            credentials=CredentialSeeder(client, environ={}),
            models=ModelSettings(),
            budgets=budgets,
            record=record,
            headers=None,
            script=Script.from_texts([("user", "Build a greeter"), ("user", "thanks")]),
        )
        conversation.conversation_deadline = anyio.current_time() + 60
        outcome = await conversation._execution_outcome("7")
    return outcome, record, len(reads)


async def test_a_background_execution_is_waited_for_and_its_error_reported() -> None:
    running = {"id": "7", "status": "running"}
    failed = {"id": "7", "status": "error", "data": {"resultData": {"error": {"message": "Node 'Greet' broke"}}}}
    outcome, record, reads = await _outcome([running, running, failed], FAST)
    assert outcome == "error — Node 'Greet' broke"
    assert reads == 3
    assert record.warnings == []


async def test_an_execution_still_running_at_the_bound_is_said_so() -> None:
    outcome, record, reads = await _outcome(
        [{"id": "7", "status": "running"}], FAST.model_copy(update={"user_run_wait_seconds": 0.1})
    )
    assert outcome == "still running"
    assert reads >= 2
    assert record.warnings == ["execution 7 of the user's run was still running when the user moved on"]
