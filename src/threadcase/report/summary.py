"""The run summary (``summary.json``), the exit code it implies, and atomic report writing.

Counts are kept apart on purpose: passed, failed, not judged and reviewed count *units*; errored
counts *case-iterations* that failed inside (instance, seed, model) and produced no judged unit.

Green means verified: a run is green only when every case-iteration was verified (some unit judged,
no error) and every judged unit passed. A run where no unit failed but some case-iteration tested
nothing exits 3 and says how many and why — two passes beside twenty-two not-judged units and an
errored case are not a green run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from threadcase.harness.stats import CaseStats, case_stats
from threadcase.leftovers import Leftover
from threadcase.models import ModelRole, ModelUsage
from threadcase.records import UserPlayer
from threadcase.verdicts import CaseResult, RunContext

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_JUDGED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Counts",
    "JudgeCalibration",
    "NotVerified",
    "RunSummary",
    "build_summary",
    "calibration_of",
    "provenance_line",
    "simulated_users_of",
    "write_atomic",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOTHING_JUDGED = 3
EXIT_INTERRUPTED = 130


class Counts(BaseModel):
    """Unit verdict counts plus errored case-iterations, each apart."""

    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    failed: int = 0
    not_judged: int = 0
    reviewed: int = 0
    errored: int = 0
    builder_failures: int = 0
    """Failed units that count against the agent (attribution builder_issue or none)."""
    proxy_failures: int = 0
    """Failed units the simulated user caused (attribution proxy_issue): never against the builder."""
    proxy_not_judged: int = 0
    """Units not judged because of the simulated user (a note it could not follow, a value it gave
    against its script)."""
    not_verified: int = 0
    """Case-iterations that were not verified: no unit judged, or an error (the errored ones included)."""


class JudgeCalibration(BaseModel):
    """The judge's calibration for the run: whether its verdicts counted, and on what evidence."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    agreement: float
    """Share of the hand-labelled items on which the judge agreed with the human label."""
    kappa: float
    """Cohen's kappa: the agreement corrected for chance."""
    n: int | None = None
    """Items in the calibration set (None: a journal written before this was recorded)."""
    unjudged: int | None = None
    """Items the judge returned nothing for (each counted as a disagreement)."""
    threshold: float
    passed: bool
    """Agreement cleared the threshold, so the judge's verdicts count in this run."""
    set_path: str = ""

    def line(self) -> str:
        """One line for the console and the HTML header."""
        n = "?" if self.n is None else str(self.n)
        unjudged = "" if self.unjudged is None else f", {self.unjudged} unjudged"
        head = f"judge calibration ({self.model or 'judge'}): agreement {self.agreement:.2f}"
        head += f" {'≥' if self.passed else '<'} {self.threshold:.2f}, kappa {self.kappa:.2f}, n {n}{unjudged}"
        verdict = "calibrated" if self.passed else "NOT calibrated: the judge's verdicts are not judged"
        return f"{head} — {verdict}"


def calibration_of(results: Sequence[CaseResult]) -> JudgeCalibration | None:
    """The run's judge calibration, read back from the results' ``judge`` info (None when not calibrated).

    The runner calibrates once per run and every result carries the same numbers, so the first result
    that has them speaks for the run; deriving it here lets ``threadcase report JOURNAL`` rebuild it.
    """
    for result in results:
        info = result.judge
        agreement, kappa, threshold = (
            info.get("calibration_agreement"),
            info.get("calibration_kappa"),
            info.get("calibration_threshold"),
        )
        if not isinstance(agreement, int | float) or not isinstance(threshold, int | float):
            continue
        n, unjudged, model, path = (
            info.get("calibration_n"),
            info.get("calibration_unjudged"),
            info.get("model"),
            info.get("calibration_set"),
        )
        return JudgeCalibration(
            model=model if isinstance(model, str) else None,
            agreement=float(agreement),
            kappa=float(kappa) if isinstance(kappa, int | float) else 0.0,
            n=n if isinstance(n, int) and not isinstance(n, bool) else None,
            unjudged=unjudged if isinstance(unjudged, int) and not isinstance(unjudged, bool) else None,
            threshold=float(threshold),
            passed=bool(info.get("calibrated", agreement >= threshold)),
            set_path=path if isinstance(path, str) else "",
        )
    return None


