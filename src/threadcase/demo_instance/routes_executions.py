"""Running a saved workflow for real, and reading its executions (n8n's ``/rest/workflows/:id/run``).

What the simulated user does when a case sets ``allowUserExecution``: run a workflow the agent saved,
"normally, without mocks". The demo has no network, so the run uses the demo's executor
(:mod:`.mock_exec`): logic nodes (Set, IF, Data Table, NoOp, Merge) really run, action nodes answer
their per-type default. Like n8n's own rule for user execution, only credential-free workflows started
by a manual or schedule trigger run; anything else is refused with a 400 that says why.

- ``POST /rest/workflows/:id/run`` ``{triggerToStartFrom: {name}}`` -> ``{executionId}`` (the
  execution is finished when the answer comes; without ``triggerToStartFrom`` n8n's 400 "To run the
  workflow manually, specify either a trigger to start from or a destination node."); instance owner
  or the workflow's project member (403 otherwise), 404 unknown
- ``GET /rest/executions`` (n8n's ``?filter={"workflowId": ...}``; ``?workflowId=`` is ignored, as there) ->
  ``{count, estimated, results: [summary]}``, newest first
- ``GET /rest/executions/:id`` -> the summary plus ``data.resultData`` (runData per node, error,
  lastNodeExecuted) and the workflow as it ran (``workflowData``)
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.events import utc_now
from threadcase.demo_instance.mock_exec import CREDENTIAL_TYPES, execute_with_mock
from threadcase.demo_instance.platform import Platform, User, ok, parse_body
from threadcase.wire import ExecuteWithMockRequest

__all__ = ["RUNNABLE_TRIGGERS", "router"]

router = APIRouter(prefix="/rest")

RUNNABLE_TRIGGERS = frozenset(
    {
        "n8n-nodes-base.manualTrigger",
        "n8n-nodes-base.scheduleTrigger",
        # The schedule trigger's predecessors, still found in older workflows.
        "n8n-nodes-base.cron",
        "n8n-nodes-base.interval",
    }
)
"""Trigger types a user may run a workflow from (n8n: "credential-free manual or schedule only")."""


class _TriggerToStartFrom(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)


class _RunBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    triggerToStartFrom: _TriggerToStartFrom | None = None


def _platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def _may_use(platform: Platform, user: User, project_id: Any) -> bool:
    """The instance owner may use every project; anyone else only the projects they belong to."""
    if user.is_owner:
        return True
    project = platform.store.get("projects", str(project_id)) if project_id else None
    return project is not None and project.get("ownerId") == user.id


def _is_trigger(node: dict[str, Any]) -> bool:
    # The same notion of "trigger" as the executor's walk, so the refusal and the run agree.
    node_type = str(node.get("type", "")).lower()
    return "trigger" in node_type or node_type.endswith(".webhook") or node.get("type") in RUNNABLE_TRIGGERS


def _start_trigger(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    """The named trigger the run starts from (400 if the workflow has no such enabled trigger)."""
    nodes = [n for n in workflow.get("nodes", []) if isinstance(n, dict) and not n.get("disabled")]
    triggers = [n for n in nodes if _is_trigger(n)]
    listed = ", ".join(f"{n.get('name')!r} ({n.get('type')})" for n in triggers) or "none"
    label = f"workflow {workflow.get('name')!r}"
    chosen = next((n for n in triggers if n.get("name") == name), None)
    if chosen is None:
        raise ApiError(400, f"{label} has no enabled trigger named {name!r} (triggers: {listed})")
    if chosen.get("type") not in RUNNABLE_TRIGGERS:
        raise ApiError(
            400,
            f"{label} cannot be run from trigger {chosen.get('name')!r} ({chosen.get('type')}): "
            "only manual or schedule triggers run for a user",
        )
    return chosen


def _refuse_credentials(workflow: dict[str, Any]) -> None:
    for node in workflow.get("nodes", []):
        if not isinstance(node, dict) or node.get("disabled"):
            continue
        needed = sorted(set(node.get("credentials") or {}) | {CREDENTIAL_TYPES.get(str(node.get("type")), "")} - {""})
        if needed:
            raise ApiError(
                400,
                f"workflow {workflow.get('name')!r} cannot be run by a user: node {node.get('name')!r} needs a "
                f"credential ({', '.join(needed)}); only credential-free manual or schedule workflows run",
            )


def _run_data(results: dict[str, Any], errors: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The executor's node results in n8n's ``runData`` shape: node -> [task {status, data.main, error?}]."""
    run_data: dict[str, list[dict[str, Any]]] = {}
    for name, result in results.items():
        failure = next((e.split(":", 1)[1].strip() for e in errors if e.startswith(f'Node "{name}":')), None)
        task: dict[str, Any] = {
            "startTime": result.get("startTime"),
            "executionStatus": "error" if failure else "success",
            "data": {"main": (result.get("outputs") or {}).get("main", [])},
        }
        if failure:
            task["error"] = {"message": failure}
        run_data[name] = [task]
    return run_data


