"""Inline seeds: stand up a case's prior conversation and its artifacts on the instance.

:func:`restore_inline_seed` expands and remaps the seed (:mod:`.remap`), evicts leftovers of earlier
runs, restores messages, workflows, data tables (schema only), folders and agents in one
``restore-thread`` call (the server marks the messages seeded), creates the seed's projects, then
stages each ``priorRuns`` entry as a mocked execution. It is all or nothing: on failure everything
it created is deleted again and :class:`SeedingError` is raised. What it created is handed back in
:class:`CreatedResources` for :func:`cleanup_created` at the end of the run.

Eviction deletes only what the ``snapshot`` saw and no run in progress claims (see
``InstanceClient.claims``): same-base-name ``[seed xxxxxxxx]`` workflows, and root folders and
projects with the seed's exact names. Take the snapshot when the run starts (the earlier the
better: once per lane before any case is safest).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from threadcase import wire
from threadcase._util.fanout import fan_out
from threadcase.case import schema
from threadcase.errors import InstanceError, SeedingError
from threadcase.instance import InstanceClient
from threadcase.records import PriorRunOutcome, SeededAgent, SeededWorkflow, SeedOutcome, Turn, utc_now
from threadcase.seeds.remap import check_seed, expand_messages, remap_seed, seeded_name_pattern
from threadcase.seeds.turns import seeded_turns

__all__ = [
    "CreatedResources",
    "InstanceSnapshot",
    "RestoredSeed",
    "cleanup_created",
    "expand_messages",
    "restore_inline_seed",
    "take_snapshot",
]

_log = logging.getLogger("threadcase.seeds")

PRIOR_RUN_TIMEOUT_MS = 120_000
CLEANUP_SECONDS = 60.0


class InstanceSnapshot(BaseModel):
    """What existed on the instance before a run: the only things seed eviction may delete."""

    model_config = ConfigDict(extra="forbid")

    project_id: str
    taken_at: datetime = Field(default_factory=utc_now)
    workflows: dict[str, str] = Field(default_factory=dict)
    """Workflow id -> name (every workflow the session can see)."""
    root_folders: dict[str, str] = Field(default_factory=dict)
    """Folder id -> name, for folders at the root of ``project_id``."""
    folder_ids: list[str] = Field(default_factory=list)
    """Every folder of ``project_id``, at any depth."""
    projects: dict[str, str] = Field(default_factory=dict)
    """Project id -> name."""
    data_tables: dict[str, str] = Field(default_factory=dict)
    """Data table id -> name in ``project_id``."""


class CreatedResources(BaseModel):
    """Everything a seed restore created, for deletion at cleanup."""

    model_config = ConfigDict(extra="forbid")

    project_id: str
    workflow_ids: list[str] = Field(default_factory=list)
    data_table_ids: list[str] = Field(default_factory=list)
    agent_ids: list[str] = Field(default_factory=list)
    folder_ids: list[str] = Field(default_factory=list)
    """Children before parents, so each delete finds an empty folder."""
    project_ids: list[str] = Field(default_factory=list)
    claims: list[str] = Field(default_factory=list)
    """Eviction claims this run holds on the client; released by :func:`cleanup_created`."""

    @property
    def empty(self) -> bool:
        return not (self.workflow_ids or self.data_table_ids or self.agent_ids or self.folder_ids or self.project_ids)


class RestoredSeed(BaseModel):
    """A seed stood up for one run (inline here; replay produces the same shape)."""

    model_config = ConfigDict(extra="forbid")

    outcome: SeedOutcome
    """restored / error / prior runs / id map, as the run record stores it."""
    workflow_names: dict[str, str] = Field(default_factory=dict)
    """Seed workflow id -> per-run name."""
    seeded_turns: list[Turn] = Field(default_factory=list)
    """The restored history as transcript turns (``seeded=True``, ``sent_by="seed"``)."""
    created: CreatedResources
    """Everything to delete at cleanup."""
    agent_names: dict[str, str] = Field(default_factory=dict)
    """Seed agent id -> the agent's name (agents keep their names)."""
    project_id: str | None = None
    """The project the seed was restored into (an agent attachment names it)."""

    def resolve_attach(self, attach: schema.Attach) -> wire.WorkflowAttachment | wire.AgentAttachment:
        """The opening turn's hand-off with per-run ids; a missing target is a seeding failure."""
        if attach.workflow is not None:
            new_id = self.outcome.id_map.get(attach.workflow)
            name = self.workflow_names.get(attach.workflow)
            if new_id is None or name is None:
                raise SeedingError(
                    f"attach.workflow {attach.workflow!r} was not restored by the seed "
                    f"(restored workflows: {', '.join(sorted(self.workflow_names)) or 'none'})"
                )
            return wire.WorkflowAttachment(id=new_id, name=name)
        if attach.agent is not None:
            new_id = self.outcome.id_map.get(attach.agent)
            if new_id is None or attach.agent not in self.agent_names:
                raise SeedingError(
                    f"attach.agent {attach.agent!r} was not restored by the seed "
                    f"(restored agents: {', '.join(sorted(self.agent_names)) or 'none'})"
                )
            return wire.AgentAttachment(id=new_id, name=self.agent_names[attach.agent], projectId=self.project_id)
        raise SeedingError("attach names neither a workflow nor an agent")


