"""Grading one case-iteration: premises, deterministic checks, the LLM judge, execution scenarios.

:func:`grade_case` is the one entry point the runner calls. It never raises for a failure inside
the case (a judge that answered nothing, an execution that failed): those become not-judged units
with a reason. Order of work: premises first (a failed premise voids everything and spends no model
call; one that belongs to some units only, like the token ground truth of a cost expectation, holds
back just those, which never reach the judge), then the simulated user's faults that reached the agent
(they void what they could affect, and spend no model call either: ``grading.proxy_faults``), then the
checks, then the judge and the scenarios concurrently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, Field

from threadcase.case import schema
from threadcase.grading.calibration import CalibrationResult
from threadcase.grading.checks import EVENT_CHECKS, event_units, run_checks
from threadcase.grading.execution import ScenarioClient, run_scenarios
from threadcase.grading.judge import JudgeOutcome, expectations_of, judge_expectations, not_judged_all
from threadcase.grading.premises import (
    TIMEOUT_ENDINGS,
    check_premises,
    failed_premises,
    held_back_units,
    void_units,
)
from threadcase.grading.prompts import JUDGE_PROMPT_VERSION, VERIFIER_PROMPT_VERSION
from threadcase.grading.proxy_faults import audit_user_turns, fault_premise, void_for_proxy_faults
from threadcase.models import ModelSettings, ModelUsage
from threadcase.records import RunRecord
from threadcase.verdicts import PremiseResult, UnitVerdict

if TYPE_CHECKING:
    from threadcase.instance import InstanceClient

__all__ = ["CalibrationResult", "Grading", "grade_case"]

MODEL_GRADED = frozenset({"process", "outcome", "scenario"})


class Grading(BaseModel):
    """Everything grading produced for one case-iteration."""

    verdicts: list[UnitVerdict]
    premises: list[PremiseResult]
    judge: dict[str, Any] = Field(default_factory=dict)
    """Which judge graded (model, prompt versions), its calibration, attempts and token use."""
    usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """Token usage of grading's model calls, by role (``judge``, ``verifier``); only roles that called."""


def _scenario_placeholders(case: schema.Case, reason: str) -> list[UnitVerdict]:
    return [
        UnitVerdict(
            unit=f"scenario:{s.name}",
            kind="scenario",
            label=s.success_criteria or s.description or s.name,
            status="not_judged",
            reason=reason,
            attribution="framework_issue",
        )
        for s in case.execution_scenarios
    ]


def _cut_short(verdict: UnitVerdict, events: frozenset[str]) -> bool:
    """Could more time have turned this failure into a pass?"""
    if verdict.kind in MODEL_GRADED:
        return True
    # A check that failed because something is missing could have passed later; one that failed on
    # something the agent already said or did (EVENT_CHECKS, an ``absent`` entry) stays the agent's
    # however long it had.
    return verdict.kind == "check" and not verdict.unit.startswith(EVENT_CHECKS) and verdict.unit not in events


def _blame_timeout(verdicts: list[UnitVerdict], ended_by: str, events: frozenset[str]) -> list[UnitVerdict]:
    """A conversation cut short by a budget is still graded, but failures the cut explains are the clock's."""
    if ended_by not in TIMEOUT_ENDINGS:
        return verdicts
    return [
        v.model_copy(update={"attribution": "timeout", "reason": f"{v.reason} (the conversation ended: {ended_by})"})
        if v.status == "fail" and v.attribution == "builder_issue" and _cut_short(v, events)
        else v
        for v in verdicts
    ]


