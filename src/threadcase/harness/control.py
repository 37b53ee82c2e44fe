"""``threadcase control``: run every case under controls that should turn it red, and record which do.

An eval that cannot fail reports green while what it guards is broken. :func:`run_controls` is the
Python API behind ``threadcase control``: over the same lanes, pool and concurrency as a run, it runs
the selected cases

- **clean** — as ``threadcase run`` would: the baseline every control is compared with;
- **seed-removed** — each seeded case with its seed dropped (:mod:`threadcase.case.seed_removal`):
  what needs the seed is reported as such, never run into a crash;
- **one control per demo misbehaviour** — the demo instance's deliberate defects, switched on per
  thread (``sourceContext.demoMisbehave``), so every control shares one instance and runs in
  parallel; on the embedded demo, or on a demo at ``--base-url`` (asked ``GET /threadcase/demo``
  first: a real n8n has no misbehaviours, and those controls are reported unavailable);

and journals each control on its own (the clean run in the output directory as any run,
each control under ``controls/<name>/``), so any of them can be reported, compared with the clean
run or re-graded like a run. The **final-turn** control needs no conversation: it reads the
transcripts the other controls stored (:mod:`threadcase.harness.control_matrix`).

Cost: about one suite run per control, the controls running side by side; the same case never runs
twice at once on one lane (its names and ids would collide), so a case's controls take turns.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import Field, field_validator, model_validator
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from threadcase.case.fingerprint import part_digest
from threadcase.case.loader import LoadedCase
from threadcase.case.seed_removal import SeedRemoval, without_seed
from threadcase.errors import ConfigError
from threadcase.harness.journal import JOURNAL_NAME, JournalWriter
from threadcase.harness.lanes import Lane
from threadcase.harness.pipeline import PipelineConfig, WorkItem, run_case
from threadcase.harness.runner import KNOWN_MISBEHAVIOURS, OpenRun, RunSettings, execute, open_run, prepare_output_dir
from threadcase.verdicts import CaseHashes, CaseResult, RunContext, UnitVerdict, case_status

__all__ = [
    "CLEAN",
    "CONTROLS_DIR",
    "FINAL_TURN",
    "NEEDS_THE_SEED",
    "SEED_REMOVED",
    "ControlKind",
    "ControlOutcome",
    "ControlRun",
    "ControlSettings",
    "describe",
    "probe_demo",
    "run_controls",
]

CLEAN = "clean"
SEED_REMOVED = "seed-removed"
FINAL_TURN = "final-turn"
CONTROLS_DIR = "controls"
NEEDS_THE_SEED = "needs the seed"
"""How a unit (or a case) that only makes sense with its seed is reported under ``seed-removed``."""

ControlKind = Literal["clean", "seed-removed", "misbehaviour", "final-turn"]

_NAMED_CONTROLS = (SEED_REMOVED, FINAL_TURN)


class ControlSettings(RunSettings):
    """Everything ``threadcase control`` takes: a run's settings, which controls, and the known probes."""

    controls: list[str] = Field(default_factory=list)
    """The controls to run (``seed-removed``, ``final-turn``, misbehaviour names); empty = every one
    the instance offers."""
    allow_vacuous: list[str] = Field(default_factory=list)
    """Slugs of cases that are knowingly probes: listed when no control turns them red, without
    failing the command."""

    @field_validator("controls", "allow_vacuous")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(v.strip() for v in value if v.strip()))

    @field_validator("controls")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [n for n in value if n not in _NAMED_CONTROLS and n not in KNOWN_MISBEHAVIOURS and n != CLEAN]
        if unknown:
            known = ", ".join([*_NAMED_CONTROLS, *sorted(KNOWN_MISBEHAVIOURS)])
            raise ValueError(f"unknown control {unknown[0]!r}; known: {known}")
        return [n for n in value if n != CLEAN]  # the clean run is always there: it is the baseline

    @model_validator(mode="after")
    def _clean_baseline(self) -> ControlSettings:
        if self.demo_misbehave:
            # A misbehaving baseline would make every control look like it changed nothing.
            raise ValueError("demo_misbehave: the clean run must be clean; each misbehaviour is a control of its own")
        return self


@dataclasses.dataclass
class ControlRun:
    """One control's run: its journal's results and what it did not run."""

    name: str
    kind: ControlKind
    description: str
    output_dir: Path
    results: list[CaseResult] = dataclasses.field(default_factory=list)
    not_run: dict[str, str] = dataclasses.field(default_factory=dict)
    """Slug -> why this control did not run the case (no seed; the whole case needs the seed)."""
    needs_seed: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    """``seed-removed`` only: slug -> unit -> why the unit needs the seed (reported, not counted)."""
    planned: int = 0

    @property
    def run_id(self) -> str:
        """The run id its journal lines carry ('' before any finished)."""
        return self.results[0].run_id if self.results else ""


