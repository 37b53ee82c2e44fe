"""Leftovers: what a run created on an instance and could not delete, as the journal records it.

Cleanup is best effort and bounded in time, so it can fail: a delete that exhausts its retries, an
instance that stops answering, a run interrupted three times. Whatever is left is a result of the run,
never only a warning: each case-iteration whose cleanup left something appends a
:class:`LeftoverReport` line to the journal (beside its :class:`~threadcase.verdicts.CaseResult` line,
or alone when the case was interrupted and has no result), the summary lists them, and
``threadcase cleanup --journal J`` deletes them later and appends a :class:`CleanupReport` line saying
what it removed, so a rebuilt report no longer lists those.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.records import utc_now

__all__ = [
    "DELETE_ORDER",
    "CleanupReport",
    "Leftover",
    "LeftoverReport",
    "ResourceKind",
    "describe_leftovers",
    "outstanding_leftovers",
]

ResourceKind = Literal["agent", "workflow", "data_table", "folder", "project", "credential", "thread"]
DELETE_ORDER: tuple[ResourceKind, ...] = (
    "agent",
    "workflow",
    "data_table",
    "folder",
    "project",
    "credential",
    "thread",
)
"""The order deletions go in: agents may use workflows, folders hold workflows, projects hold everything;
the thread last, so its messages can still name what its agent built while the rest is deleted."""


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Leftover(_Line):
    """One resource a run created on an instance and did not delete."""

    lane: str
    """The instance's base URL (never with userinfo)."""
    kind: ResourceKind
    id: str
    project_id: str | None = None
    """The project of a data table, folder or agent (their delete routes need it)."""
    case_slug: str = ""
    """The case-iteration that created it."""
    iteration: int = 0
    reason: str = ""
    """Why it is still there: the failed delete's error, a cleanup that ran out of time, an exit."""

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the resource: (lane, kind, id)."""
        return (self.lane, self.kind, self.id)


class LeftoverReport(_Line):
    """A journal line: what one case-iteration's cleanup left on the instance."""

    record_type: Literal["leftovers"] = "leftovers"
    """Tells this line from a case result in the journal."""
    run_id: str
    at: datetime = Field(default_factory=utc_now)
    interrupted: bool = False
    """The case-iteration was stopped by an interrupt (it may have no result line)."""
    resources: list[Leftover]


class CleanupReport(_Line):
    """A journal line appended by ``threadcase cleanup``: which leftovers it deleted."""

    record_type: Literal["cleanup"] = "cleanup"
    """Tells this line from a case result in the journal."""
    at: datetime = Field(default_factory=utc_now)
    deleted: list[Leftover]
    """Resources now gone (deleted, or found already gone)."""
    remaining: list[Leftover] = Field(default_factory=list)
    """Resources the cleanup could not delete either."""


def outstanding_leftovers(reports: Iterable[LeftoverReport], cleanups: Iterable[CleanupReport]) -> list[Leftover]:
    """Every leftover the reports name, once each, less what a later cleanup deleted (journal order)."""
    found: dict[tuple[str, str, str], Leftover] = {}
    for report in reports:
        for leftover in report.resources:
            found.setdefault(leftover.key, leftover)
    for cleanup in cleanups:
        for gone in cleanup.deleted:
            found.pop(gone.key, None)
    return list(found.values())


def describe_leftovers(leftovers: Sequence[Leftover], *, limit: int = 12) -> str:
    """``workflow wf1, wf2; thread t1 (on http://host)``: ids per kind, per lane, at most ``limit`` ids."""
    by_lane: dict[str, dict[str, list[str]]] = {}
    for leftover in leftovers:
        by_lane.setdefault(leftover.lane, {}).setdefault(leftover.kind, []).append(leftover.id)
    shown = 0
    parts: list[str] = []
    for lane, kinds in by_lane.items():
        pieces = []
        for kind in sorted(kinds, key=DELETE_ORDER.index):
            ids = kinds[kind]
            room = max(0, limit - shown)
            listed = ", ".join(ids[:room]) + (f" (+{len(ids) - room} more)" if len(ids) > room else "")
            shown += min(len(ids), room)
            pieces.append(f"{kind} {listed}" if room else f"{kind} ({len(ids)})")
        parts.append("; ".join(pieces) + (f" on {lane}" if len(by_lane) > 1 or lane else ""))
    return " | ".join(parts)
