"""The tools the builder agent calls (``AgentContext.call_tool``), scoped to one thread.

Each tool takes the JSON args the agent passed and returns a JSON dict, or raises :class:`ToolError`
with a message the agent (and the transcript) sees. Everything is scoped to the thread's project;
credentials to the thread's credential view (its allowlist when pinned). The list and the argument
shapes are the ones in ``agent/protocol.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.events import utc_now
from threadcase.demo_instance.resources import (
    check_column_name,
    folder_path,
    new_id,
    new_workflow_doc,
    test_credential,
    visible_credentials,
)
from threadcase.demo_instance.storage import Store
from threadcase.wire import DataTableColumn, WorkflowNode

__all__ = ["TOOL_SCHEMAS", "ToolError", "ToolScope", "run_tool"]


class ToolError(Exception):
    """A tool call failed; the message is shown to the agent as the ``tool-error``."""


@dataclass
class ToolScope:
    """What one tool call may see: the store, the calling thread and its owner."""

    store: Store
    thread: dict[str, Any]
    owner_id: str

    @property
    def project_id(self) -> str:
        """The thread's project."""
        return str(self.thread["projectId"])

    def visible(self, doc: dict[str, Any] | None) -> bool:
        """In this project, and not made by another conversation.

        Things another thread built or restored (``threadId``) stay out of this thread's view, so
        concurrent eval conversations in one project never find, edit or list each other's work;
        things made outside any conversation (REST, the harness's scenario tables) are shared, and a
        workflow or agent the user attached to this thread is visible to it.
        """
        return (
            doc is not None
            and doc.get("projectId") == self.project_id
            and (doc.get("threadId") in (None, self.thread["id"]) or doc.get("id") in self.thread.get("attached", []))
        )

    def listed(self, kind: str) -> list[dict[str, Any]]:
        """The documents of ``kind`` this thread may see, in order."""
        return [doc for doc in self.store.list(kind, self.project_id) if self.visible(doc)]


# The schema text a model would be shown; only its size matters (token accounting).
TOOL_SCHEMAS: dict[str, str] = {
    "list-workflows": "List workflows of the project. args: query?: string, folderPath?: string, folderId?: string",
    "get-workflow": "Get one workflow with nodes and connections. args: workflowId: string",
    "build-workflow": "Create a workflow, or with workflowId edit it in place. args: workflowId?: string,"
    " workflow: {name: string, nodes: Node[], connections: object}",
    "rename-workflow": "Rename a workflow. args: workflowId: string, name: string",
    "move-workflow": "Move a workflow into a folder (path segments created when missing)."
    " args: workflowId: string, folderId?: string, folderPath?: string",
    "delete-workflow": "Archive and delete a workflow. args: workflowId: string",
    "list-folders": "List folders of the project with their paths. args: none",
    "list-credentials": "List credentials available to this conversation. args: type?: string",
    "test-credential": "Test a credential's connection. args: credentialId: string",
    "list-data-tables": "List data tables of the project. args: none",
    "create-data-table": "Create a data table. args: name: string, columns: [{name, type}]",
    "build-agent": "Create an AI agent, or with agentId edit it. args: agentId?: string, config: object,"
    " skills: object",
    "get-agent": "Get an AI agent's config and skills. args: agentId: string",
}


