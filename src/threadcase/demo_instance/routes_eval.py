"""Eval-only routes (owner only; the thread must be the caller's): restore a seeded thread, pin the
credential view, seed scenario table rows, mocked execution, and the memory premise."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from threadcase.demo_instance.apierror import ApiError, validation_message
from threadcase.demo_instance.events import utc_now
from threadcase.demo_instance.mock_exec import execute_with_mock
from threadcase.demo_instance.platform import Platform, ok, ok_plain, parse_body
from threadcase.demo_instance.resources import (
    AGENT_MODEL,
    check_column_name,
    new_id,
    new_workflow_doc,
    visible_credentials,
)
from threadcase.wire import (
    ExecuteWithMockRequest,
    RestoreThreadRequest,
    SeedDataTableRowsRequest,
    ThreadCredentialAllowlistRequest,
    WorkflowNode,
)

__all__ = ["router"]

router = APIRouter(prefix="/rest/instance-ai/eval")


def _platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def _bad(path: str, message: str, value: Any = None) -> ApiError:
    shown = "" if value is None else f" (got {value!r})"
    return ApiError(422, f"invalid restore request: {path}: {message}{shown}")


def _str_field(item: dict[str, Any], key: str, path: str, *, lo: int = 1, hi: int = 255) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not lo <= len(value) <= hi:
        raise _bad(f"{path}.{key}", f"must be a string of {lo}-{hi} characters", value)
    return value


def _blank_credentials(value: Any) -> Any:
    """An agent config with every credential id blanked (seeds must not carry live credential ids)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("credentialId", "credential") and isinstance(item, str):
                out[key] = ""
            elif key == "credentials" and isinstance(item, dict):
                out[key] = {k: ({**v, "id": ""} if isinstance(v, dict) else "") for k, v in item.items()}
            else:
                out[key] = _blank_credentials(item)
        return out
    if isinstance(value, list):
        return [_blank_credentials(item) for item in value]
    return value