def _summary(execution: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in execution.items() if k not in ("data", "workflowData")}


@router.post("/workflows/{workflow_id}/run")
async def run_workflow(workflow_id: str, request: Request) -> JSONResponse:
    """Run a credential-free manual/schedule workflow now (no mocks, no network); answers its executionId."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _RunBody, "workflow run")
    workflow = platform.store.get("workflows", workflow_id)
    if workflow is None:
        raise ApiError(404, f"workflow {workflow_id!r} not found")
    if not _may_use(platform, user, workflow.get("projectId")):
        raise ApiError(403, f"workflow {workflow_id!r} belongs to a project you are not a member of")
    if workflow.get("isArchived"):
        raise ApiError(400, f"workflow {workflow.get('name')!r} is archived; unarchive it before running it")
    if body.triggerToStartFrom is None:
        # n8n's own answer: a manual run names where it starts.
        raise ApiError(
            400, "To run the workflow manually, specify either a trigger to start from or a destination node."
        )
    trigger = _start_trigger(workflow, body.triggerToStartFrom.name)
    _refuse_credentials(workflow)
    # The executor starts at the first trigger it finds: hand it the workflow with only the chosen one.
    runnable = dict(workflow)
    runnable["nodes"] = [n for n in workflow.get("nodes", []) if n is trigger or not _is_trigger(n)]
    started = utc_now()
    result = execute_with_mock(platform.store, runnable, ExecuteWithMockRequest())
    stopped = utc_now()
    execution_id = str(platform.store.count("executions") + 1)
    while platform.store.get("executions", execution_id) is not None:  # ids stay unique after deletions
        execution_id = str(int(execution_id) + 1)
    errors = [str(e) for e in result.get("errors", [])]
    results = result.get("nodeResults", {})
    last = next(reversed(results), None) if results else None
    result_data: dict[str, Any] = {"runData": _run_data(results, errors), "lastNodeExecuted": last}
    if errors:
        result_data["error"] = {"message": errors[0]}
    success = bool(result.get("success"))
    execution = {
        "id": execution_id,
        "workflowId": workflow_id,
        "workflowName": workflow.get("name"),
        "mode": "manual",
        "status": "success" if success else "error",
        "finished": success,
        "retryOf": None,
        "retrySuccessId": None,
        "startedAt": started,
        "stoppedAt": stopped,
        "createdAt": started,
        "triggerNode": trigger.get("name"),
        "data": {"resultData": result_data},
        "workflowData": {k: workflow.get(k) for k in ("id", "name", "nodes", "connections", "versionId")},
    }
    platform.store.insert("executions", execution_id, execution, scope=workflow_id)
    return ok({"executionId": execution_id})


def _visible(platform: Platform, user: User, execution: dict[str, Any]) -> bool:
    workflow = platform.store.get("workflows", str(execution.get("workflowId")))
    project = workflow.get("projectId") if workflow else None
    return _may_use(platform, user, project)


@router.get("/executions")
async def list_executions(request: Request) -> JSONResponse:
    """Executions the caller may see, newest first; ``filter={"workflowId": ...}`` narrows."""
    platform = _platform(request)
    user = platform.user(request)
    # As n8n: only ``filter`` narrows (a ``?workflowId=`` parameter is ignored, every execution comes back).
    workflow_id: str | None = None
    raw_filter = request.query_params.get("filter")
    if raw_filter:
        try:
            parsed = json.loads(raw_filter)
        except json.JSONDecodeError:
            raise ApiError(422, f"query parameter filter must be a JSON object, got {raw_filter!r}") from None
        if not isinstance(parsed, dict):
            raise ApiError(422, f"query parameter filter must be a JSON object, got {raw_filter!r}")
        workflow_id = str(parsed["workflowId"]) if parsed.get("workflowId") else None
    rows = platform.store.list("executions", workflow_id) if workflow_id else platform.store.list("executions")
    results = [_summary(e) for e in reversed(rows) if _visible(platform, user, e)]
    return ok({"count": len(results), "estimated": False, "results": results})


@router.get("/executions/{execution_id}")
async def get_execution(execution_id: str, request: Request) -> JSONResponse:
    """One execution with its run data (per-node outputs and the error, if any)."""
    platform = _platform(request)
    user = platform.user(request)
    execution = platform.store.get("executions", execution_id)
    if execution is None or not _visible(platform, user, execution):
        raise ApiError(404, f"execution {execution_id!r} not found")
    return ok(execution)
