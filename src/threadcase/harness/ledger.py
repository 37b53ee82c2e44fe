"""The run's ledger of what its case-iterations put on the instances and have not deleted yet.

Each case-iteration keeps a :class:`CaseLedger` from its first request to the end of its cleanup: the
thread, the declared credentials, the seed's artifacts, the scenario tables, and whatever its agent
built (read from the record's tool calls the moment it is asked, so it is current mid-conversation).
Cleanup marks what it deleted and why it could not delete the rest. The :class:`RunLedger` holds the
open ones, so at any moment — a third Ctrl-C included — the run can say exactly what is on the
instance because of it, and it turns whatever a closed case-iteration left into a
:class:`~threadcase.leftovers.LeftoverReport` for the journal.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

import anyio
import anyio.lowlevel

from threadcase.leftovers import DELETE_ORDER, Leftover, LeftoverReport, ResourceKind

__all__ = ["CaseLedger", "RunLedger"]

_Key = tuple[ResourceKind, str]
NOT_CLEANED = "not cleaned up yet (the run stopped first)"


class CaseLedger:
    """What one case-iteration created on its lane, and what of it cleanup removed."""

    def __init__(
        self,
        *,
        lane: str,
        project_id: str,
        case_slug: str,
        iteration: int,
        keep: Iterable[str] = (),
        credentials_only: bool = False,
    ) -> None:
        self.lane = lane
        self.project_id = project_id
        self.case_slug = case_slug
        self.iteration = iteration
        self._keep = keep
        """Ids that existed before the run: never ours to delete, never leftovers."""
        self._credentials_only = credentials_only
        """``--keep-artifacts``: everything but credentials stays on purpose."""
        self._known: dict[_Key, None] = {}
        self._sources: list[Callable[[], Iterable[_Key]]] = []
        self.reconcile: Callable[[], Awaitable[None]] | None = None
        """Asks the instance what this case-iteration's thread built (stopping its run first): a run still
        going when the harness must exit may have built what no event has told of yet."""
        self._gone: set[_Key] = set()
        self._why: dict[_Key, str] = {}

    def add(self, kind: ResourceKind, resource_id: str) -> None:
        """This case-iteration created (or may have created) ``resource_id``."""
        self._known.setdefault((kind, resource_id), None)

    def watch(self, source: Callable[[], Iterable[_Key]]) -> None:
        """Ask ``source`` what it holds whenever the ledger is read (a seeder's list, a record's calls)."""
        self._sources.append(source)

    def gone(self, kind: ResourceKind, resource_id: str) -> None:
        """``resource_id`` was deleted (or found already gone)."""
        self._gone.add((kind, resource_id))
        self._why.pop((kind, resource_id), None)

    def failed(self, kind: ResourceKind, resource_id: str, reason: str) -> None:
        """Deleting ``resource_id`` failed; ``reason`` says how (one line)."""
        self._why[(kind, resource_id)] = " ".join(reason.split())[:500]

    def pending(self) -> list[tuple[ResourceKind, str]]:
        """Everything known to be ours and not yet deleted, in deletion order."""
        known = dict(self._known)
        for source in self._sources:
            for key in source():
                known.setdefault(key, None)
        keep = set(self._keep)
        found = [
            key
            for key in known
            if key not in self._gone and key[1] not in keep and (key[0] == "credential" or not self._credentials_only)
        ]
        return sorted(found, key=lambda key: DELETE_ORDER.index(key[0]))

    def outstanding(self, reason: str = NOT_CLEANED) -> list[Leftover]:
        """:meth:`pending` as leftovers, each with its failure's reason (else ``reason``)."""
        return [
            Leftover(
                lane=self.lane,
                kind=kind,
                id=resource_id,
                project_id=self.project_id if kind in ("data_table", "folder", "agent") else None,
                case_slug=self.case_slug,
                iteration=self.iteration,
                reason=self._why.get((kind, resource_id), reason),
            )
            for kind, resource_id in self.pending()
        ]


class RunLedger:
    """The open case ledgers of one run, and every leftover report it produced.

    ``on_report`` sees each :class:`LeftoverReport` the moment it exists (the runner journals it and
    prints it). Synchronous throughout: it is called from cancelled and shielded code, and at exit.
    """

    def __init__(self, run_id: str, on_report: Callable[[LeftoverReport], None] | None = None) -> None:
        self.run_id = run_id
        self.on_report = on_report
        self._open: dict[int, CaseLedger] = {}
        self.reports: list[LeftoverReport] = []
        self.aborted = False
        self._creating = 0
        self._settled: anyio.Event | None = None

    @contextlib.asynccontextmanager
    async def creating(self) -> AsyncIterator[None]:
        """A request that creates something on the instance: shielded, so an interrupt cannot lose its
        answer (and with it the new id), and counted, so an exit can wait a moment for it (:meth:`settle`)."""
        self._creating += 1
        try:
            with anyio.CancelScope(shield=True):
                yield
        finally:
            self._creating -= 1
            if not self._creating and self._settled is not None:
                self._settled.set()
        await anyio.lowlevel.checkpoint_if_cancelled()

    async def settle(self, seconds: float) -> None:
        """Up to ``seconds``: let the creating requests in flight be answered (and recorded), and ask each
        open case-iteration's thread what it built (:attr:`CaseLedger.reconcile`), all at once."""

        async def creations() -> None:
            while self._creating:
                self._settled = anyio.Event()
                await self._settled.wait()

        async def reconcile(ledger: CaseLedger) -> None:
            with contextlib.suppress(Exception):  # what cannot be asked stays as the ledger knows it
                if ledger.reconcile is not None and any(kind == "thread" for kind, _ in ledger.pending()):
                    await ledger.reconcile()

        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as group:
                group.start_soon(creations)
                for ledger in list(self._open.values()):
                    group.start_soon(reconcile, ledger)

    def open(self, ledger: CaseLedger) -> None:
        """Track ``ledger`` until :meth:`close`."""
        self._open[id(ledger)] = ledger

    def close(self, ledger: CaseLedger, *, interrupted: bool = False, reason: str = NOT_CLEANED) -> list[Leftover]:
        """Stop tracking ``ledger``; report (and return) what its cleanup left behind."""
        if self._open.pop(id(ledger), None) is None:
            return []  # already reported by :meth:`abort`
        left = ledger.outstanding(reason)
        if left:
            self._report(left, interrupted=interrupted)
        return left

    def outstanding(self, reason: str = NOT_CLEANED) -> list[Leftover]:
        """What every open case-iteration has on its instance right now."""
        return [leftover for ledger in list(self._open.values()) for leftover in ledger.outstanding(reason)]

    def abort(self, reason: str) -> list[Leftover]:
        """The run exits now: report everything still open as left behind (once) and return it."""
        self.aborted = True
        left = self.outstanding(reason)
        self._open.clear()
        if left:
            self._report(left, interrupted=True)
        return left

    def leftovers(self) -> list[Leftover]:
        """Every leftover reported so far, once each."""
        seen: dict[tuple[str, str, str], Leftover] = {}
        for report in self.reports:
            for leftover in report.resources:
                seen.setdefault(leftover.key, leftover)
        return list(seen.values())

    def _report(self, left: list[Leftover], *, interrupted: bool) -> None:
        report = LeftoverReport(run_id=self.run_id, interrupted=interrupted, resources=left)
        self.reports.append(report)
        if self.on_report is not None:
            self.on_report(report)