class NotVerified(BaseModel):
    """Why some case-iterations were not verified: one reason, how many, and which."""

    model_config = ConfigDict(extra="forbid")

    reason: str
    """The error, or the reason of the first unit that was not judged."""
    count: int
    cases: list[str] = Field(default_factory=list)
    """``slug`` (``slug#iteration`` when the case ran more than once), in journal order."""


def why_not_verified(result: CaseResult) -> str:
    """One line for a case-iteration that tested nothing: its error, else why its units were not judged."""
    if result.error is not None:
        return f"errored: {result.error.type}: {result.error.message}"[:200]
    unjudged = [v for v in result.verdicts if v.status == "not_judged"]
    if not unjudged:
        return "no unit to judge (only review criteria)" if result.verdicts else "the case has no unit to judge"
    # A failed premise, a fault or a timeout voids the checks too; "no judge model" is only the expectations'.
    telling = [v for v in unjudged if v.kind not in ("process", "outcome")]
    return (telling or unjudged)[0].reason[:200]


def not_verified_of(results: Sequence[CaseResult]) -> list[NotVerified]:
    """The case-iterations that were not verified, grouped by reason (most frequent first)."""
    several = {r.case_slug for r in results if r.iteration > 0}
    groups: dict[str, NotVerified] = {}
    for result in results:
        if result.verified:
            continue
        reason = why_not_verified(result)
        group = groups.setdefault(reason, NotVerified(reason=reason, count=0))
        group.count += 1
        group.cases.append(
            f"{result.case_slug}#{result.iteration}" if result.case_slug in several else result.case_slug
        )
    return sorted(groups.values(), key=lambda g: -g.count)


def models_of(results: Sequence[CaseResult]) -> list[ModelRole]:
    """How each role called its model in the run (the first result that says speaks for the run)."""
    return next((list(r.models) for r in results if r.models), [])


def usage_of(results: Sequence[CaseResult]) -> dict[str, ModelUsage]:
    """Token usage by role over the whole run: the builder's (``agent``) beside each model role's."""
    total: dict[str, ModelUsage] = {}
    for result in results:
        for role, used in result.model_usage.items():
            total.setdefault(role, ModelUsage()).add(used)
    return total


class RunSummary(BaseModel):
    """What one run (or one journal) amounts to: counts, per-case statistics and the exit code."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    seconds: float = 0.0
    suite: str = ""
    base_urls: list[str] = Field(default_factory=list)
    output_dir: str = ""
    interrupted: bool = False
    cases: int = 0
    """Distinct cases with at least one finished iteration."""
    case_iterations: int = 0
    planned_case_iterations: int | None = None
    units: Counts = Field(default_factory=Counts)
    case_statuses: dict[str, int] = Field(default_factory=dict)
    """Across iterations: ``pass``, ``fail``, ``not_verified``, ``errored`` -> number of cases."""
    case_stats: list[CaseStats] = Field(default_factory=list)
    calibration: JudgeCalibration | None = None
    """The judge's calibration for the run; None when no judge was calibrated (none configured, or skipped)."""
    context: RunContext | None = None
    """How the run was made (selection, shard, settings; a re-grade or a merge says of what), from the
    journal; None for a journal written before it was recorded."""
    simulated_users: list[UserPlayer] = Field(default_factory=list)
    """Who played the user in the run's multi-turn cases (one entry, unless journals were mixed); only
    single-prompt cases: the auto-approval entry."""
    not_verified: list[NotVerified] = Field(default_factory=list)
    """The case-iterations that tested nothing (no unit judged, or an error), grouped by reason."""
    models: list[ModelRole] = Field(default_factory=list)
    """How each role called its model (proxy, judge, verifier): model, timeout, attempts, sampling."""
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """Token usage by role over the run: ``agent`` (the builder), ``proxy``, ``judge``, ``verifier``."""
    leftovers: list[Leftover] = Field(default_factory=list)
    """What the run created on the instances and could not delete (less what ``threadcase cleanup``
    deleted since): a run with leftovers is never plain green."""
    exit_code: int = EXIT_OK

    def simulated_user_line(self) -> str:
        """``simulated user: …`` for the console and the report header."""
        if not self.simulated_users:
            return "simulated user: not recorded"
        return "simulated user: " + "; ".join(u.describe() for u in self.simulated_users)

    @property
    def green(self) -> bool:
        return self.exit_code == EXIT_OK