# --- snapshot and eviction -----------------------------------------------------------------------


async def take_snapshot(client: InstanceClient, project_id: str) -> InstanceSnapshot:
    """Record the workflows, folders, projects and tables that exist now (pre-run ids).

    The four listings are independent reads, so they go at once (this runs before any case starts);
    a failure comes out as the plain :class:`InstanceError` it is, never wrapped in a group.
    """
    listings: list[tuple[Callable[[], Awaitable[list[Any]]], bool]] = [
        (client.list_workflows, False),
        (lambda: client.list_folders(project_id), True),
        (client.list_projects, True),
        (lambda: client.list_data_tables(project_id), True),
    ]

    async def read(listing: tuple[Callable[[], Awaitable[list[Any]]], bool]) -> list[Any] | InstanceError:
        call, optional = listing
        try:
            return list(await (_optional(call(), []) if optional else call()))
        except InstanceError as exc:
            return exc

    results = await fan_out(listings, read, limit=len(listings))
    for outcome in results:
        if isinstance(outcome, InstanceError):
            raise outcome
    workflows, folders, projects, tables = (r for r in results if not isinstance(r, InstanceError))
    return InstanceSnapshot(
        project_id=project_id,
        workflows={w.id: w.name for w in workflows},
        root_folders={f.id: f.name for f in folders if not f.parentFolderId},
        folder_ids=sorted(f.id for f in folders),
        projects={p.id: p.name for p in projects},
        data_tables={str(t["id"]): str(t.get("name", "")) for t in tables if t.get("id")},
    )


async def _optional(call: Any, default: Any) -> Any:
    # Folders, projects and data tables are licensed features on n8n: a 403/404 means "none here".
    try:
        return await call
    except InstanceError as exc:
        if exc.status in (403, 404):
            return default
        raise


def _claim_keys(seed: schema.InlineSeed, project_id: str) -> list[str]:
    roots = [f.name for f in seed.folders if f.parent_folder_id is None]
    return [f"folder:{project_id}:{name}" for name in roots] + [f"project:{p.name}" for p in seed.projects]


async def _evict(
    client: InstanceClient, seed: schema.InlineSeed, snapshot: InstanceSnapshot, project_id: str
) -> list[str]:
    """Delete leftovers of earlier runs that the snapshot saw and nobody claims; returns warnings."""
    warnings: list[str] = []
    patterns = [seeded_name_pattern(w.name) for w in seed.workflows]
    doomed: list[tuple[str, str, Any]] = []
    for workflow_id, name in snapshot.workflows.items():
        if any(p.fullmatch(name) for p in patterns) and not client.claims[f"workflow:{workflow_id}"]:
            doomed.append(("workflow", workflow_id, client.delete_workflow))
    roots = {f.name for f in seed.folders if f.parent_folder_id is None}
    if snapshot.project_id == project_id:
        for folder_id, name in snapshot.root_folders.items():
            if name in roots and not client.claims[f"folder:{project_id}:{name}"]:
                doomed.append(("folder", folder_id, lambda i: client.delete_folder(project_id, i)))
    names = {p.name for p in seed.projects}
    for found_id, name in snapshot.projects.items():
        if name in names and found_id != project_id and not client.claims[f"project:{name}"]:
            doomed.append(("project", found_id, client.delete_project))
    for kind, found_id, delete in doomed:
        try:
            await delete(found_id)
            _log.info("evicted leftover %s %s from an earlier run", kind, found_id)
        except InstanceError as exc:
            warnings.append(f"could not evict leftover {kind} {found_id}: {exc}")
    return warnings


# --- restore -------------------------------------------------------------------------------------


