"""Re-grade a run without re-running it: the stored conversations, graded with today's cases and judge.

:func:`regrade_run` is the Python API behind ``threadcase regrade RUN``. It reads the run's journal,
loads the cases as they are now, and grades every stored record again with :func:`grade_case`: the
current checks and expectations, the current judge (calibrated first, as a run does), and the
execution scenarios verified on the executions the run stored (no instance is started or called).
The new run is journaled like any other, each line's context marked ``regrade_of`` the original.

A case is **refused by name**, and left out of the new run, when re-grading it would grade a
conversation it did not produce: it is gone from the suite, its seed / conversation / scenarios /
run set-up changed since the run (by the digests the journal recorded), or the journal predates those
digests. A case-iteration that errored before it was graded is carried over as it was: there is no
complete conversation to grade.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from threadcase._util.fanout import fan_out
from threadcase.case.fingerprint import case_hashes, changed_parts
from threadcase.case.loader import LoadedCase, default_suite_path, load_suite
from threadcase.errors import ConfigError
from threadcase.grading import CalibrationResult, grade_case
from threadcase.grading.stored_executions import StoredScenarioClient
from threadcase.harness.journal import JOURNAL_NAME, JournalWriter, journal_path, read_journal
from threadcase.harness.provenance import grading_settings
from threadcase.harness.runner import calibrate_judge, default_output_dir, prepare_output_dir
from threadcase.models import ModelSettings
from threadcase.verdicts import CaseHashes, CaseResult, ErrorInfo, RunContext, case_status

__all__ = ["RefusedCase", "RegradeOutcome", "RegradeSettings", "regrade_run"]


class RegradeSettings(BaseModel):
    """Everything ``threadcase regrade`` takes; each field is one flag with a ``THREADCASE_*`` env twin."""

    model_config = ConfigDict(extra="forbid")

    run: Path
    """The run to re-grade: its ``journal.jsonl`` or its directory."""
    suite: Path | None = None
    """Where the cases are now; None = the suite the run recorded, if it still exists, else the default suite."""
    output_dir: Path | None = None
    """Where the new run's journal and reports go; None = ``./threadcase-results/<UTC timestamp>/``."""
    models: ModelSettings = Field(default_factory=ModelSettings)
    """The judge to grade with now (the proxy model is not used: nothing converses)."""
    concurrency: int = Field(default=8, ge=1, le=1000)
    """Case-iterations graded at once (each may wait on the judge)."""
    calibration_set: Path | None = None
    """As for ``run``: the labelled items the judge must agree with before its verdicts count."""
    calibration_threshold: float = Field(default=0.9, ge=0.0, le=1.0)
    skip_calibration: bool = False


@dataclasses.dataclass(frozen=True)
class RefusedCase:
    """A case left out of the re-grade, and why."""

    slug: str
    reason: str

    def line(self) -> str:
        return f"refused {self.slug}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class RegradeOutcome:
    """What :func:`regrade_run` wrote: the new results in journal order, and what it left out."""

    results: list[CaseResult]
    refused: list[RefusedCase]
    run_id: str
    regrade_of: str
    suite: Path
    output_dir: Path


def _suite_of(settings: RegradeSettings, context: RunContext | None) -> Path:
    if settings.suite is not None:
        return settings.suite
    if context is not None and context.suite:
        recorded = Path(context.suite)
        if not recorded.exists():
            # Never another suite in its place: its cases would all be refused, for the wrong reason.
            raise ConfigError(
                f"the run's suite {context.suite!r} is not here (the path is as the run was given it); "
                "pass --suite DIR where its cases are now"
            )
        return recorded
    return default_suite_path()


def _refusal(
    loaded: LoadedCase | None, recorded: CaseHashes | None, current: CaseHashes | None, run_id: str
) -> str | None:
    if loaded is None or current is None:
        return "no longer in the suite"
    if recorded is None:
        return "the journal predates case digests, so it cannot show the conversation still belongs to this case"
    changed = changed_parts(recorded, current)
    if changed:
        return f"{', '.join(changed)} changed since run {run_id}: the stored conversation answers another case"
    return None