@dataclasses.dataclass(frozen=True)
class ControlOutcome:
    """What :func:`run_controls` ran: the clean run and each control's, and the controls it could not run."""

    run_id: str
    suite: Path
    output_dir: Path
    cases: list[LoadedCase]
    runs: dict[str, ControlRun]
    """Control name -> its run; ``clean`` first, then in the order they were asked for."""
    unavailable: dict[str, str]
    """Control name -> why it could not run here (e.g. misbehaviours on an instance that is no demo)."""
    final_turn: bool
    """Whether the final-turn control was asked for (it is read from the stored transcripts)."""
    base_urls: list[str]
    interrupted: bool
    planned: int
    allow_vacuous: list[str]


_DESCRIPTIONS = {
    CLEAN: "the case as written, on the instance as it is: the baseline",
    SEED_REMOVED: "the case with its seed dropped (what needs the seed is reported, not run)",
    FINAL_TURN: "each transcript rule read on the final turn alone (the last user message and the reply to it)",
}


def describe(name: str) -> str:
    """One line on what a control does."""
    return _DESCRIPTIONS.get(name, f"the demo agent with its {name!r} misbehaviour switched on")


@dataclasses.dataclass(frozen=True)
class _Item:
    control: str
    work: WorkItem
    needs_seed: Mapping[str, str]


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (502, 503, 504)
    return isinstance(exc, httpx.TransportError)


async def probe_demo(url: str) -> tuple[list[str], list[str]] | None:
    """``(misbehaviours it knows, misbehaviours on for every thread)`` of a demo at ``url``; None if it is none.

    ``GET /threadcase/demo`` is the demo's own route (no login); an n8n answers it 404.
    """
    async with httpx.AsyncClient(base_url=url, timeout=10.0) as client:
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_transient),
                stop=stop_after_attempt(3),
                wait=wait_exponential(multiplier=0.2, max=2.0),
                reraise=True,
            ):
                with attempt:
                    response = await client.get("/threadcase/demo")
                    if response.status_code >= 500:
                        response.raise_for_status()
        except httpx.HTTPError:
            return None
    if response.status_code != 200:
        return None
    try:
        body = response.json()
        known = [str(n) for n in body["misbehaviours"]]
        on = [str(n) for n in body.get("misbehave", [])]
    except (ValueError, KeyError, TypeError):
        return None
    return known, on


def _shown(url: str) -> str:
    """``url`` without userinfo: a login in a URL must never reach the output."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, host + (f":{parts.port}" if parts.port else ""), parts.path, "", ""))


async def _misbehaviours(settings: ControlSettings, opened: OpenRun) -> tuple[list[str], str | None]:
    """The misbehaviours this run's instances offer, or why there are none (a ConfigError if the baseline is dirty)."""
    if not settings.base_urls:
        return sorted(KNOWN_MISBEHAVIOURS), None
    offered: set[str] | None = None
    for url in opened.lane_urls:
        probed = await probe_demo(url)
        if probed is None:
            return (
                [],
                f"{_shown(url)} is not a threadcase demo (GET /threadcase/demo): an n8n instance has no misbehaviours",
            )
        known, on = probed
        if on:
            raise ConfigError(
                f"the demo at {_shown(url)} runs with {', '.join(on)} switched on for every thread, so no run there is "
                "clean: restart it without --misbehave (each misbehaviour is a control of its own)"
            )
        offered = set(known) if offered is None else offered & set(known)
    return sorted(offered or ()), None


def _plan(
    settings: ControlSettings, misbehaviours: list[str], why_none: str | None
) -> tuple[list[str], dict[str, str]]:
    """(the controls to run, in order; those asked for or implied that cannot run here, with why)."""
    wanted = settings.controls or [SEED_REMOVED, *misbehaviours, FINAL_TURN]
    unavailable: dict[str, str] = {}
    if not settings.controls and why_none is not None:
        unavailable["misbehaviours"] = why_none
    chosen: list[str] = []
    for name in wanted:
        if name in _NAMED_CONTROLS or name in misbehaviours:
            chosen.append(name)
        elif settings.controls:
            # Asked for by name: silently dropping it would report a case proven without it.
            reason = why_none or f"the demo offers no misbehaviour {name!r} (it offers: {', '.join(misbehaviours)})"
            raise ConfigError(f"--controls {name}: {reason}")
    return chosen, unavailable


def _seed_removed_hashes(hashes: CaseHashes | None, removal: SeedRemoval) -> CaseHashes | None:
    """The digests of the case as this control ran it: no seed (and no hand-off), so a re-grade refuses it."""
    if hashes is None or removal.case is None:
        return hashes
    document = removal.case.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return hashes.model_copy(
        update={
            "file": part_digest(document),
            "seed": part_digest(None),
            "conversation": part_digest(document.get("conversation")),
        }
    )


def _mark_needs_seed(result: CaseResult, needs_seed: Mapping[str, str]) -> CaseResult:
    """Units that read the seed: reported *not judged: needs the seed*, never a verdict on the agent."""
    if not needs_seed:
        return result
    verdicts: list[UnitVerdict] = []
    seen: set[str] = set()
    for verdict in result.verdicts:
        seen.add(verdict.unit)
        reason = needs_seed.get(verdict.unit)
        if reason is None:
            verdicts.append(verdict)
            continue
        verdicts.append(_needs_seed_verdict(verdict.unit, verdict.label, reason))
    for unit, reason in needs_seed.items():
        if unit not in seen:
            verdicts.append(_needs_seed_verdict(unit, unit, reason))
    return result.model_copy(update={"verdicts": verdicts, "status": case_status(verdicts, result.error)})