def _folder_order(seed: schema.InlineSeed) -> list[int]:
    """Seed folder indexes, deepest first (the order to delete them in)."""
    parent = {f.id: f.parent_folder_id for f in seed.folders}

    def depth(folder_id: str | None) -> int:
        seen: set[str] = set()
        level = 0
        while folder_id is not None and folder_id in parent and folder_id not in seen:
            seen.add(folder_id)
            folder_id = parent[folder_id]
            level += 1
        return level

    return sorted(range(len(seed.folders)), key=lambda i: -depth(seed.folders[i].id))


async def restore_inline_seed(
    client: InstanceClient,
    seed: schema.InlineSeed,
    *,
    thread_id: str,
    project_id: str,
    run_suffix: str,
    snapshot: InstanceSnapshot,
    check_builds: bool = True,
) -> RestoredSeed:
    """Stand ``seed`` up on the instance for the thread ``thread_id`` (which must exist).

    ``check_builds=False`` (replay) skips the rule that every seeded build result names a seeded
    workflow: a replayed history legitimately names workflows the agent later deleted.

    Raises :class:`~threadcase.errors.CaseSchemaError` when the seed is inconsistent (a
    seeded build result naming an undeclared workflow or agent) and :class:`SeedingError` when the
    instance could not restore it; in both cases nothing it created is left behind.
    """
    messages = expand_messages(list(seed.messages))
    if check_builds:
        check_seed(seed, messages)
    remapped = remap_seed(seed, messages, run_suffix=run_suffix)
    warnings = await _evict(client, seed, snapshot, project_id)
    claims = [f"workflow:{i}" for i in remapped.id_map.values()] + _claim_keys(seed, project_id)
    # Claimed before the restore call: a concurrent run's eviction can only ever see our artifacts
    # after they exist, and by then they are claimed.
    client.claims.update(claims)
    created = CreatedResources(project_id=project_id, claims=claims)
    try:
        await _restore(client, seed, remapped.messages, remapped.workflows, remapped.agents, thread_id, created)
        returned = dict(zip([w["id"] for w in remapped.workflows], created.workflow_ids, strict=True))
        id_map = dict(remapped.id_map)
        for seed_id, new_id in remapped.id_map.items():
            if new_id in returned and returned[new_id] != new_id:
                # The server did not keep our id: the history still names ours, so say so.
                warnings.append(f"instance re-numbered seed workflow {seed_id!r} to {returned[new_id]!r}")
                id_map[seed_id] = returned[new_id]
        for project in seed.projects:
            try:
                created.project_ids.append((await client.create_project(project.name)).id)
            except InstanceError as exc:
                raise SeedingError(f"could not create seed project {project.name!r}: {exc}") from exc
        prior_runs = [await _prior_run(client, id_map, run) for run in seed.prior_runs]
        seeded = await _read_restored(client, seed, id_map)
    except BaseException:
        await cleanup_created(client, created)
        raise
    return RestoredSeed(
        outcome=SeedOutcome(
            mode="inline",
            restored=True,
            prior_runs=prior_runs,
            id_map=id_map,
            warnings=warnings,
            workflows=seeded,
            agents=[SeededAgent(seed_id=a.id, id=id_map[a.id]) for a in seed.agents if a.id in id_map],
        ),
        workflow_names=remapped.workflow_names,
        seeded_turns=seeded_turns(remapped.messages),
        created=created,
        agent_names={a.id: str(a.config.get("name") or a.id) for a in seed.agents},
        project_id=project_id,
    )


async def _restore(
    client: InstanceClient,
    seed: schema.InlineSeed,
    messages: list[dict[str, Any]],
    workflows: list[dict[str, Any]],
    agents: list[dict[str, Any]],
    thread_id: str,
    created: CreatedResources,
) -> None:
    tables = [{"id": t.id, "name": t.name, "columns": [c.model_dump() for c in t.columns]} for t in seed.data_tables]
    folders = [
        {"id": f.id, "name": f.name, **({"parentFolderId": f.parent_folder_id} if f.parent_folder_id else {})}
        for f in seed.folders
    ]
    if not (messages or workflows or tables or agents or folders):
        return  # a projects-only seed: nothing for restore-thread to do
    request = wire.RestoreThreadRequest(
        threadId=thread_id, messages=messages, workflows=workflows, dataTables=tables, agents=agents, folders=folders
    )
    try:
        response = await client.restore_thread(request)
    except InstanceError as exc:
        raise SeedingError(f"restore-thread failed: {exc}") from exc
    created.workflow_ids = list(response.workflowIds)
    created.data_table_ids = list(response.dataTableIds)
    created.agent_ids = list(response.agentIds)
    by_index = list(response.folderIds)
    if len(by_index) == len(folders):
        created.folder_ids = [by_index[i] for i in _folder_order(seed)]
    else:
        created.folder_ids = list(reversed(by_index))
    expected = {"workflows": (workflows, response.workflowIds), "dataTables": (tables, response.dataTableIds)}
    expected |= {"agents": (agents, response.agentIds), "folders": (folders, response.folderIds)}
    short = [f"{key} {len(got)}/{len(sent)}" for key, (sent, got) in expected.items() if len(got) != len(sent)]
    if short:
        raise SeedingError(
            "restore-thread created fewer artifacts than sent (" + ", ".join(short) + "); "
            "the instance likely predates seeding of those kinds"
        )