def _resolve_node_credentials(nodes: list[dict[str, Any]], visible: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seed node credentials resolved within the thread's credential view (n8n, facts §4.3).

    A seed carries the credential ids of the instance it came from; each is replaced by the thread's
    visible credential of the same type (same name first, else the only one of that type), so a
    concurrent case's same-named credential is never picked. No match: the credential is dropped and
    the node shows as needing setup, never a dangling id.
    """
    by_type: dict[str, list[dict[str, Any]]] = {}
    for doc in visible:
        by_type.setdefault(str(doc.get("type")), []).append(doc)
    out: list[dict[str, Any]] = []
    for node in nodes:
        creds = node.get("credentials")
        if not isinstance(creds, dict):
            out.append(node)
            continue
        resolved: dict[str, Any] = {}
        for cred_type, ref in creds.items():
            candidates = by_type.get(str(cred_type), [])
            name = ref.get("name") if isinstance(ref, dict) else None
            match = next((c for c in candidates if name is not None and c.get("name") == name), None)
            if match is None and len(candidates) == 1:
                match = candidates[0]
            if match is not None:
                resolved[cred_type] = {"id": match["id"], "name": match["name"]}
        node = {k: v for k, v in node.items() if k != "credentials"}
        if resolved:
            node["credentials"] = resolved
        out.append(node)
    return out


def _ordered_folders(folders: list[dict[str, Any]]) -> list[int]:
    """Indexes of ``folders`` with every parent before its children (cycles are a 422)."""
    ids = {f["id"]: i for i, f in enumerate(folders)}
    order: list[int] = []
    state: dict[int, int] = {}

    def visit(index: int, trail: list[str]) -> None:
        if state.get(index) == 2:
            return
        if state.get(index) == 1:
            raise _bad("folders", f"parentFolderId cycle: {' -> '.join([*trail, folders[index]['id']])}")
        state[index] = 1
        parent = folders[index].get("parentFolderId")
        if parent is not None:
            visit(ids[parent], [*trail, folders[index]["id"]])
        state[index] = 2
        order.append(index)

    for index in range(len(folders)):
        visit(index, [])
    return order


@router.post("/restore-thread")
async def restore_thread(request: Request) -> JSONResponse:
    """Restore a seed: folders, tables, workflows, agents, then messages; all or nothing."""
    platform = _platform(request)
    user = platform.owner(request)
    body = await parse_body(request, RestoreThreadRequest, "restore request")
    thread = platform.thread_for(user, body.threadId)
    project_id = str(thread["projectId"])
    store = platform.store

    # --- validate everything before touching storage --------------------------------------------
    folder_ids: dict[str, str] = {}
    for i, folder in enumerate(body.folders):
        fid = _str_field(folder, "id", f"folders[{i}]", lo=8, hi=64)
        name = _str_field(folder, "name", f"folders[{i}]")
        if "/" in name or name != name.strip():
            raise _bad(f"folders[{i}].name", "must be trimmed and contain no '/'", name)
        if fid in folder_ids:
            raise _bad(f"folders[{i}].id", "duplicate seed folder id", fid)
        folder_ids[fid] = new_id()
    for i, folder in enumerate(body.folders):
        parent = folder.get("parentFolderId")
        if parent is not None and parent not in folder_ids:
            raise _bad(f"folders[{i}].parentFolderId", "names no folder of this seed", parent)
    folder_order = _ordered_folders(body.folders)

    table_ids: dict[str, str] = {}
    for i, table in enumerate(body.dataTables):
        tid = _str_field(table, "id", f"dataTables[{i}]", lo=8, hi=64)
        _str_field(table, "name", f"dataTables[{i}]", hi=128)
        columns = table.get("columns", [])
        if not isinstance(columns, list) or not all(
            isinstance(c, dict)
            and isinstance(c.get("name"), str)
            and c.get("type", "string") in {"string", "number", "boolean", "date"}
            for c in columns
        ):
            raise _bad(
                f"dataTables[{i}].columns", "must be a list of {name, type: string|number|boolean|date}", columns
            )
        for column in columns:
            check_column_name(str(column["name"]))
        if tid in table_ids:
            raise _bad(f"dataTables[{i}].id", "duplicate data table id", tid)
        table_ids[tid] = new_id()

    seen_workflows: set[str] = set()
    for i, workflow in enumerate(body.workflows):
        wid = _str_field(workflow, "id", f"workflows[{i}]", hi=64)
        _str_field(workflow, "name", f"workflows[{i}]")
        nodes = workflow.get("nodes", [])
        if not isinstance(nodes, list) or len(nodes) > 500 or not all(isinstance(n, dict) for n in nodes):
            raise _bad(f"workflows[{i}].nodes", "must be a list of at most 500 node objects")
        for j, node in enumerate(nodes):
            # The builder and mocked execution read every node's name, type and parameters.
            try:
                WorkflowNode.model_validate(node)
            except ValidationError as exc:
                raise ApiError(422, validation_message(exc, f"restore request: workflows[{i}].nodes[{j}]")) from None
        if not isinstance(workflow.get("connections", {}), dict):
            raise _bad(f"workflows[{i}].connections", "must be an object")
        parent = workflow.get("parentFolderId")
        if parent is not None and parent not in folder_ids:
            existing = store.get("folders", str(parent))
            if existing is None or existing.get("projectId") != project_id:
                raise _bad(f"workflows[{i}].parentFolderId", "names no folder of this seed or project", parent)
        if wid in seen_workflows:
            raise _bad(f"workflows[{i}].id", "duplicate workflow id", wid)
        seen_workflows.add(wid)

    seen_agents: set[str] = set()
    for i, agent in enumerate(body.agents):
        aid = _str_field(agent, "id", f"agents[{i}]", lo=8, hi=64)
        if not isinstance(agent.get("config"), dict):
            raise _bad(f"agents[{i}].config", "must be an object (the agent's JSON config)")
        model = agent["config"].get("model")
        if not isinstance(model, str) or (model and not AGENT_MODEL.fullmatch(model)):
            # n8n's own (zod) answer for a model that is not "provider/model-name".
            raise ApiError(
                400,
                'Model must be "provider/model-name" format (e.g. "anthropic/claude-sonnet-4-5" or '
                f'"openrouter/amazon/nova-micro-v1") (agents[{i}].config.model: {model!r})',
            )
        for key, kind in (("name", str), ("instructions", str)):
            if not isinstance(agent["config"].get(key), kind):
                raise _bad(f"agents[{i}].config.{key}", "is required (a string)", agent["config"].get(key))
        if not isinstance(agent.get("skills", {}), dict):
            raise _bad(f"agents[{i}].skills", "must be an object keyed by skill id")
        if aid in seen_agents or aid in seen_workflows:
            raise _bad(f"agents[{i}].id", "duplicate artifact id", aid)
        seen_agents.add(aid)

    for i, message in enumerate(body.messages):
        if not isinstance(message.get("id"), str) or not message["id"]:
            raise _bad(f"messages[{i}].id", "every message needs a string id", message.get("id"))
        if not isinstance(message.get("content", []), list):
            raise _bad(f"messages[{i}].content", "must be a list of content blocks", message.get("content"))
        if message.get("type") != "custom" and message.get("role") not in ("user", "assistant", "system"):
            raise _bad(f"messages[{i}].role", "must be user, assistant or system", message.get("role"))

    taken = [wid for wid in seen_workflows if store.get("workflows", wid) is not None]
    taken += [aid for aid in seen_agents if store.get("agents", aid) is not None]
    if taken:
        raise ApiError(
            409, f"restore refused: ids already exist on this instance: {', '.join(sorted(taken))}; nothing was created"
        )

    # --- create, all or nothing ---------------------------------------------------------------
    now = utc_now()
    visible = visible_credentials(store, thread, user.id)
    try:
        with store.tx():
            for index in folder_order:
                folder = body.folders[index]
                parent = folder.get("parentFolderId")
                doc = {
                    "id": folder_ids[folder["id"]],
                    "name": folder["name"],
                    "parentFolderId": folder_ids[parent] if parent else None,
                    "projectId": project_id,
                    "threadId": thread["id"],
                    "createdAt": now,
                }
                store.insert("folders", str(doc["id"]), doc, scope=project_id)
            for table in body.dataTables:
                doc = {
                    "id": table_ids[table["id"]],
                    "name": table["name"],
                    "columns": [{"name": c["name"], "type": c.get("type", "string")} for c in table.get("columns", [])],
                    "projectId": project_id,
                    "threadId": thread["id"],
                    "createdAt": now,
                }
                store.insert("data_tables", str(doc["id"]), doc, scope=project_id)
            for workflow in body.workflows:
                nodes_json = json.dumps(workflow.get("nodes", []))
                for old, new in sorted(table_ids.items(), key=lambda kv: -len(kv[0])):
                    nodes_json = re.sub(re.escape(old), new, nodes_json)
                parent = workflow.get("parentFolderId")
                doc = new_workflow_doc(
                    workflow_id=workflow["id"],
                    project_id=project_id,
                    name=workflow["name"],
                    nodes=_resolve_node_credentials(json.loads(nodes_json), visible),
                    connections=workflow.get("connections", {}),
                    parent_folder_id=folder_ids.get(parent, parent) if parent else None,
                    active=bool(workflow.get("published")),
                    extra={"threadId": thread["id"], "seeded": True},
                )
                store.insert("workflows", str(doc["id"]), doc, scope=project_id)
            for agent in body.agents:
                doc = {
                    "id": agent["id"],
                    "projectId": project_id,
                    "threadId": thread["id"],
                    "config": _blank_credentials(agent["config"]),
                    "skills": agent.get("skills", {}),
                    "createdAt": now,
                    "updatedAt": now,
                }
                store.insert("agents", str(doc["id"]), doc, scope=project_id)
            if body.agents:
                thread["boundAgentId"] = body.agents[-1]["id"]
                store.put("threads", thread["id"], thread, scope=user.id)
            for message in body.messages:
                doc = {**message, "seeded": True}
                doc.setdefault("createdAt", now)
                doc.setdefault("content", [])
                store.insert("messages", str(message["id"]), doc, scope=thread["id"])
    except sqlite3.IntegrityError as exc:
        raise ApiError(409, f"restore failed and was rolled back, nothing was created: {exc}") from None
    return ok(
        {
            "ok": True,
            "threadId": thread["id"],
            "restored": len(body.messages),
            "workflowIds": [w["id"] for w in body.workflows],
            "dataTableIds": [table_ids[t["id"]] for t in body.dataTables],
            "agentIds": [a["id"] for a in body.agents],
            "folderIds": [folder_ids[f["id"]] for f in body.folders],
        }
    )


@router.post("/thread-credential-allowlist")
async def credential_allowlist(request: Request) -> JSONResponse:
    """Pin the thread's credential view and the ids whose connection test passes."""
    platform = _platform(request)
    user = platform.owner(request)
    body = await parse_body(request, ThreadCredentialAllowlistRequest, "allowlist request", direct=True)
    with platform.store.tx():
        thread = platform.thread_for(user, body.threadId)
        allowed = list(dict.fromkeys(body.credentialIds))
        for credential_id in allowed:
            doc = platform.store.get("credentials", credential_id)
            if doc is None or doc.get("ownerId") != user.id:
                raise ApiError(404, f"credential {credential_id!r} not found; create it before pinning it")
        # Bypass is honoured only for allowlisted ids, as on n8n.
        thread["allowlist"] = allowed
        thread["bypass"] = [c for c in dict.fromkeys(body.bypassCredentialTest or []) if c in set(allowed)]
        thread["evalPinned"] = True
        platform.store.put("threads", thread["id"], thread, scope=user.id)
    return ok_plain({"ok": True})


@router.post("/seed-data-table-rows")
async def seed_rows(request: Request) -> JSONResponse:
    """Replace a scenario table's rows."""
    platform = _platform(request)
    user = platform.owner(request)
    body = await parse_body(request, SeedDataTableRowsRequest, "seed rows request")
    thread = platform.thread_for(user, body.threadId)
    table = platform.store.get("data_tables", body.tableId)
    if table is None or table.get("projectId") != thread["projectId"]:
        raise ApiError(404, f"data table {body.tableId!r} not found in the thread's project")
    columns = {c["name"] for c in table.get("columns", [])}
    for index, row in enumerate(body.rows):
        unknown = sorted(set(row) - columns)
        if unknown:
            raise ApiError(
                422,
                f"invalid seed rows request: rows[{index}] has unknown column {unknown[0]!r};"
                f" columns: {sorted(columns)}",
            )
    with platform.store.tx():
        platform.store.delete_scope("table_rows", body.tableId)
        for index, row in enumerate(body.rows):
            platform.store.insert("table_rows", f"{index:07d}", {"id": index + 1, **row}, scope=body.tableId)
    return ok({"ok": True, "tableId": body.tableId, "rowCount": len(body.rows)})


@router.post("/execute-with-llm-mock/{workflow_id}")
async def execute_mock(workflow_id: str, request: Request) -> JSONResponse:
    """Run a workflow with mocked nodes and return n8n's execution result shape."""
    platform = _platform(request)
    user = platform.owner(request)
    body = await parse_body(request, ExecuteWithMockRequest, "mocked execution request")
    workflow = platform.store.get("workflows", workflow_id)
    if workflow is None:
        raise ApiError(404, f"workflow {workflow_id!r} not found")
    platform.project_for(user, str(workflow["projectId"]))
    result = execute_with_mock(platform.store, workflow, body)
    return ok(result)


@router.get("/threads/{thread_id}/memory")
async def thread_memory(thread_id: str, request: Request) -> JSONResponse:
    """The thread's observation rows and cursor (the compaction premise)."""
    platform = _platform(request)
    user = platform.owner(request)
    platform.thread_for(user, thread_id)
    return ok(
        {
            "observations": platform.store.list("observations", thread_id),
            "cursor": platform.store.get("cursors", thread_id),
        }
    )
