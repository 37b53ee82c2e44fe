"""Run a suite: cases × iterations fanned out over lanes, journaled as they finish, reported at the end.

:func:`run_suite` is the Python API behind ``threadcase run`` (each CLI flag is one keyword of
:class:`RunSettings`). With no base URL it starts the embedded demo instance in-process on a free
port with a temporary database and stops it at the end.

Interruption (SIGINT / SIGTERM, counted; see :mod:`.interrupts`): the first lets the running
conversations finish and starts nothing new, the second stops them, the third exits at once after
journaling what is left on the instance. Every stopped case-iteration still cleans up after itself
(shielded, bounded), and the reports are written from what finished. The journal already holds every
finished case-iteration by then, and a :class:`~threadcase.leftovers.LeftoverReport` for every one
whose cleanup left something behind.

Every line the run writes passes through one :class:`~threadcase.redaction.Redactor` that knows every
configured secret (:func:`run_redactor`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import gc
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential_jitter

from threadcase._util.fanout import fan_out
from threadcase.demo_instance.settings import MISBEHAVIOURS
from threadcase.errors import ConfigError, InstanceError
from threadcase.harness.interrupts import Interrupts
from threadcase.harness.journal import JOURNAL_NAME, JournalWriter
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.ledger import RunLedger
from threadcase.harness.provenance import hash_cases_cooperatively, run_context
from threadcase.harness.shard import Shard, select_shard
from threadcase.leftovers import Leftover, LeftoverReport, describe_leftovers
from threadcase.models import ModelSettings
from threadcase.redaction import Redactor, strip_userinfo
from threadcase.verdicts import CaseHashes, CaseResult, RunContext

if TYPE_CHECKING:
    from threadcase.case.loader import LoadedCase
    from threadcase.grading.calibration import CalibrationResult
    from threadcase.harness.pipeline import LaneResources, PipelineConfig

__all__ = [
    "KNOWN_MISBEHAVIOURS",
    "OpenRun",
    "RunOutcome",
    "RunSettings",
    "calibrate_judge",
    "default_output_dir",
    "execute",
    "open_run",
    "prepare_output_dir",
    "run_redactor",
    "run_suite",
    "say_left_on_exit",
]

# One list, owned by the demo instance (settings only: importing it starts nothing).
KNOWN_MISBEHAVIOURS = MISBEHAVIOURS


def default_output_dir(now: datetime | None = None) -> Path:
    """``./threadcase-results/<UTC timestamp>/`` (sortable, colon-free so it works everywhere)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return Path("threadcase-results") / moment.strftime("%Y%m%dT%H%M%SZ")