async def _read_restored(
    client: InstanceClient, seed: schema.InlineSeed, id_map: dict[str, str]
) -> list[SeededWorkflow]:
    """Every restored workflow as the instance holds it now: the "before" of the identity checks.

    Read back rather than taken from the case file, because the restore may normalise what it stores
    (credentials resolved, defaults filled in): comparing with the file would call that an edit. A
    read that fails leaves ``restored`` None with the reason, and only the checks that need it are
    not judged.
    """

    async def one(declared: schema.SeedWorkflow) -> SeededWorkflow:
        run_id = id_map[declared.id]
        entry = SeededWorkflow(seed_id=declared.id, seed_name=declared.name, id=run_id)
        try:
            entry.restored = await client.get_workflow(run_id)
        except InstanceError as exc:
            entry.restore_error = f"could not be read after the restore: {exc}"
        return entry

    declared = [w for w in seed.workflows if w.id in id_map]
    return list(await fan_out(declared, one, limit=4)) if declared else []


async def _prior_run(client: InstanceClient, id_map: dict[str, str], run: schema.PriorRun) -> PriorRunOutcome:
    """One staged execution: a failed execution still ran (that is often the point); an error did not."""
    workflow_id = id_map.get(run.workflow)
    if workflow_id is None:
        return PriorRunOutcome(workflow=run.workflow, ran=False, error="workflow is not part of the seed")
    request = wire.ExecuteWithMockRequest(scenarioHints=run.hints, timeoutMs=PRIOR_RUN_TIMEOUT_MS)
    try:
        result = await client.execute_with_mock(workflow_id, request)
    except InstanceError as exc:
        _log.warning("prior run of %s never ran: %s", run.workflow, exc)
        return PriorRunOutcome(workflow=run.workflow, ran=False, error=str(exc))
    if result.framework_issue is not None:
        # n8n's mock machinery failed before the workflow ran (its mock model, say): nothing ran.
        _log.warning("prior run of %s never ran: %s", run.workflow, result.framework_issue)
        return PriorRunOutcome(workflow=run.workflow, ran=False, error=result.framework_issue)
    error = "; ".join(result.errors) or None
    return PriorRunOutcome(workflow=run.workflow, ran=True, success=result.success, error=error)


# --- cleanup -------------------------------------------------------------------------------------


async def cleanup_created(
    client: InstanceClient, created: CreatedResources, *, seconds: float = CLEANUP_SECONDS
) -> None:
    """Delete everything a seed restore created; best effort, bounded in time, shielded.

    Agents first (they may reference workflows), then workflows, tables, folders (children first)
    and projects. A delete that fails is skipped and its id stays in ``created`` (the caller reports
    what is left); the run's claims are released last.
    """
    project = created.project_id
    steps: list[tuple[str, list[str], Any]] = [
        ("agent", created.agent_ids, lambda i: client.delete_agent(project, i)),
        ("workflow", created.workflow_ids, client.delete_workflow),
        ("data table", created.data_table_ids, lambda i: client.delete_data_table(project, i)),
        ("folder", created.folder_ids, lambda i: client.delete_folder(project, i)),
        ("project", created.project_ids, client.delete_project),
    ]
    with anyio.CancelScope(shield=True):
        with anyio.move_on_after(seconds) as scope:
            for kind, ids, delete in steps:
                # Each id leaves its list the moment it is gone, so whatever the lists hold when this
                # stops (a refusal, the time bound) is exactly what is still on the instance.
                for resource_id in list(ids):
                    try:
                        await delete(resource_id)
                    except InstanceError as exc:
                        _log.debug("cleanup: could not delete %s %s: %s", kind, resource_id, exc)
                        continue
                    ids.remove(resource_id)
        if scope.cancelled_caught:
            _log.debug("cleanup of seeded artifacts stopped after %.0f s", seconds)
        client.claims.subtract(created.claims)
        client.claims += type(client.claims)()  # drop keys whose count reached zero
        created.claims = []