async def grade_case(
    case: schema.Case,
    record: RunRecord,
    *,
    client: InstanceClient | ScenarioClient | None,
    models: ModelSettings,
    calibration: CalibrationResult | None = None,
) -> Grading:
    """Grade one recorded run of ``case``: premises, checks, judge verdicts, scenario verdicts.

    ``client`` runs the execution scenarios (None: scenarios not judged). ``calibration`` that did
    not pass makes every judge verdict not judged with the agreement in the reason.
    """
    premises = check_premises(case, record)
    checks = run_checks(case, record)
    expectations = expectations_of(case)
    info: dict[str, Any] = {
        "model": models.judge_model,
        "prompt_version": JUDGE_PROMPT_VERSION,
        "verifier_prompt_version": VERIFIER_PROMPT_VERSION,
    }
    if calibration is not None:
        info.update(
            calibration_agreement=round(calibration.agreement, 4),
            calibration_kappa=round(calibration.kappa, 4),
            calibration_threshold=calibration.threshold,
            calibration_n=calibration.n,
            calibration_unjudged=calibration.unjudged,
            calibration_set=calibration.set_path,
            calibrated=calibration.passed,
        )

    if failed_premises(premises):
        # Nothing was tested, so nothing is judged and no model call is spent.
        units = [
            *not_judged_all(expectations, "premise failed"),
            *_scenario_placeholders(case, "premise failed"),
            *checks,
        ]
        voided = void_units(units, premises, ended_by=record.ended_by)
        return Grading(verdicts=voided, premises=premises, judge=info)
    faults = audit_user_turns(case, record)
    if faults:
        # The simulated user misspoke: model-graded units read the whole conversation, so no model call
        # is spent on them; checks that point before the first fault keep their verdict.
        units = [*not_judged_all(expectations, "proxy fault"), *_scenario_placeholders(case, "proxy fault"), *checks]
        return Grading(
            verdicts=void_for_proxy_faults(units, faults), premises=[*premises, fault_premise(faults)], judge=info
        )

    # An expectation whose own premise failed (a token claim with no run debug) is never sent to the judge:
    # it would be asked to grade numbers nobody measured.
    held = held_back_units(premises)
    withheld = [
        UnitVerdict(
            unit=e.unit,
            kind=e.kind,
            label=e.text,
            status="not_judged",
            reason=f"not judged: {held[e.unit]}",
            attribution="verification_gap",
        )
        for e in expectations
        if e.unit in held
    ]
    expectations = [e for e in expectations if e.unit not in held]
    judged: JudgeOutcome | None = None  # stays None only when there is nothing for the judge
    scenarios: list[UnitVerdict] = []
    verifier_usage = ModelUsage()

    async def _judge() -> None:
        nonlocal judged
        if calibration is not None and not calibration.passed and models.judge_enabled:
            judged = JudgeOutcome(verdicts=not_judged_all(expectations, calibration.gate_reason))
            return
        try:
            judged = await judge_expectations(case, record, models=models, expectations=expectations)
        except Exception as exc:  # a failure inside the case is a result, never a crash of the run
            judged = JudgeOutcome(verdicts=not_judged_all(expectations, f"judge error: {type(exc).__name__}: {exc}"))

    async def _scenarios() -> None:
        nonlocal scenarios
        try:
            scenarios = await run_scenarios(case, record, client=client, models=models, usage=verifier_usage)
        except Exception as exc:  # same: one broken scenario path must not lose the judge's verdicts
            scenarios = _scenario_placeholders(case, f"scenario execution error: {type(exc).__name__}: {exc}")

    if expectations and case.execution_scenarios:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_judge)
            tg.start_soon(_scenarios)
    else:
        # At most one of them waits on anything (the other returns at once): two tasks in a group
        # for that cost more than the rest of grading a typical case.
        if expectations:  # with none, every judge path returns no verdict and no info of its own
            await _judge()
        await _scenarios()

    judge_verdicts: list[UnitVerdict] = []
    if judged is not None:
        info.update({f"judge_{k}": v for k, v in judged.info.items() if k not in ("model", "prompt_version")})
        judge_verdicts = judged.verdicts
    order = {e.unit: i for i, e in enumerate(expectations_of(case))}
    expectation_verdicts = sorted([*withheld, *judge_verdicts], key=lambda v: order.get(v.unit, len(order)))
    events = event_units(case.checks)
    verdicts = _blame_timeout([*expectation_verdicts, *scenarios, *checks], record.ended_by, events)
    usage = {"judge": judged.usage if judged is not None else ModelUsage(), "verifier": verifier_usage}
    return Grading(verdicts=verdicts, premises=premises, judge=info, usage={k: v for k, v in usage.items() if v.calls})
