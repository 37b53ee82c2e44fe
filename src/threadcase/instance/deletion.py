"""Delete one resource of a given kind: the one place that maps a leftover's kind to its delete route.

Used by a case-iteration's second cleanup sweep and by ``threadcase cleanup``. Every delete treats a
404 as done (already gone); a workflow n8n refuses to delete unarchived is archived first.
"""

from __future__ import annotations

from threadcase.errors import InstanceError
from threadcase.instance.client import InstanceClient
from threadcase.leftovers import ResourceKind

__all__ = ["delete_resource"]

_PROJECT_SCOPED = frozenset({"data_table", "folder", "agent"})


async def delete_resource(client: InstanceClient, kind: ResourceKind, resource_id: str, project_id: str | None) -> None:
    """Delete ``resource_id`` of ``kind``; raises :class:`InstanceError` when the instance refuses."""
    if kind in _PROJECT_SCOPED and not project_id:
        raise InstanceError(f"cannot delete {kind} {resource_id!r}: its project is unknown")
    if kind == "workflow":
        await client.delete_workflow(resource_id)
    elif kind == "data_table":
        await client.delete_data_table(str(project_id), resource_id)
    elif kind == "folder":
        await client.delete_folder(str(project_id), resource_id)
    elif kind == "agent":
        await client.delete_agent(str(project_id), resource_id)
    elif kind == "credential":
        await client.delete_credential(resource_id)
    elif kind == "thread":
        await client.delete_thread(resource_id)
    else:
        await client.delete_project(resource_id)