class RunSettings(BaseModel):
    """Everything ``threadcase run`` takes; each field is one flag with a ``THREADCASE_*`` env twin."""

    model_config = ConfigDict(extra="forbid")

    suite: Path | None = None
    """Case directory or file; None = the default suite (``THREADCASE_SUITE`` or ``cases/golden``)."""
    filter: str | None = None
    """Comma-separated slug substrings (OR)."""
    exclude: str | None = None
    """Comma-separated slug substrings to leave out (applied after ``filter``)."""
    tier: str | None = None
    """Only cases whose ``datasets`` contain this value."""
    tag: str | None = None
    """Only cases carrying this tag."""
    base_urls: list[str] = Field(default_factory=list)
    """Instances to drive, one lane each; empty = start the embedded demo instance."""
    email: str | None = None
    """Login of the instance; None = the demo instance's owner."""
    password: SecretStr | None = None
    iterations: int = Field(default=1, ge=1, le=1000)
    concurrency: int = Field(default=8, ge=1, le=1000)
    """Conversations running at once, across all lanes. Up to as many more case-iterations may be
    setting up ahead of a free slot or cleaning up after one (see ``harness/lanes.py``)."""
    lane_cap: int | None = Field(default=None, ge=1)
    """Conversations (builds) running at once on one lane; None = ``concurrency``."""
    timeout_seconds: float = Field(default=900.0, gt=0)
    """Budget of one user turn (``complex`` cases get 1.5×)."""
    output_dir: Path | None = None
    """Where the journal and reports go; None = ``./threadcase-results/<UTC timestamp>/``."""
    keep_artifacts: bool = False
    """Keep the workflows, tables, agents and threads a case created (credentials are always deleted)."""
    demo_misbehave: list[str] = Field(default_factory=list)
    """Misbehaviours of the embedded demo instance (only without a base URL)."""
    demo_faults: float = Field(default=0.0, ge=0.0, le=1.0)
    """Fault rate of the embedded demo instance (only without a base URL)."""
    demo_latency_ms: int = Field(default=0, ge=0)
    """Per agent-step latency of the embedded demo instance (only without a base URL)."""
    demo_seed: int = 0
    """Seed of the embedded demo instance's fault generator (a faulty run is reproducible)."""
    models: ModelSettings = Field(default_factory=ModelSettings)
    replay_dir: Path | None = None
    """Exported traces (``<threadId>.json``) to replay from instead of LangSmith."""
    inactivity_seconds: float | None = Field(default=None, gt=0)
    """No event for this long cancels a run as stalled; None = the conversation's default."""
    cleanup_seconds: float = Field(default=30.0, gt=0)
    calibration_set: Path | None = None
    """Hand-labelled items the judge must agree with before its verdicts count; None =
    ``cases/calibration/demo.jsonl``. Used only when a judge model is configured."""
    calibration_threshold: float = Field(default=0.9, ge=0.0, le=1.0)
    """Minimum agreement with the labels; below it every judge verdict of the run is not judged."""
    skip_calibration: bool = False
    """Let an uncalibrated judge's verdicts count (recorded in each result's judge info)."""
    shard: Shard | None = None
    """Run only this part of the selected cases (``"I/N"`` is accepted); None = all of them."""
    debug: bool = False
    """Record each case error's traceback in the journal (``THREADCASE_DEBUG=1``), redacted."""

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: object) -> object:
        return Shard.parse(value) if isinstance(value, str) else value

    @field_validator("base_urls")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        urls = [v.strip().rstrip("/") for v in value if v.strip()]
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"base URL {url!r} must start with http:// or https://")
        return urls

    @field_validator("demo_misbehave")
    @classmethod
    def _misbehave(cls, value: list[str]) -> list[str]:
        names = [v.strip() for v in value if v.strip()]
        unknown = [n for n in names if n not in KNOWN_MISBEHAVIOURS]
        if unknown:
            raise ValueError(
                f"unknown demo misbehaviour {unknown[0]!r}; known: {', '.join(sorted(KNOWN_MISBEHAVIOURS))}"
            )
        return names


T = TypeVar("T")


class _Running:
    """One case-iteration in :func:`execute`: its cancel scope, and whether its conversation began."""

    __slots__ = ("conversing", "scope")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.conversing = False


_CURRENT: contextvars.ContextVar[_Running | None] = contextvars.ContextVar("threadcase_running", default=None)
"""The case-iteration the current task runs (read by the pool's conversation hook)."""


async def execute(
    items: Sequence[T],
    pool: LanePool,
    worker: Callable[[T, Lane], Awaitable[CaseResult]],
    *,
    key: Callable[[T], str],
    on_result: Callable[[CaseResult], object] | None = None,
    handle_signals: bool = True,
    interrupts: Interrupts | None = None,
) -> tuple[list[CaseResult], bool]:
    """Run ``items`` through ``worker`` on the pool's lanes; returns (finished results, interrupted).

    ``on_result`` sees each result the moment it exists. ``interrupts``: the run's (see
    :mod:`.interrupts`); without one, SIGINT/SIGTERM are received here when ``handle_signals`` and we
    are on the main thread. At the first interrupt nothing new starts and case-iterations that have not
    begun their conversation are cancelled; at the second the running conversations are cancelled too.
    A cancelled worker's cleanup is its own (shielded). A worker holds its lane from admission to its
    return; the pool's conversation and housekeeping gates are the worker's to pass.
    """
    finished: list[CaseResult] = []
    own = interrupts is None
    control = interrupts or Interrupts()
    running: set[_Running] = set()

    def stop(level: int) -> None:
        for case in list(running):
            if level >= 2 or not case.conversing:
                case.scope.cancel()

    def conversation_started() -> None:
        case = _CURRENT.get()
        if case is None:
            return
        case.conversing = True
        if control.level:
            case.scope.cancel()  # it took its slot after the first interrupt: it must not start

    async def one(item: T) -> None:
        if control.level:
            return
        case = _Running()
        token = _CURRENT.set(case)
        running.add(case)
        try:
            with case.scope:
                async with pool.lease(key(item)) as lane:
                    result = await worker(item, lane)
                finished.append(result)
                if on_result is not None:
                    on_result(result)
        finally:
            running.discard(case)
            _CURRENT.reset(token)

    pool.on_conversation = conversation_started
    forget = control.on_level(stop)
    try:
        watching = control.watching() if own and handle_signals else contextlib.nullcontext(control)
        async with watching:
            # The pool bounds what runs; the fan-out keeps only a few times that many tasks, so a case
            # blocked on its lane (same case running there) rarely holds back another, and a huge suite
            # does not park thousands of tasks in the pool's admission queue.
            await fan_out(items, one, limit=max(1, min(len(items), 4 * pool.concurrency)))
    finally:
        forget()
        pool.on_conversation = None
    return finished, control.interrupted


