"""One case-iteration, end to end: isolate → thread → credentials → seed → converse → grade → clean up.

The pipeline never raises for something that went wrong inside a case: an instance, seed, model or
conversation failure becomes a :class:`CaseResult` with ``error`` (attribution ``framework_issue``,
or ``timeout`` when the case's outer deadline fired), so the other cases keep running. Cancellation
(Ctrl-C) is the one thing that propagates, after the cleanup ran.

Cleanup always runs, shielded from cancellation and bounded in time: the seed's resources, every
workflow / data table / agent the agent built in this thread (found in the record *and* in the
thread's stored messages, so an interrupted conversation leaves nothing behind either), the declared
credentials, and the thread itself. Nothing that existed before the run started is ever deleted.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import secrets
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import anyio

from threadcase.case.loader import LoadedCase
from threadcase.credentials.seeder import CredentialSeeder
from threadcase.errors import ReplayError, RunError, SeedingError
from threadcase.grading import grade_case
from threadcase.grading.calibration import CalibrationResult
from threadcase.grading.execution import declared_scenario_tables, prepare_scenario_tables
from threadcase.grading.stored_executions import RecordingScenarioClient
from threadcase.harness.conversation import Budgets, converse
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.ledger import CaseLedger, RunLedger
from threadcase.instance import EventSubscription, InstanceClient
from threadcase.instance.deletion import delete_resource
from threadcase.leftovers import ResourceKind
from threadcase.models import ModelSettings, ModelUsage
from threadcase.records import RunRecord, SeedOutcome, created_ids, utc_now
from threadcase.seeds.inline import InstanceSnapshot, RestoredSeed, cleanup_created, restore_inline_seed
from threadcase.user_proxy.stats import proxy_usage
from threadcase.verdicts import (
    Attribution,
    CaseResult,
    ErrorCause,
    ErrorInfo,
    PremiseResult,
    UnitVerdict,
    case_status,
)

__all__ = [
    "LaneResources",
    "PipelineConfig",
    "WorkItem",
    "calls_in_messages",
    "created_ids",
    "run_case",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkItem:
    """One case-iteration to run."""

    case: LoadedCase
    iteration: int

    @property
    def key(self) -> str:
        return self.case.slug


@dataclass
class LaneResources:
    """What the runner keeps per lane: logged-in clients, the project, and pre-run ids."""

    clients: list[InstanceClient]
    """The clients to this instance (one, or a few on an https:// lane); cases take them in turn (see
    ``runner.CASES_PER_CLIENT``)."""
    project_id: str
    preexisting: set[str] = field(default_factory=set)
    """Ids of workflows, data tables, folders and credentials that existed before the run: never deleted."""
    snapshot: InstanceSnapshot | None = None
    """What existed on the instance when the run started: seed eviction only ever deletes leftovers
    from before this run (never what a concurrent case of this run created)."""
    _turn: itertools.count[int] = field(default_factory=itertools.count)

    def pick(self) -> InstanceClient:
        """The next client, round robin."""
        return self.clients[next(self._turn) % len(self.clients)]


@dataclass(frozen=True)
class PipelineConfig:
    """Run-wide settings the pipeline needs (a slice of ``RunSettings``)."""

    run_id: str
    models: ModelSettings
    budgets: Budgets
    keep_artifacts: bool = False
    replay_dir: Path | None = None
    cleanup_seconds: float = 30.0
    case_deadline_seconds: float | None = None
    """Outer bound on one case-iteration (conversation budgets sit inside it); None = derived."""
    headers: dict[str, str] | None = None
    calibration: CalibrationResult | None = None
    """The judge's calibration for this run; a failed one makes its verdicts not judged."""
    environ: Mapping[str, str] | None = None
    """The ``EVAL_*`` token variables every credential seeder of the run uses (the runner's
    ``token_environment()`` at run start); None = each seeder reads the process environment."""
    source_context: Mapping[str, Any] | None = None
    """More ``sourceContext`` keys for every thread created (``threadcase control`` switches one demo
    misbehaviour on per thread with ``demoMisbehave``, so several controls share one instance)."""
    debug: bool = False
    """Record each error's traceback (``THREADCASE_DEBUG=1``), redacted."""
    ledger: RunLedger | None = None
    """The run's ledger of what is on the instances (see :mod:`.ledger`); None = leftovers are not reported."""
    retry_pause_seconds: float = 0.5
    """Pause before cleanup's second sweep over what its first one could not delete."""


