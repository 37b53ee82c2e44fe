"""Execution scenarios: run the built workflow with mocked external calls, then verify the criterion.

For each of the case's ``executionScenarios``: pick the built workflow it targets, reseed the
scenario's tables, call the instance's mocked execution with ``dataSetup`` as the mock hints, and
have the verifier model grade ``successCriteria`` against the execution trace. Scenarios that share a
table run one after another (each reseeds it); the others run concurrently.

Nothing here counts a scenario as passed without a verifier: with no judge model configured the
execution still runs (its outcome is in the reason, for a person to read) but the unit is not judged.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from threadcase._util.fanout import fan_out
from threadcase.case import schema
from threadcase.errors import RunError
from threadcase.grading._call import grading_call
from threadcase.grading.judge import render_artifacts_block
from threadcase.grading.prompts import (
    VERIFIER_RESULT_SCHEMA,
    VERIFIER_SYSTEM_PROMPT,
)
from threadcase.llm import RecordedAnswerMissing
from threadcase.models import ModelSettings, ModelUsage
from threadcase.records import RunRecord
from threadcase.verdicts import Attribution, UnitStatus, UnitVerdict
from threadcase.wire import (
    ExecuteWithMockRequest,
    ExecutionResult,
    RestoreThreadRequest,
    RestoreThreadResponse,
    Workflow,
)

__all__ = [
    "ScenarioClient",
    "declared_scenario_tables",
    "pick_workflow",
    "prepare_scenario_tables",
    "render_execution_trace",
    "run_scenarios",
    "scenario_groups",
]

TRACE_JSON_CAP = 6000
"""Longest JSON block per node output or request in the verifier's trace."""
MAX_REQUESTS_PER_NODE = 12
MAX_ITEMS_PER_NODE = 10
SCENARIO_CONCURRENCY = 4


class ScenarioClient(Protocol):
    """The part of :class:`~threadcase.instance.InstanceClient` scenarios use."""

    async def seed_table_rows(self, thread_id: str, table_id: str, rows: list[dict[str, Any]]) -> int: ...

    async def execute_with_mock(self, workflow_id: str, request: ExecuteWithMockRequest) -> ExecutionResult: ...

    async def restore_thread(self, request: RestoreThreadRequest) -> RestoreThreadResponse: ...

    async def list_data_tables(self, project_id: str) -> list[dict[str, Any]]: ...