@contextlib.asynccontextmanager
async def _instances(settings: RunSettings) -> AsyncIterator[tuple[list[str], str, str]]:
    """Yield (base URLs, email, password): the given lanes, or an embedded demo instance."""
    if settings.base_urls:
        demo_flags = {
            "--demo-misbehave": bool(settings.demo_misbehave),
            "--demo-faults": settings.demo_faults > 0,
            "--demo-latency-ms": settings.demo_latency_ms > 0,
        }
        given = [flag for flag, set_ in demo_flags.items() if set_]
        if given:
            # Silently ignoring them would report a "misbehaving" run that was nothing of the kind.
            raise ConfigError(f"{', '.join(given)} only apply to the embedded demo instance, not to --base-url")
        if not settings.email or settings.password is None:
            raise ConfigError(
                "--email and --password (THREADCASE_EMAIL / THREADCASE_PASSWORD) are required with --base-url"
            )
        yield settings.base_urls, settings.email, settings.password.get_secret_value()
        return
    from threadcase.demo_instance import DemoSettings, demo_server
    from threadcase.demo_instance.settings import DemoConfigError

    demo = DemoSettings(
        misbehave=frozenset(settings.demo_misbehave),
        faults=settings.demo_faults,
        latency_ms=settings.demo_latency_ms,
        seed=settings.demo_seed,
    )
    email = settings.email or demo.email
    password = settings.password.get_secret_value() if settings.password else demo.password.get_secret_value()
    if settings.email or settings.password:
        demo = demo.model_copy(update={"email": email, "password": SecretStr(password)})
    try:
        async with demo_server(demo) as url:
            yield [url], email, password
    except DemoConfigError as exc:  # only the demo raises it: a setting it cannot use
        raise ConfigError(str(exc)) from None


CASES_PER_CLIENT = 4
"""Concurrent cases sharing one HTTP client: httpx's connection pool scans every connection it holds
on each request, and each running case holds an event stream open, so one client for fifty cases
spends its time scanning; a few clients per lane keep each pool small."""
MAX_CLIENTS_PER_LANE = 16