def _str_arg(args: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None or value == "":
        if required:
            raise ToolError(f"missing required argument {name!r}")
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {value!r}")
    return value


def _workflow(scope: ToolScope, workflow_id: str) -> dict[str, Any]:
    doc = scope.store.get("workflows", workflow_id)
    if doc is None or not scope.visible(doc):
        raise ToolError(f"workflow {workflow_id!r} not found in this project")
    return doc


def _folder_by_path(scope: ToolScope, path: str, *, create: bool) -> str | None:
    parent: str | None = None
    folders = scope.listed("folders")
    for segment in [part.strip() for part in path.strip("/").split("/") if part.strip()]:
        match = next((f for f in folders if f["name"] == segment and f.get("parentFolderId") == parent), None)
        if match is None:
            if not create:
                raise ToolError(f"folder path {path!r} does not exist")
            match = {
                "id": new_id(),
                "name": segment,
                "parentFolderId": parent,
                "projectId": scope.project_id,
                "threadId": scope.thread["id"],
                "createdAt": utc_now(),
            }
            scope.store.insert("folders", str(match["id"]), match, scope=scope.project_id)
            folders.append(match)
        parent = str(match["id"])
    return parent


def _workflow_entry(scope: ToolScope, doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": doc["id"],
        "name": doc["name"],
        "parentFolderId": doc.get("parentFolderId"),
        "folderPath": folder_path(scope.store, doc.get("parentFolderId")),
    }


def _list_workflows(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    query = (_str_arg(args, "query", required=False) or "").lower()
    folder_id = _str_arg(args, "folderId", required=False)
    path = _str_arg(args, "folderPath", required=False)
    if path is not None:
        folder_id = _folder_by_path(scope, path, create=False)
    entries = []
    for doc in scope.listed("workflows"):
        if query and query not in str(doc["name"]).lower():
            continue
        if (path is not None or folder_id is not None) and doc.get("parentFolderId") != folder_id:
            continue
        entries.append(_workflow_entry(scope, doc))
    return {"workflows": entries}


def _get_workflow(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    return {"workflow": _workflow(scope, str(_str_arg(args, "workflowId")))}


def _validate_nodes(nodes: Any) -> list[dict[str, Any]]:
    if not isinstance(nodes, list):
        raise ToolError(f"workflow.nodes must be a list, got {type(nodes).__name__}")
    checked = []
    names: set[str] = set()
    for index, node in enumerate(nodes):
        try:
            parsed = WorkflowNode.model_validate(node)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ToolError(f"workflow.nodes[{index}].{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
        if parsed.name in names:
            raise ToolError(f"workflow.nodes: two nodes are named {parsed.name!r}; node names must be unique")
        names.add(parsed.name)
        out = parsed.model_dump(exclude_none=True)
        out.setdefault("id", new_id(12))
        checked.append(out)
    return checked


def _build_workflow(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    spec = args.get("workflow")
    if not isinstance(spec, dict):
        raise ToolError("missing required argument 'workflow' ({name, nodes, connections})")
    nodes = _validate_nodes(spec.get("nodes", []))
    connections = spec.get("connections") or {}
    if not isinstance(connections, dict):
        raise ToolError("workflow.connections must be an object")
    workflow_id = _str_arg(args, "workflowId", required=False)
    if workflow_id is not None:
        doc = _workflow(scope, workflow_id)
        doc.update(
            name=str(spec.get("name") or doc["name"]),
            nodes=nodes,
            connections=connections,
            versionId=new_id(12),
            updatedAt=utc_now(),
        )
    else:
        name = str(spec.get("name") or "My workflow")
        doc = new_workflow_doc(
            workflow_id=new_id(),
            project_id=scope.project_id,
            name=name,
            nodes=nodes,
            connections=connections,
            parent_folder_id=spec.get("parentFolderId"),
            extra={"threadId": scope.thread["id"]},
        )
    scope.store.put("workflows", doc["id"], doc, scope=scope.project_id)
    return {"workflowId": doc["id"], "workflow": doc}


def _rename_workflow(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    doc = _workflow(scope, str(_str_arg(args, "workflowId")))
    doc["name"] = _str_arg(args, "name")
    doc["updatedAt"] = utc_now()
    scope.store.put("workflows", doc["id"], doc, scope=scope.project_id)
    return {"workflowId": doc["id"], "name": doc["name"]}


def _move_workflow(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    doc = _workflow(scope, str(_str_arg(args, "workflowId")))
    folder_id = _str_arg(args, "folderId", required=False)
    path = _str_arg(args, "folderPath", required=False)
    if folder_id is not None:
        folder = scope.store.get("folders", folder_id)
        if folder is None or not scope.visible(folder):
            raise ToolError(f"folder {folder_id!r} not found in this project")
    elif path is not None:
        folder_id = _folder_by_path(scope, path, create=True)
    doc["parentFolderId"] = folder_id
    doc["updatedAt"] = utc_now()
    scope.store.put("workflows", doc["id"], doc, scope=scope.project_id)
    return {"workflowId": doc["id"], "parentFolderId": folder_id}


def _delete_workflow(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    doc = _workflow(scope, str(_str_arg(args, "workflowId")))
    scope.store.delete("workflows", doc["id"])
    return {"deleted": True}


def _list_folders(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "folders": [
            {
                "id": f["id"],
                "name": f["name"],
                "parentFolderId": f.get("parentFolderId"),
                "path": folder_path(scope.store, f["id"]),
            }
            for f in scope.listed("folders")
        ]
    }


def _list_credentials(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    wanted = _str_arg(args, "type", required=False)
    creds = visible_credentials(scope.store, scope.thread, scope.owner_id)
    return {
        "credentials": [
            {"id": c["id"], "name": c["name"], "type": c["type"]} for c in creds if wanted in (None, c["type"])
        ]
    }


def _test_credential(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    credential_id = _str_arg(args, "credentialId")
    doc = next(
        (c for c in visible_credentials(scope.store, scope.thread, scope.owner_id) if c["id"] == credential_id), None
    )
    if doc is None:
        raise ToolError(f"credential {credential_id!r} is not available in this conversation")
    success, message = test_credential(doc, scope.thread)
    return {"success": success, "message": message}


def _table_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return {"id": doc["id"], "name": doc["name"], "columns": doc.get("columns", [])}


def _list_data_tables(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    return {"dataTables": [_table_entry(doc) for doc in scope.listed("data_tables")]}


def _create_data_table(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    name = str(_str_arg(args, "name"))
    raw = args.get("columns") or []
    try:
        columns = [DataTableColumn.model_validate(c).model_dump() for c in raw]
    except ValidationError as exc:
        raise ToolError(f"columns: {exc.errors()[0]['msg']}") from None
    for column in columns:
        try:
            check_column_name(str(column["name"]))
        except ApiError as exc:  # the agent sees n8n's refusal as a tool error
            raise ToolError(exc.message) from None
    if any(doc["name"] == name for doc in scope.listed("data_tables")):
        raise ToolError(f"a data table named {name!r} already exists in this project")
    doc = {
        "id": new_id(),
        "name": name,
        "columns": columns,
        "projectId": scope.project_id,
        "threadId": scope.thread["id"],
        "createdAt": utc_now(),
    }
    scope.store.insert("data_tables", str(doc["id"]), doc, scope=scope.project_id)
    return {"table": _table_entry(doc)}


def _agent(scope: ToolScope, agent_id: str) -> dict[str, Any]:
    doc = scope.store.get("agents", agent_id)
    if doc is None or not scope.visible(doc):
        raise ToolError(f"agent {agent_id!r} not found in this project")
    return doc


def _build_agent(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    config = args.get("config")
    skills = args.get("skills") or {}
    if not isinstance(config, dict) or not isinstance(skills, dict):
        raise ToolError("build-agent needs config (object) and skills (object keyed by skill id)")
    agent_id = _str_arg(args, "agentId", required=False)
    if agent_id is not None:
        doc = _agent(scope, agent_id)
        doc.update(config=config, skills=skills, updatedAt=utc_now())
    else:
        doc = {
            "id": new_id(),
            "projectId": scope.project_id,
            "threadId": scope.thread["id"],
            "config": config,
            "skills": skills,
            "createdAt": utc_now(),
            "updatedAt": utc_now(),
        }
    scope.store.put("agents", doc["id"], doc, scope=scope.project_id)
    return {"agentId": doc["id"], "config": doc["config"], "skills": doc["skills"]}


def _get_agent(scope: ToolScope, args: dict[str, Any]) -> dict[str, Any]:
    doc = _agent(scope, str(_str_arg(args, "agentId")))
    return {"agentId": doc["id"], "config": doc["config"], "skills": doc.get("skills", {})}


_TOOLS: dict[str, Callable[[ToolScope, dict[str, Any]], dict[str, Any]]] = {
    "list-workflows": _list_workflows,
    "get-workflow": _get_workflow,
    "build-workflow": _build_workflow,
    "rename-workflow": _rename_workflow,
    "move-workflow": _move_workflow,
    "delete-workflow": _delete_workflow,
    "list-folders": _list_folders,
    "list-credentials": _list_credentials,
    "test-credential": _test_credential,
    "list-data-tables": _list_data_tables,
    "create-data-table": _create_data_table,
    "build-agent": _build_agent,
    "get-agent": _get_agent,
}
assert set(_TOOLS) == set(TOOL_SCHEMAS)


def run_tool(scope: ToolScope, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool in one transaction (a failing tool changes nothing)."""
    tool = _TOOLS.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}; available: {', '.join(sorted(_TOOLS))}")
    if not isinstance(args, dict):
        raise ToolError(f"tool arguments must be an object, got {type(args).__name__}")
    with scope.store.tx():
        return tool(scope, args)
