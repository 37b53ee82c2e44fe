"""Resources outside Instance AI that the harness reads: workflows, credentials, folders, tables."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from threadcase.wire._base import _Response


class WorkflowNode(_Response):
    """One node of a :class:`Workflow` (``/rest/workflows``), n8n-shaped."""

    id: str | None = None
    name: str
    type: str
    typeVersion: float = 1
    position: list[float] = Field(default_factory=lambda: [0.0, 0.0])
    parameters: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, dict[str, Any]] | None = None
    """credential type -> ``{"id": ..., "name": ...}``."""
    onError: str | None = None


class Workflow(_Response):
    """A workflow as ``/rest/workflows`` reads and writes it: nodes, connections, folder.

    n8n names the folder and project as objects (``parentFolder: {id, name, parentFolderId}``,
    ``homeProject: {id, type, name}``); ``parentFolderId`` and ``projectId`` are filled from them.
    """

    id: str
    name: str
    nodes: list[WorkflowNode] = Field(default_factory=list)
    connections: dict[str, Any] = Field(default_factory=dict)
    active: bool = False
    isArchived: bool = False
    """n8n lists archived workflows too (a delete needs the archive first)."""
    versionId: str | None = None
    parentFolderId: str | None = None
    projectId: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _ids_from_objects(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        folder, home = data.get("parentFolder"), data.get("homeProject")
        if data.get("parentFolderId") is None and isinstance(folder, dict) and folder.get("id"):
            data = {**data, "parentFolderId": str(folder["id"])}
        if data.get("projectId") is None and isinstance(home, dict) and home.get("id"):
            data = {**data, "projectId": str(home["id"])}
        return data


class CredentialSummary(_Response):
    """A credential as ``GET /rest/credentials`` lists it (``data`` only with ``includeData=true``)."""

    id: str
    name: str
    type: str
    data: dict[str, Any] | None = None
    """Only present with ``includeData=true``; never logged by threadcase."""


class Folder(_Response):
    """A project folder, as ``/rest/projects/:projectId/folders`` lists and creates it."""

    id: str
    name: str
    parentFolderId: str | None = None
    projectId: str | None = None


class DataTableColumn(_Response):
    """One column of a data table (``/rest/projects/:projectId/data-tables``, and seeds)."""

    name: str
    type: Literal["string", "number", "boolean", "date"] = "string"
