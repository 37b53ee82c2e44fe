"""Execution scenarios: routing to the target workflow, table reseeding, serial shared tables, the
verifier's verdict mapping, and never a pass without a verifier."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import SLACK_WORKFLOW, case, clean_record
from threadcase.case import schema
from threadcase.errors import InstanceError
from threadcase.grading.execution import pick_workflow, run_scenarios, scenario_groups
from threadcase.models import ModelSettings
from threadcase.records import Artifacts, RunRecord
from threadcase.wire import (
    ExecuteWithMockRequest,
    ExecutionResult,
    NodeResult,
    RestoreThreadRequest,
    RestoreThreadResponse,
    Workflow,
    WorkflowNode,
)

ORDERS = Workflow(
    id="wf-orders",
    name="Sync Shopify orders to the orders table",
    nodes=[
        WorkflowNode(name="Shopify Trigger", type="n8n-nodes-base.shopifyTrigger"),
        WorkflowNode(name="Insert order", type="n8n-nodes-base.dataTable"),
    ],
)
HELPER = Workflow(
    id="wf-helper",
    name="Format Slack message helper",
    nodes=[WorkflowNode(name="Format", type="n8n-nodes-base.set")],
)
CALLER = Workflow(
    id="wf-caller",
    name="Digest",
    nodes=[
        WorkflowNode(name="Call helper", type="n8n-nodes-base.executeWorkflow", parameters={"workflowId": "wf-helper"}),
    ],
)


def _scenario(name: str, tables: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} scenario",
        "dataSetup": kw.get("dataSetup", f"{name}: two signups today"),
        "successCriteria": kw.get("successCriteria", "a Slack message lists both signups"),
        "seedDataTables": tables or [],
    }


def _table(name: str, rows: int = 2) -> dict[str, Any]:
    return {
        "id": f"tbl-{name}-0001",
        "name": name,
        "columns": [{"name": "email", "type": "string"}],
        "rows": [{"email": f"user{i}@example.com"} for i in range(rows)],
    }


class FakeInstance:
    """The three instance calls scenarios make, recorded; executions take a little while to overlap."""

    def __init__(self, *, fail_execute: bool = False, success: bool = True, errors: list[str] | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.running: dict[str, int] = {}
        self.max_running_per_table: dict[str, int] = {}
        self.fail_execute = fail_execute
        self.success = success
        self.errors = errors

    async def seed_table_rows(self, thread_id: str, table_id: str, rows: list[dict[str, Any]]) -> int:
        self.calls.append(("seed", (thread_id, table_id, len(rows))))
        return len(rows)

    async def restore_thread(self, request: RestoreThreadRequest) -> RestoreThreadResponse:
        self.calls.append(("restore", [t["name"] for t in request.dataTables]))
        return RestoreThreadResponse(threadId=request.threadId, dataTableIds=["created-table-id"])

    async def list_data_tables(self, project_id: str) -> list[dict[str, Any]]:
        self.calls.append(("list-tables", project_id))
        return []

    async def execute_with_mock(self, workflow_id: str, request: ExecuteWithMockRequest) -> ExecutionResult:
        self.calls.append(("execute", (workflow_id, request)))
        tables = request.seededDataTableIds or []
        for t in tables:
            self.running[t] = self.running.get(t, 0) + 1
            self.max_running_per_table[t] = max(self.max_running_per_table.get(t, 0), self.running[t])
        await anyio.sleep(0.05)
        for t in tables:
            self.running[t] -= 1
        if self.fail_execute:
            raise InstanceError("execution aborted", method="POST", path="/rest/instance-ai/eval/x", status=500)
        errors = (
            self.errors if self.errors is not None else [] if self.success else ['Node "Post to Slack": no channel']
        )
        return ExecutionResult(
            executionId="ex-1",
            success=self.success,
            errors=errors,
            nodeResults={
                "Post to Slack": NodeResult(
                    # n8n's shape: connection type -> branches -> items {json, pairedItem}.
                    outputs={"main": [[{"json": {"ok": True, "ts": "1.2"}, "pairedItem": {"item": 0}}]]},
                    outputCount=1,
                    executionMode="mocked",
                    interceptedRequests=[
                        {"url": "https://slack.com/api/chat.postMessage", "method": "POST", "mockResponse": {"ok": 1}}
                    ],
                )
            },
        )


def _models(url: str | None) -> ModelSettings:
    if url is None:
        return ModelSettings()
    return ModelSettings(api_key=SecretStr("k"), base_url=url, judge_model="fake-judge", timeout_seconds=5)


def _record(*workflows: Workflow, tables: list[dict[str, Any]] | None = None) -> RunRecord:
    return clean_record(artifacts=Artifacts(workflows=list(workflows), data_tables=tables or []))


def test_pick_workflow_by_token_overlap_and_demotes_sub_workflows() -> None:
    signups = schema.ExecutionScenario.model_validate(_scenario("slack digest of signups"))
    orders = schema.ExecutionScenario.model_validate(_scenario("new shopify order", dataSetup="an order arrives"))
    assert pick_workflow(signups, [ORDERS, SLACK_WORKFLOW]) is SLACK_WORKFLOW
    assert pick_workflow(orders, [SLACK_WORKFLOW, ORDERS]) is ORDERS
    # Both mention "helper" once; without the demotion the first listed (the sub-workflow) would win.
    helper_bait = schema.ExecutionScenario.model_validate(_scenario("helper", dataSetup="none"))
    assert pick_workflow(helper_bait, [HELPER, CALLER]) is CALLER
    assert pick_workflow(signups, []) is None


def test_scenarios_sharing_a_table_are_grouped() -> None:
    scenarios = [
        schema.ExecutionScenario.model_validate(s)
        for s in (
            _scenario("a", [_table("signups")]),
            _scenario("b"),
            _scenario("c", [_table("signups"), _table("audit")]),
            _scenario("d", [_table("audit")]),
        )
    ]
    assert sorted(scenario_groups(scenarios)) == [[0, 2, 3], [1]]


@pytest.mark.anyio
async def test_scenario_passes_with_the_verifier_and_sees_the_trace(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"reasoning": "Post to Slack sent one message listing both.", "pass": True, "failureCategory": None})
    instance = FakeInstance()
    long_setup = "x" * 2500
    c = case(executionScenarios=[_scenario("slack digest", [_table("signups")], dataSetup=long_setup)])
    record = _record(SLACK_WORKFLOW, tables=[{"id": "real-signups-id", "name": "signups [run 1a2b]"}])
    (verdict,) = await run_scenarios(c, record, client=instance, models=_models(url))
    assert verdict.unit == "scenario:slack digest"
    assert verdict.status == "pass"
    assert verdict.attribution is None
    assert ("seed", ("thread-1", "real-signups-id", 2)) in instance.calls
    executed = next(arg for kind, arg in instance.calls if kind == "execute")
    assert executed[0] == "wf-1"
    assert executed[1].scenarioHints == "x" * 2000
    assert executed[1].seededDataTableIds == ["real-signups-id"]
    static, trace = (p["text"] for p in fake.requests[0]["messages"][1]["content"])
    assert "Daily Slack digest" in static
    assert "Success criterion: a Slack message lists both signups" in trace
    assert "POST https://slack.com/api/chat.postMessage" in trace
    assert "Node 'Every morning' (n8n-nodes-base.scheduleTrigger): did not run" in trace
    assert 'Output: [{"ok": true, "ts": "1.2"}]' in trace  # the items' json, not n8n's envelope around them


@pytest.mark.anyio
async def test_missing_table_is_created_then_seeded(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"reasoning": "ok", "pass": True, "failureCategory": None})
    instance = FakeInstance()
    c = case(executionScenarios=[_scenario("slack digest", [_table("signups")])])
    await run_scenarios(c, _record(SLACK_WORKFLOW), client=instance, models=_models(url))
    assert instance.calls[0] == ("restore", ["signups"])
    assert instance.calls[1] == ("seed", ("thread-1", "created-table-id", 2))


@pytest.mark.anyio
async def test_failure_category_becomes_attribution(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        {"reasoning": "The mock answered 404 to a valid channel.", "pass": False, "failureCategory": "mock_issue"},
        {
            "reasoning": "The Slack node posts to #general, not #alerts.",
            "pass": False,
            "failureCategory": "builder_issue",
        },
        {"reasoning": "Cannot tell.", "pass": False, "failureCategory": None},
    )
    c = case(executionScenarios=[_scenario("slack digest", [_table("t")])] * 1)
    verdicts = []
    for _ in range(3):
        verdicts += await run_scenarios(c, _record(SLACK_WORKFLOW), client=FakeInstance(), models=_models(url))
    assert [(v.status, v.attribution) for v in verdicts] == [
        ("fail", "mock_issue"),
        ("fail", "builder_issue"),
        ("fail", "verification_gap"),
    ]
    assert verdicts[1].counts_against_builder
    assert not verdicts[0].counts_against_builder


@pytest.mark.anyio
async def test_no_verifier_means_not_judged_even_when_the_execution_succeeded() -> None:
    instance = FakeInstance(success=False)
    c = case(executionScenarios=[_scenario("slack digest")])
    (verdict,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=instance, models=_models(None))
    assert verdict.status == "not_judged"
    assert verdict.reason.startswith('no judge model configured (the mocked execution failed: Node "Post to Slack"')
    assert any(kind == "execute" for kind, _ in instance.calls)


@pytest.mark.anyio
async def test_verifier_silence_and_execution_errors_are_not_judged(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue("garbage", {"pass": True})
    c = case(executionScenarios=[_scenario("slack digest")])
    (silent,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=FakeInstance(), models=_models(url))
    assert (silent.status, silent.attribution) == ("not_judged", "verification_gap")
    assert silent.reason.startswith("verifier produced no result")
    broken = FakeInstance(fail_execute=True)
    (failed,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=broken, models=_models(url))
    assert (failed.status, failed.attribution) == ("not_judged", "framework_issue")
    assert "execution aborted" in failed.reason


@pytest.mark.anyio
async def test_a_failing_node_is_named_in_the_trace(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"reasoning": "The post failed.", "pass": False, "failureCategory": "builder_issue"})
    c = case(executionScenarios=[_scenario("slack digest")])
    instance = FakeInstance(success=False)
    (verdict,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=instance, models=_models(url))
    assert verdict.status == "fail"
    trace = fake.requests[0]["messages"][1]["content"][1]["text"]
    assert "### Node 'Post to Slack': mocked, 1 item(s) out\nError: no channel" in trace


@pytest.mark.anyio
async def test_a_framework_issue_of_the_mock_is_not_judged_and_never_reaches_the_verifier(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    """Regression: n8n answered ``success: false`` with "FRAMEWORK ISSUE: ..." (its mock model had no key)
    and the scenario was graded as if the workflow had failed."""
    fake, url = fake_openai
    issue = "FRAMEWORK ISSUE: Phase 1.5 pin data generation failed: the mock model is not configured"
    instance = FakeInstance(success=False, errors=[issue])
    c = case(executionScenarios=[_scenario("slack digest")])
    (verdict,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=instance, models=_models(url))
    assert (verdict.status, verdict.attribution) == ("not_judged", "framework_issue")
    assert issue in verdict.reason
    assert fake.requests == []


@pytest.mark.anyio
async def test_nothing_built_fails_and_no_client_is_not_judged() -> None:
    c = case(executionScenarios=[_scenario("slack digest")])
    (nothing,) = await run_scenarios(c, _record(), client=FakeInstance(), models=_models(None))
    assert (nothing.status, nothing.attribution) == ("fail", "builder_issue")
    (no_client,) = await run_scenarios(c, _record(SLACK_WORKFLOW), client=None, models=_models(None))
    assert no_client.status == "not_judged"


@pytest.mark.anyio
async def test_scenarios_sharing_a_table_never_overlap() -> None:
    instance = FakeInstance()
    shared = [_scenario(f"digest {i}", [_table("signups")]) for i in range(3)]
    own = [_scenario(f"other {i}", [_table(f"own{i}")]) for i in range(3)]
    c = case(executionScenarios=shared + own)
    record = _record(SLACK_WORKFLOW, tables=[{"id": "shared-id", "name": "signups"}])
    started = anyio.current_time()
    verdicts = await run_scenarios(c, record, client=instance, models=_models(None))
    elapsed = anyio.current_time() - started
    assert [v.unit for v in verdicts] == [f"scenario:{s['name']}" for s in shared + own]
    assert instance.max_running_per_table["shared-id"] == 1
    assert elapsed < 0.05 * 6  # the unshared ones ran alongside the serial chain