def clients_per_lane(cap: int) -> int:
    """How many clients a lane opens for ``cap`` concurrent cases (see :data:`CASES_PER_CLIENT`)."""
    return min(MAX_CLIENTS_PER_LANE, max(1, -(-cap // CASES_PER_CLIENT)))


LANE_OPEN_PATIENCE = 30.0
"""Seconds a lane keeps retrying a transient failure (a 503, no answer) while it logs in and takes stock.

Each call already retries a few times; at a 0.4 fault rate one login in forty still outlasted that and
aborted the whole run. An instance that answers nothing but 503s for this long is not ready."""


async def _patiently(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, repeated on transient instance failures for up to :data:`LANE_OPEN_PATIENCE` seconds."""
    async for attempt in AsyncRetrying(
        stop=stop_after_delay(LANE_OPEN_PATIENCE),
        wait=wait_exponential_jitter(multiplier=0.25, max=2.0, jitter=0.25),
        retry=retry_if_exception(lambda exc: isinstance(exc, InstanceError) and exc.transient),
        reraise=True,
    ):
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last failure")  # pragma: no cover


async def _open_lane(stack: contextlib.AsyncExitStack, url: str, email: str, password: str, cap: int) -> LaneResources:
    """Log in to one instance (a few clients, see :data:`CASES_PER_CLIENT`) and note what pre-exists."""
    from threadcase.harness.pipeline import LaneResources
    from threadcase.instance import InstanceClient
    from threadcase.seeds.inline import InstanceSnapshot, take_snapshot

    first = InstanceClient(url, email=email, password=password)
    healthy = await first.health()
    if not healthy:
        await first.aclose()
        raise InstanceError(
            f"instance not ready at {first.base_url} (GET /healthz/readiness): start it or fix --base-url",
            method="GET",
            path="/healthz/readiness",
        )
    stack.push_async_callback(first.aclose)
    try:
        await _patiently(first.login)
    except InstanceError as exc:
        if exc.status in (400, 401, 403):
            raise ConfigError(f"login to {first.base_url} refused for {email!r}: check --email / --password") from None
        raise
    client = first
    # One registry per lane: a claim made through any client protects the artifact, and what one client
    # learnt of the instance (it has no memory route) no other client asks again.
    claims, features = first.claims, first.features
    more = [
        InstanceClient(url, email=email, password=password, claims=claims, features=features)
        for _ in range(clients_per_lane(cap) - 1)
    ]
    for other in more:
        stack.push_async_callback(other.aclose)

    project = await _patiently(client.personal_project)
    snapshots: list[InstanceSnapshot] = []
    credential_ids: set[str] = set()

    async def take_stock() -> None:
        snapshots.append(await take_snapshot(client, project.id))

    async def list_credentials() -> None:
        credential_ids.update(c.id for c in await client.list_credentials())

    async def step(call: Callable[[], Awaitable[None]]) -> InstanceError | None:
        try:
            await _patiently(call)
        except InstanceError as exc:
            return exc
        return None

    # The first login proved the credentials; the other logins and the stock-taking are independent
    # round trips, so they all go at once (one after another they were most of the time before the
    # first case could start).
    steps: list[Callable[[], Awaitable[None]]] = [*(other.login for other in more), take_stock, list_credentials]
    failed = [exc for exc in await fan_out(steps, step, limit=len(steps)) if exc is not None]
    if failed:
        raise failed[0]
    clients = [client, *more]
    snapshot = snapshots[0]
    preexisting = set(snapshot.workflows) | credential_ids | set(snapshot.data_tables) | set(snapshot.folder_ids)
    return LaneResources(clients=clients, project_id=project.id, preexisting=preexisting, snapshot=snapshot)


async def _load_while_opening(
    settings: RunSettings, suite: Path, stack: contextlib.AsyncExitStack
) -> tuple[list[LoadedCase], Path, tuple[list[str], list[Lane]], tuple[dict[str, CaseHashes], RunContext]]:
    """Load and select the suite while the instances start and every lane logs in.

    Returns (selected cases of this shard, the prepared output directory, (base URLs, opened lanes),
    (the cases' digests, the run's context)); what was opened is entered into ``stack``. A problem
    with the suite, the selection or the output directory is raised ahead of any instance failure: it
    is the user's input, and exit 2 says so.
    """
    from threadcase.case.loader import load_suite_cooperatively, select_cases

    selected: list[LoadedCase] = []
    prepared: list[Path] = []
    stamped: list[tuple[dict[str, CaseHashes], RunContext]] = []
    load_failure: list[Exception] = []

    async def load() -> None:
        try:
            cases = select_cases(
                await load_suite_cooperatively([suite]),
                filter=settings.filter,
                exclude=settings.exclude,
                tier=settings.tier,
                tag=settings.tag,
            )
            if not cases:
                raise ConfigError(
                    f"no case in {str(suite)!r} matches the selection (filter={settings.filter!r}, "
                    f"exclude={settings.exclude!r}, tier={settings.tier!r}, tag={settings.tag!r})"
                )
            hashes = await hash_cases_cooperatively(cases)
            # Hashed before sharding: every shard of one run names the same suite.
            context = run_context(settings, suite, hashes)
            if settings.shard is not None:
                cases = select_shard(cases, settings.shard, slug=lambda loaded: loaded.slug)
            prepared.append(prepare_output_dir(settings.output_dir or default_output_dir()))
            stamped.append((hashes, context))
            selected.extend(cases)
        except Exception as exc:  # raised below, ahead of what the instances said
            load_failure.append(exc)

    urls: list[str] = []
    lanes: list[Lane] = []
    open_failure: Exception | None = None
    async with anyio.create_task_group() as loading:
        loading.start_soon(load)
        try:
            # _instances holds no cancel scope across its yield, so it may be entered in this task
            # group and left by ``stack`` after it.
            urls, email, password = await stack.enter_async_context(_instances(settings))
            cap = min(settings.lane_cap or settings.concurrency, settings.concurrency)
            for url in urls:
                if load_failure:
                    break  # the run is over before it began: no more logins
                # The lane (and everything recorded about it) goes by the URL without userinfo; the
                # clients still get the whole URL, and send its userinfo as basic auth.
                lane = Lane(strip_userinfo(url), cap=cap)
                lane.state["resources"] = await _open_lane(stack, url, email, password, cap)
                lanes.append(lane)
        except Exception as exc:
            open_failure = exc
    if load_failure:
        raise load_failure[0]
    if open_failure is not None:
        raise open_failure
    return selected, prepared[0], (urls, lanes), stamped[0]


def prepare_output_dir(path: Path) -> Path:
    """Create the output directory up front (before any instance starts) and refuse to mix runs.

    A journal already there belongs to another run: appending to it would merge two runs' results
    into one set of statistics (two "iteration 0"s feeding pass@k).
    """
    journal = path / JOURNAL_NAME
    try:
        path.mkdir(parents=True, exist_ok=True)
        taken = journal.exists() and journal.stat().st_size > 0
    except OSError as exc:
        raise ConfigError(f"--output-dir {str(path)!r}: cannot create it ({exc.strerror or exc})") from None
    if taken:
        raise ConfigError(
            f"--output-dir {str(path)!r} already holds a run's journal; choose another directory "
            "(threadcase report JOURNAL rebuilds the reports of that run)"
        )
    try:
        # Created now, empty: a directory we may not write to must stop the run before any case runs,
        # not when the first result has nowhere to go.
        journal.touch()
        probe = path / ".threadcase-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"--output-dir {str(path)!r}: cannot write there ({exc.strerror or exc}); choose a writable directory"
        ) from None
    return path


async def calibrate_judge(
    models: ModelSettings, *, calibration_set: Path | None, calibration_threshold: float
) -> CalibrationResult:
    """Grade the hand-labelled calibration set with the configured judge (``run`` and ``regrade`` do, first)."""
    from threadcase.case.loader import bundled_path
    from threadcase.grading.calibration import DEFAULT_SET, calibrate_file

    path = calibration_set or bundled_path(DEFAULT_SET)
    if not path.exists():
        raise ConfigError(
            f"judge calibration set {str(path)!r} does not exist: pass --calibration-set FILE "
            "(THREADCASE_CALIBRATION_SET), or --skip-calibration to let an uncalibrated judge grade"
        )
    return await calibrate_file(path, models=models, threshold=calibration_threshold)


def prepare_process() -> None:
    """Ready the calling process for a run: what ``threadcase run`` does before it starts the run.

    Imports the modules :func:`run_suite` imports on first use, then takes every object alive at that
    point (modules, classes, validators) out of the garbage collector's reach and lets the young
    generation grow to 10,000 allocations before a pass: a run allocates a great deal and keeps little,
    and with the defaults the collector kept re-scanning the start-up heap (~6% of the harness's CPU
    at concurrency 50). Process-wide, so it is for the process's owner (the CLI, a benchmark), never
    called by the library on its own.
    """
    import threadcase.case.loader
    import threadcase.harness.conversation
    import threadcase.harness.pipeline
    import threadcase.seeds.inline  # noqa: F401

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def run_redactor(settings: RunSettings, environ: Mapping[str, str] | None = None) -> Redactor:
    """The run's one redactor: every secret the settings and the environment configure.

    The instance password, the userinfo of every base URL and of the model endpoint, the model API key,
    and every secret-looking environment variable (``EVAL_*``, ``*_API_KEY``, ``*PASSWORD*``, ...; see
    :func:`threadcase.redaction.secret_values`).
    """
    redactor = Redactor.from_environment(os.environ if environ is None else environ)
    if settings.password is not None:
        redactor.add(settings.password.get_secret_value())
    if settings.models.api_key is not None:
        redactor.add(settings.models.api_key.get_secret_value())
    for url in [*settings.base_urls, settings.models.base_url]:
        redactor.add_url(url)
    return redactor


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """What :func:`run_suite` ran and recorded: the results in journal order, and what the reports name."""

    results: list[CaseResult]
    run_id: str
    suite: Path
    output_dir: Path
    base_urls: list[str]
    """The lanes given with ``--base-url`` ([] for the embedded demo instance), without userinfo."""
    planned: int
    interrupted: bool
    leftovers: list[Leftover] = dataclasses.field(default_factory=list)
    """What the run could not delete from the instances (also in the journal)."""
    redactor: Redactor = dataclasses.field(default_factory=Redactor)
    """The run's redactor: whatever else is written about the run passes through it too."""


_EXIT_REASON = "the run exited at the third interrupt before deleting it"


def say_left_on_exit(
    interrupts: Interrupts, redactor: Redactor, left: Sequence[Leftover], journal: Path | None = None
) -> None:
    """The third interrupt's last words: every id left on the instance, per kind, and where they are recorded."""
    what = describe_leftovers(left, limit=len(left)) if left else "nothing"
    interrupts.say(redactor.text(f"threadcase: exiting now; left on the instance: {what}"))
    if left and journal is not None:
        interrupts.say(
            redactor.text(f"threadcase: recorded in {journal}; `threadcase cleanup --journal {journal}` deletes them")
        )


@dataclasses.dataclass(frozen=True)
class OpenRun:
    """A run ready to start: its cases loaded and digested, its lanes logged in, its pipeline configured.

    What :func:`open_run` yields; :func:`run_suite` runs it once, ``threadcase control`` runs it once
    per control over the same lanes and pool.
    """

    run_id: str
    suite: Path
    cases: list[LoadedCase]
    """The selected cases (of this shard), in suite order."""
    output_dir: Path
    """Created, and holding no journal yet."""
    base_urls: list[str]
    """The lanes given with ``--base-url`` ([] for the embedded demo instance)."""
    lane_urls: list[str]
    """The URL of every opened lane (the embedded demo instance's included)."""
    hashes: dict[str, CaseHashes]
    context: RunContext
    config: PipelineConfig
    pool: LanePool


@contextlib.asynccontextmanager
async def open_run(settings: RunSettings) -> AsyncIterator[OpenRun]:
    """Load the suite, start or reach the instances, log in every lane, calibrate the judge; yield the run.

    Raises ``UsageError`` (bad suite, flag or case file: exit 2) before any case runs (the suite loads
    while the instances start, and its problems win over theirs), and ``InstanceError`` when no lane
    is reachable (exit 3). Leaving the context logs out and stops an embedded demo instance.
    """
    from threadcase.case.loader import default_suite_path
    from threadcase.credentials.seeder import token_environment
    from threadcase.harness.conversation import Budgets
    from threadcase.harness.pipeline import PipelineConfig

    suite = settings.suite or default_suite_path()
    if not suite.exists():
        raise ConfigError(f"suite {str(suite)!r} does not exist; pass --suite DIR (or THREADCASE_SUITE)")
    run_id = uuid.uuid4().hex[:12]
    async with contextlib.AsyncExitStack() as stack:
        # The suite loads while the instances start and the lanes log in (round trips the loop would
        # otherwise sit out): a bad case file still wins over an unreachable instance (exit 2 before 3).
        cases, output_dir, (urls, lanes), (hashes, context) = await _load_while_opening(settings, suite, stack)
        budget_overrides: dict[str, float] = {"turn_seconds": settings.timeout_seconds}
        if settings.inactivity_seconds is not None:
            budget_overrides["inactivity_seconds"] = settings.inactivity_seconds
        config = PipelineConfig(
            run_id=run_id,
            models=settings.models,
            budgets=Budgets(**budget_overrides),
            keep_artifacts=settings.keep_artifacts,
            replay_dir=settings.replay_dir,
            cleanup_seconds=settings.cleanup_seconds,
            environ=token_environment(),  # once per run: every case-iteration's seeder reads it
            debug=settings.debug,
        )
        if settings.models.judge_enabled and not settings.skip_calibration:
            # Before any case runs: a judge that disagrees with the labels must not grade this run.
            calibration = await calibrate_judge(
                settings.models,
                calibration_set=settings.calibration_set,
                calibration_threshold=settings.calibration_threshold,
            )
            config = dataclasses.replace(config, calibration=calibration)
        yield OpenRun(
            run_id=run_id,
            suite=suite,
            cases=cases,
            output_dir=output_dir,
            base_urls=[] if not settings.base_urls else [strip_userinfo(url) for url in urls],
            lane_urls=[strip_userinfo(url) for url in urls],
            hashes=hashes,
            context=context,
            config=config,
            pool=LanePool(lanes, concurrency=settings.concurrency),
        )


async def run_suite(
    settings: RunSettings,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_leftovers: Callable[[LeftoverReport], None] | None = None,
    interrupts: Interrupts | None = None,
    redactor: Redactor | None = None,
) -> RunOutcome:
    """Run the selected cases × iterations, appending each result to the journal as it finishes.

    Raises ``UsageError`` (bad suite, flag or case file: exit 2) before any case runs, and
    ``InstanceError`` when no lane is reachable (exit 3) (see :func:`open_run`). Everything that fails
    inside a case is a recorded result. ``on_start`` gets the planned number of case-iterations once
    the suite is loaded; ``on_result`` each result as it is journaled (redacted); ``on_leftovers`` each
    report of what a case-iteration's cleanup left on the instance. ``interrupts``: the caller's (the
    CLI's, watching the whole command); None = signals are received for the duration of this call.
    ``redactor``: None = :func:`run_redactor`. The reports are :func:`threadcase.report.run_and_report`'s.
    """
    from threadcase.harness.pipeline import WorkItem, run_case

    redactor = redactor or run_redactor(settings)
    own_interrupts = interrupts is None
    interrupts = interrupts or Interrupts()
    async with contextlib.AsyncExitStack() as stack:
        if own_interrupts:
            await stack.enter_async_context(interrupts.watching())
        opened = await stack.enter_async_context(open_run(settings))
        ledger = RunLedger(opened.run_id)
        config = dataclasses.replace(opened.config, ledger=ledger)
        items = [WorkItem(case=c, iteration=i) for i in range(settings.iterations) for c in opened.cases]
        if on_start is not None:
            on_start(len(items))
        journal_path = opened.output_dir / JOURNAL_NAME
        with JournalWriter(journal_path, redactor) as journal:

            def leftovers_found(report: LeftoverReport) -> None:
                journal.append_line(report)
                if on_leftovers is not None:
                    on_leftovers(report)

            ledger.on_report = leftovers_found

            def exit_now() -> None:
                say_left_on_exit(interrupts, redactor, ledger.abort(_EXIT_REASON), journal_path)

            async def worker(item: WorkItem, lane: Lane) -> CaseResult:
                result = await run_case(item, lane, config, opened.pool)
                # Stamped here, where the whole run is known: a journal line alone can then be
                # re-graded, merged with its sibling shards and compared.
                result.case_hashes = opened.hashes.get(result.case_slug)
                result.run_context = opened.context
                # Journaled (redacted) the moment it exists; everything after sees the redacted result.
                return journal.append(result)

            forget_exit = interrupts.on_exit(exit_now)
            forget_settle = interrupts.on_settle(ledger.settle)
            try:
                results, _ = await execute(
                    items, opened.pool, worker, key=lambda item: item.key, on_result=on_result, interrupts=interrupts
                )
            finally:
                forget_exit()
                forget_settle()
                ledger.on_report = None
    return RunOutcome(
        results=results,
        run_id=opened.run_id,
        suite=opened.suite,
        output_dir=opened.output_dir,
        base_urls=opened.base_urls,
        planned=len(items),
        interrupted=interrupts.interrupted,
        leftovers=ledger.leftovers(),
        redactor=redactor,
    )
