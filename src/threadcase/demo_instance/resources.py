"""Resource rules shared by the REST routes, the agent's tools and mocked execution.

Workflows, folders, data tables, agents and credentials are stored as the API shows them; this module
holds the few rules more than one caller needs: ids, folder paths, the thread's credential view and
the credential test.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from typing import Any

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.events import utc_now
from threadcase.demo_instance.storage import Store

__all__ = [
    "AGENT_MODEL",
    "PLACEHOLDER",
    "check_column_name",
    "credential_summary",
    "folder_path",
    "new_id",
    "new_workflow_doc",
    "test_credential",
    "visible_credentials",
]

PLACEHOLDER = "eval-placeholder"
_ALPHABET = string.ascii_letters + string.digits


AGENT_MODEL = re.compile(r"[a-z0-9-]+/(?:[a-z0-9._:-]+/)*[a-z0-9._:-]+", re.IGNORECASE)
"""n8n's rule for an agent's model: ``provider/model-name`` (or ``""``)."""
_SYSTEM_COLUMNS = {"id": "system", "createdat": "system", "updatedat": "system", "dryrunstate": "testing"}
_COLUMN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,62}")


def check_column_name(name: str) -> None:
    """Refuse a data-table column name as n8n 2.41 does (its messages): system names and bad spellings."""
    kind = _SYSTEM_COLUMNS.get(name.lower())
    if kind is not None:
        raise ApiError(400, f'Column name "{name}" is reserved as a {kind} column name.')
    if not _COLUMN_NAME.fullmatch(name):
        raise ApiError(
            400,
            "Validation error with data table request: Only alphabetical characters and non-leading numbers and "
            "underscores are allowed for column names, and the maximum length is 63 characters.",
        )


def new_id(length: int = 16) -> str:
    """An n8n-style random id (letters and digits)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def folder_path(store: Store, folder_id: str | None) -> str:
    """``Parent/Child`` names of a folder, root first ('' for no folder)."""
    names: list[str] = []
    seen: set[str] = set()
    while folder_id and folder_id not in seen:
        seen.add(folder_id)
        folder = store.get("folders", folder_id)
        if folder is None:
            break
        names.append(str(folder["name"]))
        folder_id = folder.get("parentFolderId")
    return "/".join(reversed(names))


def new_workflow_doc(
    *,
    workflow_id: str,
    project_id: str,
    name: str,
    nodes: list[dict[str, Any]],
    connections: dict[str, Any],
    parent_folder_id: str | None = None,
    active: bool = False,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A stored workflow document with a fresh versionId and timestamps."""
    now = utc_now()
    doc: dict[str, Any] = {
        "id": workflow_id,
        "name": name,
        "nodes": nodes,
        "connections": connections,
        "active": active,
        "versionId": new_id(12),
        "parentFolderId": parent_folder_id,
        "projectId": project_id,
        "createdAt": now,
        "updatedAt": now,
    }
    if extra:
        doc.update({k: v for k, v in extra.items() if k not in doc})
    return doc


def credential_summary(doc: dict[str, Any], *, include_data: bool = False) -> dict[str, Any]:
    """A credential as the API lists it: no data unless ``include_data``."""
    summary: dict[str, Any] = {k: doc[k] for k in ("id", "name", "type", "createdAt", "updatedAt") if k in doc}
    if doc.get("description") is not None:
        summary["description"] = doc["description"]
    if include_data:
        summary["data"] = doc.get("data", {})
    return summary


def visible_credentials(store: Store, thread: dict[str, Any] | None, owner_id: str) -> list[dict[str, Any]]:
    """The credentials a thread may see: its allowlist when pinned, else everything of its owner."""
    owned = store.list("credentials", owner_id)
    if thread is None or thread.get("allowlist") is None:
        return owned
    allowed = set(thread["allowlist"])
    return [doc for doc in owned if doc["id"] in allowed]


def test_credential(doc: dict[str, Any], thread: dict[str, Any] | None) -> tuple[bool, str]:
    """The demo's connection test: bypass-listed ids pass; placeholders and blank data fail."""
    if thread is not None and doc.get("id") in set(thread.get("bypass") or []):
        return True, "Connection tested successfully"
    data = doc.get("data") or {}
    if not data:
        return False, "Credential has no data: fill in its fields first"
    if PLACEHOLDER in json.dumps(data):
        return False, "Authorization failed: the token was rejected by the service"
    return True, "Connection tested successfully"