def exit_code_for(units: Counts, *, interrupted: bool = False, iterations: int | None = None) -> int:
    """0 every case-iteration verified and every judged unit passed; 1 a unit failed; 3 none failed but
    some case-iteration was not verified (or nothing ran); 130 interrupted."""
    if interrupted:
        return EXIT_INTERRUPTED
    if units.failed:
        return EXIT_FAILED
    if units.passed == 0 or units.not_verified or iterations == 0:
        return EXIT_NOTHING_JUDGED
    return EXIT_OK


def build_summary(
    results: Sequence[CaseResult],
    *,
    run_id: str = "",
    suite: str = "",
    base_urls: Sequence[str] = (),
    output_dir: str = "",
    interrupted: bool = False,
    planned: int | None = None,
    leftovers: Sequence[Leftover] = (),
) -> RunSummary:
    """Summarise finished case-iterations (e.g. everything in a journal) and what the run left behind."""
    # Counted in locals: every += on the model went through pydantic's __setattr__.
    passed = failed = not_judged = reviewed = errored = builder_failures = proxy_failures = proxy_not_judged = 0
    for result in results:
        for verdict in result.verdicts:
            if verdict.status == "pass":
                passed += 1
            elif verdict.status == "fail":
                failed += 1
                builder_failures += verdict.counts_against_builder
                proxy_failures += verdict.attribution == "proxy_issue"
            elif verdict.status == "not_judged":
                not_judged += 1
                proxy_not_judged += verdict.attribution == "proxy_issue"
            else:
                reviewed += 1
        if result.error is not None and not any(v.status in ("pass", "fail") for v in result.verdicts):
            errored += 1
    unverified = not_verified_of(results)
    units = Counts(
        passed=passed,
        failed=failed,
        not_judged=not_judged,
        reviewed=reviewed,
        errored=errored,
        builder_failures=builder_failures,
        proxy_failures=proxy_failures,
        proxy_not_judged=proxy_not_judged,
        not_verified=sum(group.count for group in unverified),
    )
    stats = case_stats(results)
    statuses: dict[str, int] = {}
    for case in stats:
        statuses[case.status] = statuses.get(case.status, 0) + 1
    starts = [r.started_at for r in results]
    ends = [r.finished_at for r in results if r.finished_at is not None]
    started = min(starts) if starts else None
    finished = max(ends) if ends else None
    return RunSummary(
        run_id=run_id or (results[0].run_id if results else ""),
        started_at=started,
        finished_at=finished,
        seconds=(finished - started).total_seconds() if started and finished else 0.0,
        suite=suite,
        base_urls=list(base_urls),
        output_dir=output_dir,
        interrupted=interrupted,
        cases=len(stats),
        case_iterations=len(results),
        planned_case_iterations=planned,
        units=units,
        case_statuses=statuses,
        case_stats=stats,
        calibration=calibration_of(results),
        context=next((r.run_context for r in results if r.run_context is not None), None),
        simulated_users=simulated_users_of(results),
        not_verified=unverified,
        models=models_of(results),
        model_usage=usage_of(results),
        leftovers=list(leftovers),
        exit_code=exit_code_for(units, interrupted=interrupted, iterations=len(results)),
    )


def provenance_line(context: RunContext | None) -> str | None:
    """What the run was made from, when it is not a plain run of a whole suite (console and HTML header)."""
    if context is None:
        return None
    if context.regrade_of:
        return f"re-grade of run {context.regrade_of}: the same conversations, graded with the current cases and judge"
    if context.merged_from:
        return f"merged from {len(context.merged_from)} runs: {', '.join(context.merged_from)}"
    if context.shard:
        return f"shard {context.shard} of the selected cases"
    return None


def simulated_users_of(results: Sequence[CaseResult]) -> list[UserPlayer]:
    """Who played the user, once each, read back from the results (so a rebuilt report says it too).

    Multi-turn cases name the run's simulated user; a run of single-prompt cases only had none.
    """
    players: list[UserPlayer] = []
    for result in results:
        player = result.record.user if result.record is not None else None
        if player is not None and player not in players:
            players.append(player)
    acting = [p for p in players if p.kind != "auto-approve"]
    return acting or players


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``.

    A reader (or a crash) never sees half a report: the rename is atomic on one filesystem.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
