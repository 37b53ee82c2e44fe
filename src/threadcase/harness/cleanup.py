"""Delete what a run left behind, as its journal records it: the Python API of ``threadcase cleanup``.

:func:`cleanup_journal` reads the journal's leftovers (less what an earlier cleanup already deleted),
logs in to each instance they are on, deletes them in dependency order (agents, workflows, data
tables, folders, projects, credentials, threads; a 404 counts as gone), and appends a
:class:`~threadcase.leftovers.CleanupReport` line to the journal, so a rebuilt report and a second
cleanup know what is gone. A leftover thread is looked into first: a run its agent still had going when
the harness exited may have built more since, and that is deleted too.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

from threadcase.errors import ConfigError, InstanceError
from threadcase.harness.journal import JournalWriter, read_journal_entries
from threadcase.harness.pipeline import calls_in_messages, created_ids
from threadcase.instance import InstanceClient
from threadcase.instance.deletion import delete_resource
from threadcase.leftovers import DELETE_ORDER, CleanupReport, Leftover, ResourceKind
from threadcase.redaction import Redactor, strip_userinfo

__all__ = ["CleanupOutcome", "cleanup_journal"]


@dataclasses.dataclass(frozen=True)
class CleanupOutcome:
    """What :func:`cleanup_journal` found, deleted and could not delete."""

    found: list[Leftover]
    deleted: list[Leftover]
    remaining: list[Leftover]
    unreachable: list[str]
    """Instances that could not be reached or logged in to (their leftovers are in ``remaining``)."""


async def cleanup_journal(
    journal: Path,
    *,
    email: str | None,
    password: str | None,
    base_url: str | None = None,
    dry_run: bool = False,
    redactor: Redactor | None = None,
) -> CleanupOutcome:
    """Delete the leftovers ``journal`` records; returns what happened.

    ``base_url`` replaces the recorded instance URL (one lane only): the journal keeps URLs without
    userinfo, and an instance may have moved. ``dry_run`` lists without deleting or writing.
    """
    entries = read_journal_entries(journal)
    found = entries.leftovers
    if not found or dry_run:
        return CleanupOutcome(found=found, deleted=[], remaining=list(found), unreachable=[])
    lanes = list(dict.fromkeys(leftover.lane for leftover in found))
    if base_url is not None and len(lanes) > 1:
        raise ConfigError(
            f"--base-url replaces one instance's URL, but the journal's leftovers are on {len(lanes)}: "
            + ", ".join(lanes)
        )
    if not email or password is None:
        raise ConfigError(
            "--email and --password (THREADCASE_EMAIL / THREADCASE_PASSWORD) are required to log in to "
            + ", ".join(lanes)
        )
    deleted: list[Leftover] = []
    remaining: list[Leftover] = []
    unreachable: list[str] = []
    for lane in lanes:
        mine = sorted((x for x in found if x.lane == lane), key=lambda x: DELETE_ORDER.index(x.kind))
        url = base_url or lane
        async with contextlib.AsyncExitStack() as stack:
            client = InstanceClient(url, email=email, password=password)
            stack.push_async_callback(client.aclose)
            try:
                if not await client.health():
                    raise InstanceError(f"instance not ready at {client.base_url} (GET /healthz/readiness)")
                await client.login()
            except InstanceError as exc:
                unreachable.append(strip_userinfo(url))
                remaining += [_with_reason(x, f"could not reach the instance: {exc}") for x in mine]
                continue
            mine = await _with_what_threads_built(client, mine)
            for leftover in mine:
                try:
                    await delete_resource(client, leftover.kind, leftover.id, leftover.project_id)
                except InstanceError as exc:
                    remaining.append(_with_reason(leftover, f"delete failed: {exc}"))
                else:
                    deleted.append(leftover)
    with JournalWriter(journal, redactor) as writer:
        writer.append_line(CleanupReport(deleted=deleted, remaining=remaining))
    return CleanupOutcome(found=found, deleted=deleted, remaining=remaining, unreachable=unreachable)


_BUILT_KINDS: dict[str, ResourceKind] = {
    "workflow": "workflow",
    "table": "data_table",
    "agent": "agent",
    "folder": "folder",
}


async def _with_what_threads_built(client: InstanceClient, leftovers: list[Leftover]) -> list[Leftover]:
    """``leftovers`` plus what the agents of their threads built (read from the threads' messages)."""
    known = {(x.kind, x.id) for x in leftovers}
    found: list[Leftover] = []
    for thread in [x for x in leftovers if x.kind == "thread"]:
        try:
            await client.cancel(thread.id)  # a run still going would go on building
            messages = await client.thread_messages(thread.id)
        except InstanceError:
            continue  # gone already, or unreadable: the thread's own delete says which
        project = next((x.project_id for x in leftovers if x.project_id), None)
        if project is None:
            try:
                project = (await client.personal_project()).id
            except InstanceError:
                project = None
        built = created_ids(calls_in_messages(m for m in messages if not m.seeded))
        for kind, ids in built.items():
            for resource_id in sorted(ids):
                key = (_BUILT_KINDS[kind], resource_id)
                if key not in known:
                    known.add(key)
                    found.append(
                        thread.model_copy(
                            update={
                                "kind": key[0],
                                "id": resource_id,
                                "project_id": project if key[0] != "workflow" else None,
                                "reason": f"built in leftover thread {thread.id}",
                            }
                        )
                    )
    return sorted([*leftovers, *found], key=lambda x: DELETE_ORDER.index(x.kind))


def _with_reason(leftover: Leftover, reason: str) -> Leftover:
    """``leftover`` with a new reason (one line)."""
    return leftover.model_copy(update={"reason": " ".join(reason.split())[:500]})
