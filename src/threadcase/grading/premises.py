"""Premise checks: did the run set up what the case is about? If not, nothing in it is judged.

A case whose premise did not hold tested nothing: a compaction case whose thread never compacted, a
seeded case whose seed was never restored, a prior run that never ran, a run where the agent produced
nothing at all. Every unit such a case carries becomes ``not_judged`` with the failed premise as the
reason and attribution ``framework_issue``, so it is excluded from pass rates and listed in the
report. An instance failure the conversation survived (a confirm that never arrived, a built
workflow that could not be read) is such a premise too: what followed was the harness's doing, not the
agent's. The judge never sees these checks (it does see the memory rows, as ground truth).

One premise failure is not the framework's: a run the clock cut off before the agent said or did
anything. Its units are not judged with attribution ``timeout`` (a single-prompt run says
:data:`~threadcase.records.BUILD_FAILED_TIMEOUT`), so a slow agent is neither failed nor
mistaken for a broken harness.
"""

from __future__ import annotations

from threadcase.case import schema
from threadcase.records import BUILD_FAILED_TIMEOUT, RunRecord
from threadcase.verdicts import Attribution, PremiseResult, UnitVerdict

__all__ = ["AGENT_OUTPUT", "TIMEOUT_ENDINGS", "check_premises", "failed_premises", "void_units"]

TIMEOUT_ENDINGS = frozenset({"turn-timeout", "conversation-timeout", "stalled"})
"""``RunRecord.ended_by`` values meaning a time budget ended the conversation, not the agent or the user."""

AGENT_OUTPUT = "agent-output"
"""The premise that the agent produced any live output at all."""


def _seed_restored(record: RunRecord) -> PremiseResult:
    if record.seed.restored:
        return PremiseResult(name="seed-restored", held=True, reason=f"the {record.seed.mode} seed was restored")
    why = f": {record.seed.error}" if record.seed.error else ""
    return PremiseResult(
        name="seed-restored", held=False, reason=f"the {record.seed.mode} seed could not be restored{why}"
    )


def _prior_runs(case: schema.Case, record: RunRecord) -> PremiseResult:
    declared = case.seed.prior_runs if isinstance(case.seed, schema.InlineSeed) else []
    # The seeder records one outcome per declared prior run, in order. Zip by position, not by
    # workflow id: two prior runs of one workflow must not let the second hide the first.
    outcomes = record.seed.prior_runs
    never = []
    for i, prior in enumerate(declared):
        outcome = outcomes[i] if i < len(outcomes) else None
        what = f"prior run #{i} (seed workflow {prior.workflow!r})"
        if outcome is None:
            never.append(f"{what}: no outcome recorded")
        elif outcome.workflow != prior.workflow:
            never.append(f"{what}: the outcome recorded is for {outcome.workflow!r}")
        elif not outcome.ran:
            never.append(f"{what}: {outcome.error or 'it did not run'}")
    if never:
        return PremiseResult(name="prior-runs-ran", held=False, reason="never ran: " + "; ".join(never))
    return PremiseResult(name="prior-runs-ran", held=True, reason=f"all {len(declared)} prior runs ran")


def _compaction(record: RunRecord) -> PremiseResult:
    memory = record.memory
    if memory is None:
        reason = "observational memory was never read for this thread, so compaction cannot be shown"
    elif memory.cursor is None:
        reason = "observational memory never compacted this thread (no observation cursor)"
    elif not memory.observations:
        reason = "observational memory compacted this thread but kept no observation rows"
    else:
        n = len(memory.observations)
        return PremiseResult(name="memory-compaction", held=True, reason=f"the thread compacted ({n} observations)")
    return PremiseResult(name="memory-compaction", held=False, reason=reason)


def _agent_output(record: RunRecord) -> PremiseResult:
    if record.produced_output:
        return PremiseResult(name=AGENT_OUTPUT, held=True, reason="the agent produced live output")
    if record.ended_by in TIMEOUT_ENDINGS:
        # Silence because the budget ran out is the clock's verdict, not "the build produced nothing".
        reason = (
            BUILD_FAILED_TIMEOUT
            if record.mode == "single-prompt"
            else f"the conversation ended ({record.ended_by}) before the agent produced any output"
        )
        return PremiseResult(name=AGENT_OUTPUT, held=False, reason=reason)
    return PremiseResult(name=AGENT_OUTPUT, held=False, reason="the build produced no agent output")


def _instance_undisturbed(record: RunRecord) -> PremiseResult:
    if not record.instance_failures:
        return PremiseResult(name="instance-undisturbed", held=True, reason="the instance answered every call")
    first = record.instance_failures[0]
    excerpt = first if len(first) <= 200 else first[:199] + "…"
    more = f" (and {len(record.instance_failures) - 1} more)" if len(record.instance_failures) > 1 else ""
    return PremiseResult(
        name="instance-undisturbed", held=False, reason=f"the instance failed during the run: {excerpt}{more}"
    )


def check_premises(case: schema.Case, record: RunRecord) -> list[PremiseResult]:
    """Every premise that applies to this case, held or not, in a fixed order."""
    premises = []
    if case.seed is not None or record.seed.mode != "none":
        premises.append(_seed_restored(record))
    if isinstance(case.seed, schema.InlineSeed) and case.seed.prior_runs:
        premises.append(_prior_runs(case, record))
    if case.requires_memory_compaction:
        premises.append(_compaction(record))
    premises.append(_instance_undisturbed(record))
    premises.append(_agent_output(record))
    return premises


def failed_premises(premises: list[PremiseResult]) -> list[PremiseResult]:
    """The premises that did not hold, in order; empty when the case tested what it claims."""
    return [p for p in premises if not p.held]


def void_units(
    verdicts: list[UnitVerdict], premises: list[PremiseResult], *, ended_by: str | None = None
) -> list[UnitVerdict]:
    """Every verdict turned not judged when a premise failed; unchanged otherwise.

    The deterministic checks are voided too: a case that tested nothing judges nothing, and a check
    that "passed" on a thread that never compacted would be a pass nobody earned. The attribution is
    ``framework_issue``, except when the only failure is silence from an agent whose run the clock
    cut off (``ended_by`` in :data:`TIMEOUT_ENDINGS`): then it is ``timeout`` and the reason is the
    premise's own (for a single-prompt run, ``BUILD FAILED: Run timed out with no scored result``).
    """
    failed = failed_premises(premises)
    if not failed:
        return verdicts
    attribution: Attribution = "framework_issue"
    reason = "not judged — premise failed: " + "; ".join(p.reason for p in failed)
    if ended_by in TIMEOUT_ENDINGS and [p.name for p in failed] == [AGENT_OUTPUT]:
        attribution, reason = "timeout", failed[0].reason
    return [
        v.model_copy(update={"status": "not_judged", "reason": reason, "attribution": attribution}) for v in verdicts
    ]
