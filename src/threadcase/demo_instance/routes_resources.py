"""Resource routes: projects, workflows, credentials (+ test), folders, data tables, agents.

Paginated lists (``take``/``skip``) answer ``{"data": [...], "count": total}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.events import utc_now
from threadcase.demo_instance.platform import Platform, User, ok, parse_body
from threadcase.demo_instance.resources import (
    check_column_name,
    credential_summary,
    new_id,
    new_workflow_doc,
    test_credential,
)
from threadcase.wire import DataTableColumn, WorkflowNode

__all__ = ["router"]

router = APIRouter(prefix="/rest")


def _platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def _page(
    request: Request, items: list[dict[str, Any]], *, default_take: int | None = None, wrapped: bool = False
) -> JSONResponse:
    """One page of ``items`` (``skip``/``take``): ``{count, data}`` at the top level as n8n answers lists of
    workflows and folders, or ``wrapped`` in ``data`` as it answers data tables (``{data: {count, data}}``).
    ``default_take``: n8n's folder list answers 10 unless told ``take``."""

    def _int(name: str, default: int) -> int:
        raw = request.query_params.get(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ApiError(422, f"query parameter {name} must be a non-negative integer, got {raw!r}") from None
        if value < 0:
            raise ApiError(422, f"query parameter {name} must be a non-negative integer, got {raw!r}")
        return value

    skip, take = _int("skip", 0), min(_int("take", default_take or len(items) or 1), 250)
    page = items[skip : skip + take]
    return ok({"count": len(items), "data": page}) if wrapped else ok(page, count=len(items))


# --- projects ---------------------------------------------------------------------------------


class _ProjectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255)
    icon: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _trimmed(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError("must not start or end with whitespace")
        return value


def _project_view(project: dict[str, Any]) -> dict[str, Any]:
    return {k: project.get(k) for k in ("id", "name", "type", "createdAt")}


@router.get("/projects/personal")
async def personal_project(request: Request) -> JSONResponse:
    """The caller's personal project."""
    platform = _platform(request)
    return ok(_project_view(platform.personal_project(platform.user(request))))


@router.get("/projects")
async def list_projects(request: Request) -> JSONResponse:
    """Projects the caller may use."""
    platform = _platform(request)
    user = platform.user(request)
    return ok([_project_view(p) for p in platform.store.list("projects", user.id)])


@router.post("/projects")
async def create_project(request: Request) -> JSONResponse:
    """Create a team project."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _ProjectBody, "project")
    project = {"id": f"proj_{new_id()}", "name": body.name, "type": "team", "ownerId": user.id, "createdAt": utc_now()}
    platform.store.insert("projects", str(project["id"]), project, scope=user.id)
    return ok(_project_view(project))


@router.delete("/projects/{project_id}")
async def delete_project(project_id: str, request: Request) -> JSONResponse:
    """Delete a team project and everything in it (a personal project cannot be deleted)."""
    platform = _platform(request)
    project = platform.project_for(platform.user(request), project_id)
    if project["type"] == "personal":
        raise ApiError(400, "a personal project cannot be deleted")
    store = platform.store
    with store.tx():
        for kind in ("workflows", "folders", "agents"):
            for doc in store.list(kind, project_id):
                store.delete(kind, doc["id"])
                if kind == "workflows":
                    store.delete_scope("executions", doc["id"])
        for table in store.list("data_tables", project_id):
            store.delete_scope("table_rows", table["id"])
            store.delete("data_tables", table["id"])
        store.delete("projects", project_id)
    return JSONResponse({})  # n8n answers a project delete with an empty object


# --- workflows --------------------------------------------------------------------------------


class _WorkflowBody(BaseModel):
    """``POST``/``PATCH /rest/workflows``: the fields the demo stores (n8n's extra UI fields allowed)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=255)
    nodes: list[WorkflowNode] | None = None
    connections: dict[str, Any] | None = None
    active: bool | None = None
    parentFolderId: str | None = None
    projectId: str | None = None
    settings: dict[str, Any] | None = None
    pinData: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    staticData: Any = None
    tags: list[Any] | None = None
    versionId: str | None = None
    description: str | None = None


def _user_projects(platform: Platform, user: User) -> set[str]:
    return {p["id"] for p in platform.store.list("projects", user.id)}


def _workflow_for(platform: Platform, user: User, workflow_id: str) -> dict[str, Any]:
    doc = platform.store.get("workflows", workflow_id)
    if doc is None or doc.get("projectId") not in _user_projects(platform, user):
        raise ApiError(404, f"workflow {workflow_id!r} not found")
    return doc


def _workflow_to_remove(platform: Platform, user: User, workflow_id: str, action: str) -> dict[str, Any]:
    """The workflow an archive or delete acts on; n8n answers one it cannot find in the caller's projects
    with 403, not 404."""
    doc = platform.store.get("workflows", workflow_id)
    if doc is None or doc.get("projectId") not in _user_projects(platform, user):
        raise ApiError(403, f"Could not {action} the workflow - workflow was not found in your projects")
    return doc


def _workflow_view(platform: Platform, doc: dict[str, Any]) -> dict[str, Any]:
    view = dict(doc)
    folder = platform.store.get("folders", doc["parentFolderId"]) if doc.get("parentFolderId") else None
    view["parentFolder"] = {"id": folder["id"], "name": folder["name"]} if folder else None
    return view


def _check_folder(platform: Platform, project_id: str, folder_id: str | None) -> None:
    if folder_id is None:
        return
    folder = platform.store.get("folders", folder_id)
    if folder is None or folder.get("projectId") != project_id:
        raise ApiError(422, f"invalid workflow: parentFolderId {folder_id!r} is no folder of project {project_id}")


@router.get("/workflows")
async def list_workflows(request: Request) -> JSONResponse:
    """Workflows of the caller's projects, paged with ``skip`` / ``take``."""
    platform = _platform(request)
    user = platform.user(request)
    projects = _user_projects(platform, user)
    docs = [_workflow_view(platform, w) for w in platform.store.list("workflows") if w.get("projectId") in projects]
    return _page(request, docs)


@router.post("/workflows")
async def create_workflow(request: Request) -> JSONResponse:
    """Create a workflow."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _WorkflowBody, "workflow")
    if body.name is None:
        raise ApiError(422, "invalid workflow: name: Field required")
    project_id = body.projectId or platform.personal_project(user)["id"]
    platform.project_for(user, project_id)
    _check_folder(platform, project_id, body.parentFolderId)
    extra = {
        k: v
        for k, v in body.model_dump(include={"settings", "pinData", "meta", "tags", "description"}).items()
        if v is not None
    }
    doc = new_workflow_doc(
        workflow_id=new_id(),
        project_id=project_id,
        name=body.name,
        nodes=[n.model_dump(exclude_none=True) for n in body.nodes or []],
        connections=body.connections or {},
        parent_folder_id=body.parentFolderId,
        active=bool(body.active),
        extra=extra,
    )
    platform.store.insert("workflows", str(doc["id"]), doc, scope=project_id)
    return ok(_workflow_view(platform, doc))


@router.get("/workflows/{workflow_id}")
async def get_workflow(workflow_id: str, request: Request) -> JSONResponse:
    """One workflow with nodes and connections."""
    platform = _platform(request)
    return ok(_workflow_view(platform, _workflow_for(platform, platform.user(request), workflow_id)))


@router.patch("/workflows/{workflow_id}")
async def patch_workflow(workflow_id: str, request: Request) -> JSONResponse:
    """Update the given fields of a workflow (name, nodes, connections, folder, active, ...); new versionId."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _WorkflowBody, "workflow update")
    with platform.store.tx():
        doc = _workflow_for(platform, user, workflow_id)
        changes = body.model_dump(exclude_unset=True, exclude={"projectId", "versionId"})
        if "nodes" in changes:
            changes["nodes"] = [n.model_dump(exclude_none=True) for n in body.nodes or []]
        if "parentFolderId" in changes:
            _check_folder(platform, str(doc["projectId"]), body.parentFolderId)
        doc.update(changes)
        doc["versionId"] = new_id(12)
        doc["updatedAt"] = utc_now()
        platform.store.put("workflows", workflow_id, doc, scope=str(doc["projectId"]))
    return ok(_workflow_view(platform, doc))


@router.post("/workflows/{workflow_id}/archive")
async def archive_workflow(workflow_id: str, request: Request) -> JSONResponse:
    """Archive a workflow (and deactivate it), as n8n does before a delete."""
    platform = _platform(request)
    user = platform.user(request)
    doc = _workflow_to_remove(platform, user, workflow_id, "archive")
    doc.update(isArchived=True, active=False, updatedAt=utc_now())
    platform.store.put("workflows", workflow_id, doc, scope=str(doc["projectId"]))
    return ok(_workflow_view(platform, doc))


@router.delete("/workflows/{workflow_id}")
async def delete_workflow(workflow_id: str, request: Request) -> JSONResponse:
    """Delete an archived workflow (n8n: 400 unless archived first; 403 for one that does not exist)."""
    platform = _platform(request)
    user = platform.user(request)
    doc = _workflow_to_remove(platform, user, workflow_id, "delete")
    if not doc.get("isArchived"):
        raise ApiError(400, "Workflow must be archived before it can be deleted.")
    with platform.store.tx():
        platform.store.delete("workflows", workflow_id)
        # As in n8n, a workflow's executions go with it.
        platform.store.delete_scope("executions", workflow_id)
    return ok(True)


# --- credentials ------------------------------------------------------------------------------


class _CredentialBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    type: str = Field(min_length=1, max_length=128)
    data: dict[str, Any] = Field(default_factory=dict)
    description: str | None = Field(default=None, max_length=512)
    projectId: str | None = None
    isManaged: bool | None = None


class _TestCredential(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    name: str | None = None
    type: str | None = None
    data: dict[str, Any] | None = None


class _TestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    credentials: _TestCredential
    threadId: str | None = None
    """The demo's thread context (also accepted as a ``threadId`` query parameter)."""


def _credential_for(platform: Platform, user: User, credential_id: str) -> dict[str, Any]:
    doc = platform.store.get("credentials", credential_id)
    if doc is None or doc.get("ownerId") != user.id:
        raise ApiError(404, f"credential {credential_id!r} not found")
    return doc


@router.get("/credentials")
async def list_credentials(request: Request) -> JSONResponse:
    """The caller's credentials (data only with ``includeData=true`` for the owner)."""
    platform = _platform(request)
    user = platform.user(request)
    return ok([credential_summary(c) for c in platform.store.list("credentials", user.id)])


@router.post("/credentials")
async def create_credential(request: Request) -> JSONResponse:
    """Create a credential of a supported type."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _CredentialBody, "credential")
    now = utc_now()
    doc = {
        "id": new_id(),
        "name": body.name,
        "type": body.type,
        "data": body.data,
        "description": body.description,
        "ownerId": user.id,
        "createdAt": now,
        "updatedAt": now,
    }
    platform.store.insert("credentials", str(doc["id"]), doc, scope=user.id)
    return ok(credential_summary(doc))


@router.get("/credentials/{credential_id}")
async def get_credential(credential_id: str, request: Request) -> JSONResponse:
    """One credential (data only with ``includeData=true`` for the owner)."""
    platform = _platform(request)
    user = platform.user(request)
    doc = _credential_for(platform, user, credential_id)
    include = request.query_params.get("includeData", "").lower() == "true"
    # Only the credential's owner gets here (others get 404), so asking is enough.
    return ok(credential_summary(doc, include_data=include))


@router.delete("/credentials/{credential_id}")
async def delete_credential(credential_id: str, request: Request) -> JSONResponse:
    """Delete a credential."""
    platform = _platform(request)
    _credential_for(platform, platform.user(request), credential_id)
    platform.store.delete("credentials", credential_id)
    return ok(True)


@router.post("/credentials/test")
async def test_credential_route(request: Request) -> JSONResponse:
    """Connection-test a credential (bypass-listed ids pass; placeholders fail)."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, _TestBody, "credential test")
    thread_id = body.threadId or request.query_params.get("threadId")
    thread = platform.thread_for(user, thread_id) if thread_id else None
    candidate: dict[str, Any] = body.credentials.model_dump(exclude_none=True)
    if body.credentials.id is not None:
        stored = _credential_for(platform, user, body.credentials.id)
        candidate = {**stored, **candidate}
        if body.credentials.data is None:
            candidate["data"] = stored.get("data", {})
    success, message = test_credential(candidate, thread)
    return ok({"status": "OK" if success else "Error", "message": message})


# --- folders ----------------------------------------------------------------------------------


class _FolderBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    parentFolderId: str | None = None


@router.get("/projects/{project_id}/folders")
async def list_folders(project_id: str, request: Request) -> JSONResponse:
    """Folders of a project with their paths."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    return _page(request, platform.store.list("folders", project_id), default_take=10)


@router.post("/projects/{project_id}/folders")
async def create_folder(project_id: str, request: Request) -> JSONResponse:
    """Create a folder (optionally under a parent folder)."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    body = await parse_body(request, _FolderBody, "folder")
    if "/" in body.name:
        raise ApiError(422, f"invalid folder: name must not contain '/', got {body.name!r}")
    if body.parentFolderId is not None:
        parent = platform.store.get("folders", body.parentFolderId)
        if parent is None or parent.get("projectId") != project_id:
            raise ApiError(422, f"invalid folder: parentFolderId {body.parentFolderId!r} is no folder of this project")
    doc = {
        "id": new_id(),
        "name": body.name,
        "parentFolderId": body.parentFolderId,
        "projectId": project_id,
        "createdAt": utc_now(),
    }
    platform.store.insert("folders", str(doc["id"]), doc, scope=project_id)
    return ok(doc)


@router.delete("/projects/{project_id}/folders/{folder_id}")
async def delete_folder(project_id: str, folder_id: str, request: Request) -> JSONResponse:
    """Delete a folder with its sub-folders; their workflows are archived at the project root (n8n 2.41
    without ``transferToFolderId``: archived, not deleted, and still listed)."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    store = platform.store
    folder = store.get("folders", folder_id)
    if folder is None or folder.get("projectId") != project_id:
        raise ApiError(404, f"folder {folder_id!r} not found in project {project_id}")
    with store.tx():
        # A folder goes with its sub-folders; its workflows are archived and left at the root, as on n8n.
        doomed = {folder_id}
        folders = store.list("folders", project_id)
        grew = True
        while grew:
            more = {f["id"] for f in folders if f.get("parentFolderId") in doomed} - doomed
            doomed |= more
            grew = bool(more)
        for workflow in store.list("workflows", project_id):
            if workflow.get("parentFolderId") in doomed:
                workflow.update(parentFolderId=None, isArchived=True, active=False, updatedAt=utc_now())
                store.put("workflows", workflow["id"], workflow, scope=project_id)
        for fid in doomed:
            store.delete("folders", fid)
    return JSONResponse({})


# --- data tables ------------------------------------------------------------------------------


class _TableBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    columns: list[DataTableColumn] = Field(default_factory=list, max_length=50)


def _table_for(platform: Platform, project_id: str, table_id: str) -> dict[str, Any]:
    doc = platform.store.get("data_tables", table_id)
    if doc is None or doc.get("projectId") != project_id:
        raise ApiError(404, f"data table {table_id!r} not found in project {project_id}")
    return doc


@router.get("/projects/{project_id}/data-tables")
async def list_tables(project_id: str, request: Request) -> JSONResponse:
    """Data tables of a project."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    return _page(request, platform.store.list("data_tables", project_id), wrapped=True)


@router.post("/projects/{project_id}/data-tables")
async def create_table(project_id: str, request: Request) -> JSONResponse:
    """Create a data table with its columns."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    body = await parse_body(request, _TableBody, "data table")
    for column in body.columns:
        check_column_name(column.name)
    doc = {
        "id": new_id(),
        "name": body.name,
        "columns": [c.model_dump() for c in body.columns],
        "projectId": project_id,
        "createdAt": utc_now(),
    }
    platform.store.insert("data_tables", str(doc["id"]), doc, scope=project_id)
    return ok(doc)


@router.get("/projects/{project_id}/data-tables/{table_id}/columns")
async def table_columns(project_id: str, table_id: str, request: Request) -> JSONResponse:
    """A data table's columns."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    return ok(_table_for(platform, project_id, table_id).get("columns", []))


@router.get("/projects/{project_id}/data-tables/{table_id}/rows")
async def table_rows(project_id: str, table_id: str, request: Request) -> JSONResponse:
    """A data table's rows."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    _table_for(platform, project_id, table_id)
    rows = platform.store.list("table_rows", table_id)
    return ok({"count": len(rows), "data": rows})


@router.delete("/projects/{project_id}/data-tables/{table_id}")
async def delete_table(project_id: str, table_id: str, request: Request) -> JSONResponse:
    """Delete a data table and its rows."""
    platform = _platform(request)
    platform.project_for(platform.user(request), project_id)
    _table_for(platform, project_id, table_id)
    with platform.store.tx():
        platform.store.delete_scope("table_rows", table_id)
        platform.store.delete("data_tables", table_id)
    return ok(True)


# --- agents -----------------------------------------------------------------------------------


def _agent_for(platform: Platform, request: Request, project_id: str, agent_id: str) -> dict[str, Any]:
    platform.project_for(platform.user(request), project_id)
    doc = platform.store.get("agents", agent_id)
    if doc is None or doc.get("projectId") != project_id:
        raise ApiError(404, f"agent {agent_id!r} not found in project {project_id}")
    return doc


@router.get("/projects/{project_id}/agents/v2/{agent_id}/config")
async def agent_config(project_id: str, agent_id: str, request: Request) -> JSONResponse:
    """An agent's JSON config."""
    doc = _agent_for(_platform(request), request, project_id, agent_id)
    return ok({"id": agent_id, "config": doc["config"]})


@router.get("/projects/{project_id}/agents/v2/{agent_id}/skills")
async def agent_skills(project_id: str, agent_id: str, request: Request) -> JSONResponse:
    """An agent's skills by id."""
    doc = _agent_for(_platform(request), request, project_id, agent_id)
    return ok(doc.get("skills", {}))


@router.delete("/projects/{project_id}/agents/v2/{agent_id}")
async def delete_agent(project_id: str, agent_id: str, request: Request) -> JSONResponse:
    """Delete an agent."""
    platform = _platform(request)
    _agent_for(platform, request, project_id, agent_id)
    platform.store.delete("agents", agent_id)
    return ok(True)
