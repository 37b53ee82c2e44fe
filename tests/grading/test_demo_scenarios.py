"""Execution scenarios end to end on the demo instance: tables created before the build, rows reseeded
per scenario, mocked execution over the real client, the verifier (fake model) reading the real trace."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conversation.helpers import FAST, make_case
from tests.fakes.openai_server import FakeOpenAI
from threadcase import records
from threadcase.credentials.seeder import CredentialSeeder
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.grading import grade_case
from threadcase.grading.execution import prepare_scenario_tables
from threadcase.harness.conversation import converse
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings, RoleOverrides

pytestmark = pytest.mark.anyio

TABLE = {
    "id": "signups-table-0001",
    "name": "signups",
    "columns": [{"name": "email", "type": "string"}],
    "rows": [{"email": "old@acme.test"}],
}


def _scenario(name: str, hints: dict[str, Any], criterion: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": name,
        "dataSetup": json.dumps(hints),
        "successCriteria": criterion,
        "seedDataTables": [TABLE],
    }


async def test_scenarios_run_on_the_demo_instance(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, model_url = fake_openai
    case = make_case(
        ["When a form is submitted, insert the form fields into the signups data table, then post to Slack #growth."],
        credentials=[{"type": "slackApi"}],
        processExpectations=[],  # no judge call: the fake answers in order, so only the verifier may ask
        executionScenarios=[
            _scenario("stores the signup", {"trigger": [{"email": "new@acme.test"}]}, "the signup is stored"),
            _scenario(
                "slack is down",
                {"trigger": [{"email": "x@acme.test"}], "Slack": {"ok": False, "error": "channel_not_found"}},
                "the signup is still stored when Slack fails",
            ),
        ],
    )
    fake.queue(
        {"reasoning": "Data Table inserted new@acme.test; Slack posted once.", "pass": True, "failureCategory": None},
        {"reasoning": "Slack failed because the mock said so.", "pass": False, "failureCategory": "mock_issue"},
    )
    models = ModelSettings(
        api_key=SecretStr("k"),
        base_url=model_url,
        judge_model="fake-judge",
        verifier_model="fake-verifier",
        timeout_seconds=5,
        verifier=RoleOverrides(max_tokens=300, seed=5),
    )
    settings = DemoSettings()
    async with (
        demo_server(settings) as url,
        InstanceClient(url, email=settings.email, password=settings.password.get_secret_value()) as client,
    ):
        project = await client.personal_project()
        thread_id = str(uuid.uuid4())
        await client.create_thread(thread_id, project.id)
        seeder = CredentialSeeder(client, environ={})
        await seeder.seed(thread_id, case.credentials)
        created = await prepare_scenario_tables(client, case, thread_id=thread_id)
        assert len(created) == 1  # two scenarios, one shared table
        record = records.RunRecord(case_slug="scenarios", thread_id=thread_id, mode=case.mode)
        await converse(
            case,
            client=client,
            thread_id=thread_id,
            project_id=project.id,
            seed=None,
            live_opening=None,
            credentials=seeder,
            models=ModelSettings(),  # scripted proxy; only grading uses the fake judge
            budgets=FAST,
            record=record,
        )
        graded = await grade_case(case, record, client=client, models=models)
        await seeder.cleanup()

    verdicts = {v.unit: v for v in graded.verdicts}
    assert verdicts["scenario:stores the signup"].status == "pass"
    assert verdicts["scenario:slack is down"].status == "fail"
    assert verdicts["scenario:slack is down"].attribution == "mock_issue"
    traces = {
        json.loads(json.dumps(r["messages"][1]["content"][1]["text"])).split("\n", 1)[0]: r["messages"][1]["content"][
            1
        ]["text"]
        for r in fake.requests
        if r["messages"][0]["content"].startswith("You verify one scenario")
    }
    stored = traces["## Scenario: stores the signup"]
    assert "Success: True" in stored
    assert "Node 'Data Table': real" in stored
    assert "new@acme.test" in stored
    failed = traces["## Scenario: slack is down"]
    assert "Success: False" in failed
    assert "channel_not_found" in failed
    # The verifier is a role of its own: its model and settings, its token usage.
    assert {(r["model"], r["max_tokens"], r["seed"], r["temperature"]) for r in fake.requests} == {
        ("fake-verifier", 300, 5, 0)
    }
    assert graded.usage["verifier"].calls == 2