def _needs_seed_verdict(unit: str, label: str, reason: str) -> UnitVerdict:
    return UnitVerdict(
        unit=unit,
        kind="review" if unit.startswith("review#") else "check",
        label=label,
        status="not_judged",
        reason=f"{NEEDS_THE_SEED}: {reason}",
        attribution="verification_gap",
    )


async def run_controls(
    settings: ControlSettings,
    *,
    on_result: Callable[[str, CaseResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ControlOutcome:
    """Run the selected cases clean and under every control; journal each control on its own.

    Raises as :func:`threadcase.harness.runner.open_run` does (exit 2 for the user's input, 3 for an
    unreachable instance), and ``ConfigError`` for a control asked for by name that cannot run here,
    or a demo at ``--base-url`` that misbehaves for every thread. ``on_start`` gets the planned number
    of case-iterations over all controls; ``on_result`` each (control, result) as it is journaled.
    """
    async with open_run(settings) as opened:
        misbehaviours, why_none = await _misbehaviours(settings, opened)
        chosen, unavailable = _plan(settings, misbehaviours, why_none)
        runs: dict[str, ControlRun] = {
            CLEAN: ControlRun(CLEAN, "clean", describe(CLEAN), opened.output_dir),
        }
        configs: dict[str, PipelineConfig] = {CLEAN: opened.config}
        contexts: dict[str, RunContext] = {CLEAN: opened.context}
        hashes: dict[str, dict[str, CaseHashes | None]] = {CLEAN: dict(opened.hashes)}
        for name in chosen:
            if name == FINAL_TURN:
                continue
            kind: ControlKind = "seed-removed" if name == SEED_REMOVED else "misbehaviour"
            runs[name] = ControlRun(
                name, kind, describe(name), prepare_output_dir(opened.output_dir / CONTROLS_DIR / name)
            )
            # Each control is a run of its own: its own id in its journal, so merges and comparisons tell them apart.
            config = dataclasses.replace(opened.config, run_id=uuid.uuid4().hex[:12])
            if kind == "misbehaviour":
                config = dataclasses.replace(config, source_context={"demoMisbehave": [name]})
            configs[name] = config
            extra: dict[str, str | None] = {"control": name}
            if kind == "misbehaviour":
                extra["demo_misbehave"] = name
            contexts[name] = opened.context.model_copy(update={"settings": {**opened.context.settings, **extra}})
            hashes[name] = dict(opened.hashes)

        removals = {loaded.slug: without_seed(loaded.case, slug=loaded.slug) for loaded in opened.cases}
        items: list[_Item] = []
        for iteration in range(settings.iterations):
            for name, run in runs.items():
                for loaded in opened.cases:
                    if run.kind != "seed-removed":
                        items.append(_Item(name, WorkItem(loaded, iteration), {}))
                        continue
                    removal = removals[loaded.slug]
                    if removal is None:
                        run.not_run[loaded.slug] = "no seed to remove"
                        continue
                    run.needs_seed[loaded.slug] = dict(removal.needs_seed)
                    if removal.case is None:
                        run.not_run[loaded.slug] = f"{NEEDS_THE_SEED}: {removal.reason}"
                        continue
                    hashes[name][loaded.slug] = _seed_removed_hashes(opened.hashes.get(loaded.slug), removal)
                    stripped = LoadedCase(slug=loaded.slug, path=loaded.path, case=removal.case)
                    items.append(_Item(name, WorkItem(stripped, iteration), removal.needs_seed))
        for item in items:
            runs[item.control].planned += 1
        if on_start is not None:
            on_start(len(items))

        with ExitStack() as stack:
            journals = {
                name: stack.enter_context(JournalWriter(run.output_dir / JOURNAL_NAME)) for name, run in runs.items()
            }

            async def worker(item: _Item, lane: Lane) -> CaseResult:
                result = await run_case(item.work, lane, configs[item.control], opened.pool)
                result = _mark_needs_seed(result, item.needs_seed)
                result.case_hashes = hashes[item.control].get(result.case_slug)
                result.run_context = contexts[item.control]
                journals[item.control].append(result)
                runs[item.control].results.append(result)
                if on_result is not None:
                    on_result(item.control, result)
                return result

            _, interrupted = await execute(items, opened.pool, worker, key=lambda item: item.work.key)
    return ControlOutcome(
        run_id=opened.run_id,
        suite=opened.suite,
        output_dir=opened.output_dir,
        cases=opened.cases,
        runs=runs,
        unavailable=unavailable,
        final_turn=FINAL_TURN in chosen,
        base_urls=opened.base_urls,
        interrupted=interrupted,
        planned=len(items),
        allow_vacuous=list(settings.allow_vacuous),
    )