def _deadline(config: PipelineConfig, item: WorkItem) -> float:
    if config.case_deadline_seconds is not None:
        return config.case_deadline_seconds
    # The conversation enforces its own budgets; this only catches a hang outside them (seed,
    # grading, a stuck call) so one case can never hold the run forever.
    factor = config.budgets.complex_factor if item.case.case.complexity == "complex" else 1.0
    return config.budgets.turn_seconds * factor * (config.budgets.conversation_turns + 1) + 600.0


def _leaves(exc: BaseException) -> list[BaseException]:
    """The leaf exceptions of an exception group (nested groups flattened); ``[exc]`` for any other."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _error_info(exc: BaseException, *, debug: bool = False, redact: Callable[[str], str] = str) -> ErrorInfo:
    """The error a case-iteration records: an exception group unwrapped to its leaves, so the cause is
    kept; tracebacks only under debug, and every text through ``redact``."""
    leaves = _leaves(exc)
    causes = [
        ErrorCause(
            type=type(leaf).__name__,
            message=redact(str(leaf).strip() or type(leaf).__name__)[:2000],
            # A leaf never raised on its own has no traceback of its own: the group's says where it surfaced.
            traceback=redact("".join(traceback.format_exception(leaf if leaf.__traceback__ else exc)))[-8000:]
            if debug
            else None,
        )
        for leaf in leaves
    ]
    attribution = next((a for a in (getattr(leaf, "attribution", None) for leaf in leaves) if a), "framework_issue")
    if attribution not in get_args(Attribution):
        attribution = "framework_issue"
    if len(causes) == 1:
        kind, message = causes[0].type, causes[0].message
    else:
        kind = type(exc).__name__
        message = f"{len(causes)} errors: " + "; ".join(f"{c.type}: {c.message}" for c in causes)
    return ErrorInfo(type=kind, message=message[:2000], attribution=attribution, causes=causes)


async def run_case(item: WorkItem, lane: Lane, config: PipelineConfig, pool: LanePool | None = None) -> CaseResult:
    """Run one case-iteration on ``lane`` and grade it; every failure inside becomes the result.

    With ``pool`` (the runner's), set-up and clean-up pass the lane's housekeeping gate and the
    conversation waits for one of the pool's conversation slots; without it nothing is gated.
    """
    resources: LaneResources = lane.state["resources"]
    client = resources.pick()
    loaded = item.case
    case = loaded.case
    started = utc_now()
    clock = time.perf_counter()
    thread_id = str(uuid.uuid4())
    run_suffix = secrets.token_hex(4)  # 8 random hex digits, as uuid4().hex[:8] gave, for less
    record = RunRecord(
        case_slug=loaded.slug,
        iteration=item.iteration,
        thread_id=thread_id,
        base_url=lane.base_url,
        mode=case.mode,
    )
    credentials = CredentialSeeder(client, environ=config.environ)
    ledger = CaseLedger(
        lane=lane.base_url,
        project_id=resources.project_id,
        case_slug=loaded.slug,
        iteration=item.iteration,
        keep=resources.preexisting,
        credentials_only=config.keep_artifacts,
    )
    ledger.watch(lambda: [("credential", c.id) for c in credentials.seeded])
    # Read at the moment the ledger is asked: mid-conversation, what the agent has built so far.
    ledger.watch(lambda: _kinds(created_ids(_calls_in_turns(record.live_turns))))
    if config.ledger is not None:
        config.ledger.open(ledger)

    async def reconcile() -> None:
        await client.cancel(thread_id)
        messages = await client.thread_messages(thread_id)
        for kind, resource_id in _kinds(created_ids(calls_in_messages(m for m in messages if not m.seeded))):
            ledger.add(kind, resource_id)

    ledger.reconcile = reconcile
    seed: RestoredSeed | None = None
    thread_created = False
    settled = False
    scenario_tables: list[str] = []
    verdicts: list[UnitVerdict] = []
    premises: list[PremiseResult] = []
    judge: dict[str, Any] = {}
    grading_usage: dict[str, ModelUsage] = {}
    error: ErrorInfo | None = None

    def housekeeping() -> contextlib.AbstractAsyncContextManager[Any]:
        return pool.housekeeping(lane) if pool is not None else contextlib.nullcontext()

    def creating() -> contextlib.AbstractAsyncContextManager[Any]:
        # A restore or a table creation in flight when an interrupt lands must still record its ids.
        return config.ledger.creating() if config.ledger is not None else contextlib.nullcontext()

    slot_wait = 0.0
    try:
        # fail_after, spelled out: its two generator context managers were a visible share of a case's
        # fixed cost. TimeoutError when the deadline (not something else) cancelled the scope.
        with anyio.CancelScope(deadline=anyio.current_time() + _deadline(config, item)) as deadline:
            source_context: dict[str, Any] = {
                **(config.source_context or {}),
                "evalCase": loaded.slug,
                "evalIteration": item.iteration,
            }
            async with contextlib.AsyncExitStack() as streams:
                events: EventSubscription | None = None
                live_opening: str | None = None
                seed_failed = False
                async with housekeeping():
                    # Set before the call: a Ctrl-C while the request is in flight may still have created
                    # it, and deleting a thread that does not exist is harmless.
                    thread_created = True
                    ledger.add("thread", thread_id)
                    await client.create_thread(thread_id, resources.project_id, source_context=source_context)
                    if case.seed is None and not declared_scenario_tables(case):
                        # Only the credential pin happens on the thread before the first message, so the
                        # event stream connects meanwhile: one round trip less before every conversation.
                        events = await streams.enter_async_context(
                            client.subscribe(thread_id, connect_in_background=True)
                        )
                    async with creating():
                        await credentials.seed(thread_id, list(case.credentials))
                    # Before the build, so the agent can find the scenario's table and bind its real id.
                    async with creating():
                        scenario_tables = await prepare_scenario_tables(client, case, thread_id=thread_id)
                    for table_id in scenario_tables:
                        ledger.add("data_table", table_id)
                    if case.seed is not None:
                        snapshot = resources.snapshot or InstanceSnapshot(project_id=resources.project_id)
                        try:
                            async with creating():
                                if case.seed.mode == "inline":
                                    seed = await restore_inline_seed(
                                        client,
                                        case.seed,
                                        thread_id=thread_id,
                                        project_id=resources.project_id,
                                        run_suffix=run_suffix,
                                        snapshot=snapshot,
                                    )
                                else:
                                    from threadcase.seeds.replay import restore_replay_seed

                                    seed, live_opening = await restore_replay_seed(
                                        client,
                                        case.seed,
                                        thread_id=thread_id,
                                        project_id=resources.project_id,
                                        run_suffix=run_suffix,
                                        snapshot=snapshot,
                                        replay_dir=config.replay_dir,
                                    )
                                record.seed = seed.outcome
                                ledger.watch(lambda: _seed_ids(seed))
                        except (SeedingError, ReplayError) as exc:
                            # A premise of the case, not a crash: graded below, every unit not judged with the reason.
                            seed_failed = True
                            record.seed = SeedOutcome(mode=case.seed.mode, restored=False, error=str(exc)[:2000])
                if not seed_failed:
                    # Waiting for a free conversation slot is the run's pace, not this case's time: the
                    # deadline stops meanwhile, and the wait is not in the case's seconds.
                    queued, remaining = time.perf_counter(), deadline.deadline - anyio.current_time()
                    if deadline.cancel_called or remaining <= 0:
                        # The deadline fired as set-up ended: paused now, its cancellation would be
                        # absorbed on the way out (the scope no longer counts as expired) and the
                        # case would end with neither a conversation nor an error.
                        raise TimeoutError
                    deadline.deadline = math.inf
                    async with pool.conversation(lane, item.key) if pool is not None else contextlib.nullcontext():
                        deadline.deadline = anyio.current_time() + remaining
                        slot_wait = time.perf_counter() - queued
                        record = await converse(
                            case,
                            client=client,
                            thread_id=thread_id,
                            project_id=resources.project_id,
                            seed=seed,
                            live_opening=live_opening,
                            credentials=credentials,
                            models=config.models,
                            budgets=config.budgets,
                            record=record,
                            headers=config.headers,
                            events=events,
                        )
            settled = seed_failed or record.ended_by in _SETTLED
            record.finished_at = record.finished_at or utc_now()
            grading = await grade_case(
                case,
                record,
                # Each mocked execution is kept in the record: `threadcase regrade` verifies it again.
                client=RecordingScenarioClient(client, record),
                models=config.models,
                calibration=config.calibration,
            )
            verdicts, premises, judge = list(grading.verdicts), list(grading.premises), dict(grading.judge)
            grading_usage = grading.usage
        if deadline.cancelled_caught and anyio.current_time() >= deadline.deadline:
            raise TimeoutError
    except TimeoutError:
        error = ErrorInfo(
            type="CaseTimeout",
            message=f"case-iteration exceeded its outer deadline of {_deadline(config, item):.0f} s",
            attribution="timeout",
        )
    except RunError as exc:
        error = _error_info(exc, debug=config.debug, redact=client.redactor.text)
    except anyio.get_cancelled_exc_class():
        try:
            await _cleanup(
                client, resources, config, record, seed, credentials, ledger, thread_created, scenario_tables
            )
        finally:
            if config.ledger is not None:
                config.ledger.close(ledger, interrupted=True, reason=_GAVE_UP.format(config.cleanup_seconds))
        raise
    except Exception as exc:  # a bug or an unexpected answer in one case must not stop the others
        # The result carries type and message; the traceback is for whoever turns on debug logging,
        # never for the run's output.
        logger.debug("unexpected failure in case %s iteration %d", loaded.slug, item.iteration, exc_info=True)
        error = _error_info(exc, debug=config.debug, redact=client.redactor.text)
    # Shielded with its wait for the gate (bounded by the gate's patience): a Ctrl-C while a finished case
    # waits its turn to clean up must not skip the clean-up.
    with anyio.CancelScope(shield=True):
        try:
            async with housekeeping():
                await _cleanup(
                    client,
                    resources,
                    config,
                    record,
                    seed,
                    credentials,
                    ledger,
                    thread_created,
                    scenario_tables,
                    settled,
                )
        finally:
            if config.ledger is not None:
                config.ledger.close(ledger, reason=_GAVE_UP.format(config.cleanup_seconds))
    finished = utc_now()
    return CaseResult(
        run_id=config.run_id,
        case_slug=loaded.slug,
        case_file=str(loaded.path),
        iteration=item.iteration,
        lane=lane.base_url,
        started_at=started,
        finished_at=finished,
        seconds=round(time.perf_counter() - clock - slot_wait, 3),
        status=case_status(verdicts, error),
        verdicts=verdicts,
        premises=premises,
        record=record,
        error=error,
        judge={k: v for k, v in judge.items() if v is None or isinstance(v, str | int | float)},
        models=config.models.roles(),
        model_usage=_model_usage(record, grading_usage),
    )


def _model_usage(record: RunRecord, grading: Mapping[str, ModelUsage]) -> dict[str, ModelUsage]:
    """The case-iteration's token usage by role, the builder's (``agent``) beside the models' own."""
    agent = ModelUsage()
    for steps in record.usage.values():
        for step in steps:
            agent.add(
                ModelUsage(
                    calls=1,
                    input_tokens=step.inputTokens,
                    cached_input_tokens=step.cachedInputTokens,
                    output_tokens=step.outputTokens,
                )
            )
    usage = {"agent": agent, "proxy": proxy_usage(record.proxy_stats), **grading}
    return {role: used for role, used in usage.items() if used.calls}


_GAVE_UP = "cleanup gave up after {:.0f} s before deleting it"

_KIND_OF: dict[str, ResourceKind] = {
    "workflow": "workflow",
    "table": "data_table",
    "agent": "agent",
    "folder": "folder",
}


def _kinds(found: dict[str, set[str]]) -> list[tuple[ResourceKind, str]]:
    """:func:`created_ids`' answer as (leftover kind, id) pairs."""
    return [(_KIND_OF[kind], resource_id) for kind, ids in found.items() for resource_id in ids]


def _seed_ids(seed: RestoredSeed | None) -> list[tuple[ResourceKind, str]]:
    """What a seed restore created and cleanup has not deleted yet (its lists shrink as it deletes)."""
    if seed is None:
        return []
    created = seed.created
    kinds: list[tuple[ResourceKind, list[str]]] = [
        ("agent", created.agent_ids),
        ("workflow", created.workflow_ids),
        ("data_table", created.data_table_ids),
        ("folder", created.folder_ids),
        ("project", created.project_ids),
    ]
    return [(kind, resource_id) for kind, ids in kinds for resource_id in ids]


_SETTLED = frozenset({"done", "script-exhausted", "budget", "single-prompt"})
"""Conversation endings after which no run is left going on the instance."""


def _calls_in_turns(turns: Iterable[Any]) -> list[tuple[str, Any, Any]]:
    return [(c.tool_name, c.args, c.result) for t in turns for c in t.tool_calls if c.error is None]


def calls_in_messages(messages: Iterable[Any]) -> list[tuple[str, Any, Any]]:
    """``(tool name, input, output)`` of every finished tool call in a thread's stored messages."""
    calls = []
    for message in messages:
        for block in message.blocks:
            if block.get("type") == "tool-call" and "output" in block:
                calls.append((str(block.get("toolName", "")), block.get("input"), block.get("output")))
    return calls


async def _cleanup(
    client: InstanceClient,
    resources: LaneResources,
    config: PipelineConfig,
    record: RunRecord,
    seed: RestoredSeed | None,
    credentials: CredentialSeeder,
    ledger: CaseLedger,
    thread_created: bool,
    scenario_tables: list[str],
    settled: bool = False,
) -> None:
    """Delete everything this case-iteration created; ``settled`` = the conversation ended normally.

    A settled conversation's record already names everything the agent made (its tool calls and the
    collected artifacts), so the extra stock-taking an interrupted one needs is skipped. What a first
    sweep could not delete gets a second try after a short pause; what is still there after that is
    in ``ledger`` with the reason, for the run to report.
    """
    # Shielded so Ctrl-C cannot interrupt it half way; bounded so a dead instance cannot hang the exit
    # (one scope does both: a shield keeps out only cancellation from outside, never its own deadline).
    with anyio.CancelScope(shield=True, deadline=anyio.current_time() + config.cleanup_seconds) as scope:
        if thread_created and not settled:
            try:
                # First of all: an interrupted conversation may have left a run going, and whatever it
                # builds after the sweep (or after a third Ctrl-C) nobody would know of.
                await client.cancel(record.thread_id)
            except Exception as exc:
                record.warnings.append(f"cleanup: cancel: {exc}")
        try:
            await credentials.cleanup()
        except Exception as exc:
            record.warnings.append(f"cleanup: credentials: {exc}")
        for credential_id, reason in credentials.failures.items():
            ledger.failed("credential", credential_id, reason)
        if not config.keep_artifacts:
            await _sweep(client, resources, config, record, seed, ledger, thread_created, scenario_tables, settled)
        left = ledger.pending()
        if left:
            await anyio.sleep(config.retry_pause_seconds)
            for kind, resource_id in ledger.pending():
                await _delete_one(client, ledger, kind, resource_id, record)
    if scope.cancelled_caught:
        record.warnings.append(f"cleanup: gave up after {config.cleanup_seconds:.0f} s; leftovers possible")


async def _sweep(
    client: InstanceClient,
    resources: LaneResources,
    config: PipelineConfig,
    record: RunRecord,
    seed: RestoredSeed | None,
    ledger: CaseLedger,
    thread_created: bool,
    scenario_tables: list[str],
    settled: bool,
) -> None:
    """The first sweep: the seed's artifacts, what the agent built, the scenario tables, the thread."""
    if seed is not None:
        try:
            await cleanup_created(client, seed.created)
        except Exception as exc:
            record.warnings.append(f"cleanup: seed: {exc}")
    found = created_ids(_calls_in_turns(record.live_turns))
    if thread_created and not settled:
        try:
            messages = await client.thread_messages(record.thread_id)
            more = created_ids(calls_in_messages(m for m in messages if not m.seeded))
            for kind, ids in more.items():
                found[kind] |= ids
        except Exception as exc:
            record.warnings.append(f"cleanup: could not read thread messages: {exc}")
    found["table"] |= set(scenario_tables)
    keep = resources.preexisting
    # Folders last: by now the workflows the agent moved into them are gone.
    for kind in ("workflow", "table", "agent", "folder"):
        for resource_id in sorted(found[kind] - keep):
            ledger.add(_KIND_OF[kind], resource_id)
            await _delete_one(client, ledger, _KIND_OF[kind], resource_id, record)
    if thread_created:
        await _delete_one(client, ledger, "thread", record.thread_id, record)


async def _delete_one(
    client: InstanceClient, ledger: CaseLedger, kind: ResourceKind, resource_id: str, record: RunRecord
) -> None:
    try:
        await delete_resource(client, kind, resource_id, ledger.project_id)
    except Exception as exc:
        ledger.failed(kind, resource_id, f"delete failed: {exc}")
        record.warnings.append(f"cleanup: {kind} {resource_id}: {exc}")
        return
    ledger.gone(kind, resource_id)