class _VerifierAnswer(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    reasoning: str
    passed: bool = Field(alias="pass")
    failure_category: Attribution | None = Field(default=None, alias="failureCategory")


# --- routing ----------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]{3,}")
_STOP = frozenset({"the", "and", "for", "with", "from", "that", "this", "into", "when", "then", "are", "was", "has"})


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def _sub_workflow_ids(workflows: list[Workflow]) -> set[str]:
    """Workflows another one calls through an Execute Workflow node: rarely a scenario's entry point."""
    ids = {wf.id for wf in workflows}
    called: set[str] = set()
    for wf in workflows:
        for node in wf.nodes:
            if node.type.rsplit(".", 1)[-1].casefold() == "executeworkflow":
                blob = json.dumps(node.parameters, default=str)
                called |= {i for i in ids if i != wf.id and i in blob}
    return called


def pick_workflow(scenario: schema.ExecutionScenario, workflows: list[Workflow]) -> Workflow | None:
    """The built workflow the scenario most likely targets (token overlap with name and node names)."""
    if not workflows:
        return None
    wanted = _tokens(f"{scenario.name} {scenario.data_setup}")
    subs = _sub_workflow_ids(workflows)

    def score(wf: Workflow) -> float:
        have = _tokens(wf.name + " " + " ".join(f"{n.name} {n.type.rsplit('.', 1)[-1]}" for n in wf.nodes))
        return len(wanted & have) - (0.5 if wf.id in subs else 0.0)

    return max(workflows, key=score)  # max keeps the first of equals: the order the agent built them in


def scenario_groups(scenarios: list[schema.ExecutionScenario]) -> list[list[int]]:
    """Scenario indexes grouped so that scenarios sharing a table (by id or name) are in one group."""
    parent = list(range(len(scenarios)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, scenario in enumerate(scenarios):
        for table in scenario.seed_data_tables:
            for key in (f"id:{table.id}", f"name:{table.name}"):
                if key in owner:
                    parent[find(i)] = find(owner[key])
                else:
                    owner[key] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(scenarios)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


# --- tables -----------------------------------------------------------------------------------


def _match_table(tables: list[dict[str, Any]], table: schema.ScenarioTable) -> str | None:
    for found in tables:
        if str(found.get("id")) == table.id:
            return table.id
    for found in tables:
        name = str(found.get("name", ""))
        # A harness may uniquify scenario table names per run: "orders" may exist as "orders [run abc]".
        if (name == table.name or name.startswith(table.name + " ")) and found.get("id"):
            return str(found["id"])
    return None


def _table_request(tables: list[schema.ScenarioTable]) -> list[dict[str, Any]]:
    return [{"id": t.id, "name": t.name, "columns": [c.model_dump() for c in t.columns]} for t in tables]


def declared_scenario_tables(case: schema.Case) -> list[schema.ScenarioTable]:
    """The tables the case's execution scenarios seed, each once (by id, first declaration wins)."""
    unique: dict[str, schema.ScenarioTable] = {}
    for scenario in case.execution_scenarios:
        for table in scenario.seed_data_tables:
            unique.setdefault(table.id, table)
    return list(unique.values())


async def prepare_scenario_tables(client: ScenarioClient, case: schema.Case, *, thread_id: str) -> list[str]:
    """Create the case's scenario tables, empty, before the build turn; returns the created ids.

    The agent must find a scenario's table while it builds, so it can bind the real id: created only
    at grading time, the table would exist but the workflow would point at nothing. Rows are seeded per
    scenario just before it runs. Call it before the conversation (the runner's job); the caller
    deletes the returned ids at cleanup.
    """
    tables = declared_scenario_tables(case)
    if not tables:
        return []
    created = await client.restore_thread(RestoreThreadRequest(threadId=thread_id, dataTables=_table_request(tables)))
    return list(created.dataTableIds)


async def _seed_tables(
    client: ScenarioClient, record: RunRecord, workflow: Workflow, scenario: schema.ExecutionScenario
) -> list[str]:
    ids = []
    listed: list[dict[str, Any]] | None = None
    for table in scenario.seed_data_tables:
        table_id = _match_table(record.artifacts.data_tables, table)
        if table_id is None and workflow.projectId:
            if listed is None:
                listed = await client.list_data_tables(workflow.projectId)
            table_id = _match_table(listed, table)
        if table_id is None:
            # Nobody created it before the build: create it now so the scenario can at least run.
            created = await client.restore_thread(
                RestoreThreadRequest(threadId=record.thread_id, dataTables=_table_request([table]))
            )
            table_id = created.dataTableIds[0] if created.dataTableIds else table.id
        await client.seed_table_rows(record.thread_id, table_id, [dict(row) for row in table.rows])
        ids.append(table_id)
    return ids


# --- trace ------------------------------------------------------------------------------------


def _cap(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= TRACE_JSON_CAP else text[:TRACE_JSON_CAP] + " … (truncated)"


def render_execution_trace(scenario: schema.ExecutionScenario, workflow: Workflow, result: ExecutionResult) -> str:
    """The scenario and what the mocked execution did, node by node, for the verifier."""
    lines = [
        f"## Scenario: {scenario.name}",
        f"Description: {scenario.description or '(none)'}",
        f"Data setup (the mock's hints): {scenario.data_setup or '(none)'}",
        f"Success criterion: {scenario.success_criteria or '(none)'}",
        *([f"Precondition: {scenario.requires}"] if scenario.requires else []),
        "",
        f"## Execution of workflow {workflow.name!r}",
        f"Success: {result.success}",
        "Errors: " + ("; ".join(result.errors) if result.errors else "(none)"),
    ]
    if result.mockedCredentials:
        lines.append("Mocked credentials: " + ", ".join(c.describe() for c in result.mockedCredentials))
    ran = set(result.nodeResults)
    for node in workflow.nodes:
        if node.name not in ran:
            lines.append(f"### Node {node.name!r} ({node.type}): did not run")
    for name, node_result in result.nodeResults.items():
        lines.append(f"### Node {name!r}: {node_result.executionMode}, {node_result.outputCount} item(s) out")
        node_errors = [e for e in result.errors if e.startswith(f'Node "{name}":')]
        if node_errors:
            lines.append("Error: " + "; ".join(e.split(":", 1)[1].strip() for e in node_errors))
        items = node_result.items
        if items:
            lines.append("Output: " + _cap(items[:MAX_ITEMS_PER_NODE]))
        for req in node_result.interceptedRequests[:MAX_REQUESTS_PER_NODE]:
            body, answer = _cap(req.requestBody), _cap(req.mockResponse)
            lines.append(f"Request {req.method} {req.url} body: {body} -> mock answered: {answer}")
    return "\n".join(lines)


# --- one scenario -----------------------------------------------------------------------------


def _unit(
    scenario: schema.ExecutionScenario, status: UnitStatus, reason: str, attribution: Attribution | None
) -> UnitVerdict:
    return UnitVerdict(
        unit=f"scenario:{scenario.name}",
        kind="scenario",
        label=scenario.success_criteria or scenario.description or scenario.name,
        status=status,
        reason=reason,
        attribution=attribution,
    )


def _execution_summary(result: ExecutionResult) -> str:
    if result.success:
        return f"the mocked execution succeeded ({len(result.nodeResults)} nodes ran)"
    return "the mocked execution failed: " + ("; ".join(result.errors)[:300] or "no error message")


async def _run_one(
    scenario: schema.ExecutionScenario,
    record: RunRecord,
    *,
    client: ScenarioClient,
    models: ModelSettings,
    timeout_ms: int,
    usage: ModelUsage,
) -> UnitVerdict:
    workflow = pick_workflow(scenario, record.artifacts.workflows)
    if workflow is None:
        return _unit(scenario, "fail", "no workflow was built, so the scenario could not run", "builder_issue")
    try:
        table_ids = await _seed_tables(client, record, workflow, scenario)
        result = await client.execute_with_mock(
            workflow.id,
            ExecuteWithMockRequest(
                scenarioHints=scenario.data_setup[:2000] or None,
                timeoutMs=timeout_ms,
                seededDataTableIds=table_ids or None,
            ),
        )
    except RunError as exc:
        return _unit(scenario, "not_judged", f"mocked execution of {workflow.name!r} failed: {exc}", "framework_issue")
    if result.framework_issue is not None:
        # The mock machinery itself failed (n8n: "FRAMEWORK ISSUE: ..."): the workflow never ran.
        return _unit(
            scenario,
            "not_judged",
            f"mocked execution of {workflow.name!r}: {result.framework_issue}",
            "framework_issue",
        )
    if not models.verifier_enabled:
        return _unit(
            scenario, "not_judged", f"no judge model configured ({_execution_summary(result)})", "framework_issue"
        )
    try:
        call = await grading_call(
            models,
            "verifier",
            case=f"case {record.case_slug!r} iteration {record.iteration} scenario {scenario.name!r}",
            system=VERIFIER_SYSTEM_PROMPT,
            user_parts=[render_artifacts_block(record), render_execution_trace(scenario, workflow, result)],
            schema_name="scenario_verdict",
            schema=VERIFIER_RESULT_SCHEMA,
            parse=_VerifierAnswer.model_validate,
        )
    except RecordedAnswerMissing as exc:
        return _unit(scenario, "not_judged", str(exc), "framework_issue")
    usage.add(call.usage)
    answer = call.value
    if answer is None or not answer.reasoning.strip():
        why = f" ({call.errors[-1]})" if call.errors else ""
        return _unit(scenario, "not_judged", f"verifier produced no result{why}", "verification_gap")
    if answer.passed:
        return _unit(scenario, "pass", answer.reasoning.strip(), None)
    # A failure the verifier would not attribute is not held against the builder.
    return _unit(scenario, "fail", answer.reasoning.strip(), answer.failure_category or "verification_gap")


async def run_scenarios(
    case: schema.Case,
    record: RunRecord,
    *,
    client: ScenarioClient | None,
    models: ModelSettings,
    timeout_ms: int = 120_000,
    usage: ModelUsage | None = None,
) -> list[UnitVerdict]:
    """One verdict per execution scenario, in the case's order. Never raises for a run failure.

    ``usage``: where the verifier's token usage is added up (None: not kept).
    """
    total = usage if usage is not None else ModelUsage()
    scenarios = case.execution_scenarios
    if not scenarios:
        return []
    if client is None:
        return [_unit(s, "not_judged", "no instance to execute the scenario on", "framework_issue") for s in scenarios]
    verdicts: list[UnitVerdict | None] = [None] * len(scenarios)

    async def _group(indexes: list[int]) -> None:
        for i in indexes:  # serial: these scenarios reseed the same table
            verdicts[i] = await _run_one(
                scenarios[i], record, client=client, models=models, timeout_ms=timeout_ms, usage=total
            )

    await fan_out(scenario_groups(scenarios), _group, limit=SCENARIO_CONCURRENCY)
    return [v for v in verdicts if v is not None]