async def regrade_run(
    settings: RegradeSettings, *, on_result: Callable[[CaseResult], None] | None = None
) -> RegradeOutcome:
    """Grade the run's stored conversations again and journal them as a new run (see the module docstring).

    Raises :class:`ConfigError` for an unreadable or empty journal, a suite that does not exist, an
    output directory that already holds a journal, or when every case is refused; the refusals are
    in the outcome otherwise.
    """
    source = journal_path(settings.run)
    original = read_journal(source)
    if not original:
        raise ConfigError(f"{source}: the journal holds no case-iteration to re-grade")
    run_ids = list(dict.fromkeys(r.run_id for r in original))
    regrade_of = ",".join(run_ids)
    context = next((r.run_context for r in original if r.run_context is not None), None)
    suite = _suite_of(settings, context)
    if not suite.exists():
        raise ConfigError(f"suite {str(suite)!r} does not exist; pass --suite DIR (or THREADCASE_SUITE)")
    cases = {loaded.slug: loaded for loaded in load_suite([suite])}

    refused: dict[str, RefusedCase] = {}
    current: dict[str, CaseHashes] = {}
    for result in original:
        slug = result.case_slug
        if slug in refused or slug in current:
            continue
        loaded = cases.get(slug)
        hashes = case_hashes(loaded) if loaded is not None else None
        reason = _refusal(loaded, result.case_hashes, hashes, regrade_of)
        if reason is not None:
            refused[slug] = RefusedCase(slug, reason)
        elif hashes is not None:
            current[slug] = hashes
    accepted = [r for r in original if r.case_slug in current]
    if not accepted:
        listed = "; ".join(r.line() for r in refused.values())
        raise ConfigError(f"{source}: nothing to re-grade ({listed})")

    output_dir = prepare_output_dir(settings.output_dir or default_output_dir())
    calibration: CalibrationResult | None = None
    if settings.models.judge_enabled and not settings.skip_calibration:
        calibration = await calibrate_judge(
            settings.models,
            calibration_set=settings.calibration_set,
            calibration_threshold=settings.calibration_threshold,
        )
    run_id = uuid.uuid4().hex[:12]
    new_context = (context or RunContext(suite=str(suite))).model_copy(
        update={
            "regrade_of": regrade_of,
            "settings": {
                **(context.settings if context is not None else {}),
                **grading_settings(
                    settings.models,
                    calibration_threshold=settings.calibration_threshold,
                    skip_calibration=settings.skip_calibration,
                ),
            },
        }
    )

    async def regrade_one(result: CaseResult) -> CaseResult:
        stamp = {"run_id": run_id, "run_context": new_context, "case_hashes": current[result.case_slug]}
        if result.record is None or result.error is not None:
            return result.model_copy(update=stamp)  # never graded: nothing complete to grade again
        record = result.record.model_copy(deep=True)
        try:
            grading = await grade_case(
                cases[result.case_slug].case,
                record,
                client=StoredScenarioClient(record),
                models=settings.models,
                calibration=calibration,
            )
        except Exception as exc:  # grading never raises on purpose; a bug in one case must not stop the rest
            error = ErrorInfo(type=type(exc).__name__, message=(str(exc).strip() or type(exc).__name__)[:2000])
            return result.model_copy(
                update={**stamp, "verdicts": [], "premises": [], "error": error, "status": "errored"}
            )
        verdicts = list(grading.verdicts)
        judge = {k: v for k, v in grading.judge.items() if v is None or isinstance(v, str | int | float)}
        return result.model_copy(
            update={
                **stamp,
                "verdicts": verdicts,
                "premises": list(grading.premises),
                "judge": judge,
                "status": case_status(verdicts, result.error),
            }
        )

    with JournalWriter(output_dir / JOURNAL_NAME) as journal:

        def record(_: int, result: CaseResult) -> None:
            journal.append(result)  # at once, as a run does: an interruption loses nothing graded
            if on_result is not None:
                on_result(result)

        results = await fan_out(accepted, regrade_one, limit=settings.concurrency, on_result=record)
    return RegradeOutcome(
        results=results,
        refused=list(refused.values()),
        run_id=run_id,
        regrade_of=regrade_of,
        suite=suite,
        output_dir=output_dir,
    )
