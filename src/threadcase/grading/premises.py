"""Premise checks: did the run set up what the case is about? If not, nothing in it is judged.

A case whose premise did not hold tested nothing: a compaction case whose thread never compacted, a
seeded case whose seed was never restored, a prior run that never ran, a run where the agent produced
nothing at all. Every unit such a case carries becomes ``not_judged`` with the failed premise as the
reason and attribution ``framework_issue``, so it is excluded from pass rates and listed in the
report. An instance failure the conversation survived (a confirm that never arrived, a built
workflow that could not be read) is such a premise too: what followed was the harness's doing, not the
agent's. The judge never sees these checks (it does see the memory rows, as ground truth).

A premise may belong to some units only (``PremiseResult.units``): ``token-ground-truth`` holds when run
debug gave the token numbers of every live run, and only the expectations about tokens, caching or cost
depend on it. When it fails those are *not judged: no token ground truth* and never sent to the judge;
the rest of the case is graded as usual.

The simulated user's premises (:mod:`threadcase.grading.user_premises`) carry their own
attribution: a note the scripted user could not follow, or a value it gave against its script, is
``proxy_issue``; a scripted turn or a directive that never reached the agent is ``timeout`` when the
clock ended the conversation and ``verification_gap`` otherwise.

A model provider that failed (or an instance with no model for its agent) is a premise of the whole
case: the case tested the provider, not the agent, so its units are not judged with the provider's own
message as the reason, attributed ``framework_issue``. On an instance without an observational-memory
route (n8n 2.41) the compaction premise rests on run debug: it holds when a live run's model request
carried an ``<observations>`` block and fewer earlier messages than the thread held, and is not judged
otherwise ("the threshold was never crossed: …"), or with "this instance exposes no memory route" when
run debug recorded no request at all.

One premise failure is not the framework's: a run the clock cut off before the agent said or did
anything. Its units are not judged with attribution ``timeout`` (a single-prompt run says
:data:`~threadcase.records.BUILD_FAILED_TIMEOUT`), so a slow agent is neither failed nor
mistaken for a broken harness.
"""

from __future__ import annotations

import re

from threadcase.case import schema
from threadcase.grading.user_premises import user_premises
from threadcase.records import BUILD_FAILED_TIMEOUT, TIMEOUT_ENDINGS, RunPrompt, RunRecord
from threadcase.verdicts import Attribution, PremiseResult, UnitVerdict

__all__ = [
    "AGENT_OUTPUT",
    "MODEL_PROVIDER",
    "TIMEOUT_ENDINGS",
    "TOKEN_GROUND_TRUTH",
    "check_premises",
    "failed_premises",
    "held_back_units",
    "is_token_expectation",
    "void_units",
]


AGENT_OUTPUT = "agent-output"
"""The premise that the agent produced any live output at all."""

MODEL_PROVIDER = "model-provider"
"""The premise that the builder's model answered (the instance had one, and its provider did not fail)."""

TOKEN_GROUND_TRUTH = "token-ground-truth"
"""The premise of a cost or token expectation: run debug gave the token numbers of every live run."""

_TOKEN_WORDS = re.compile(
    r"\b(?:tokens?|cach(?:e|es|ed|ing)|uncached|costs?|costly|context\s+(?:window|size|usage|consumption))\b",
    re.IGNORECASE,
)


def is_token_expectation(text: str) -> bool:
    """An expectation about token numbers, caching or cost: only run debug's numbers can decide it."""
    return _TOKEN_WORDS.search(text) is not None


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


def _compaction_from_run_debug(record: RunRecord, no_route: str) -> PremiseResult:
    """The compaction premise on an instance without a memory route (n8n 2.41), from run debug's requests."""
    prompts = record.run_prompts
    if not prompts:
        # Neither a memory route nor a recorded request: the thread may well have compacted, but
        # nothing can show it either way.
        return PremiseResult(name="memory-compaction", held=False, reason=no_route)
    compacted = next((p for p in prompts if p.compacted), None)
    if compacted is not None:
        reason = (
            f"the thread compacted before turn {compacted.turn}: run debug shows its model request sent "
            f"{compacted.messages_sent} message(s) where the thread held {compacted.thread_messages} before it, "
            f"with {compacted.observations} observations in the system prompt (run {compacted.run_id}; {no_route})"
        )
        return PremiseResult(name="memory-compaction", held=True, reason=reason)

    def seen(p: RunPrompt) -> str:
        notes = "no observations" if p.observations is None else f"{p.observations} observations"
        return f"turn {p.turn} sent {p.messages_sent} message(s) after {p.thread_messages}, {notes}"

    reason = (
        "the threshold was never crossed: no live run's model request read the thread through observations "
        f"({'; '.join(seen(p) for p in prompts)}; from run debug, {no_route})"
    )
    return PremiseResult(name="memory-compaction", held=False, reason=reason)


def _compaction(record: RunRecord) -> PremiseResult:
    memory = record.memory
    if memory is None and record.memory_unavailable:
        return _compaction_from_run_debug(record, record.memory_unavailable)
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


def _model_provider(record: RunRecord) -> PremiseResult:
    if record.model_failure is None:
        return PremiseResult(name=MODEL_PROVIDER, held=True, reason="the builder's model answered")
    return PremiseResult(name=MODEL_PROVIDER, held=False, reason=f"the model provider failed: {record.model_failure}")


def _instance_undisturbed(record: RunRecord) -> PremiseResult:
    if not record.instance_failures:
        return PremiseResult(name="instance-undisturbed", held=True, reason="the instance answered every call")
    first = record.instance_failures[0]
    excerpt = first if len(first) <= 200 else first[:199] + "…"
    more = f" (and {len(record.instance_failures) - 1} more)" if len(record.instance_failures) > 1 else ""
    return PremiseResult(
        name="instance-undisturbed", held=False, reason=f"the instance failed during the run: {excerpt}{more}"
    )


def _token_ground_truth(record: RunRecord, units: list[str]) -> PremiseResult:
    runs = list(dict.fromkeys(rid for turn in record.live_turns for rid in turn.run_ids))
    read = [rid for rid in runs if rid in record.usage]
    if runs and len(read) == len(runs):
        reason = f"run debug gave the token numbers of all {len(runs)} live run(s)"
        return PremiseResult(name=TOKEN_GROUND_TRUTH, held=True, reason=reason, units=units)
    if not runs:
        reason = "no token ground truth: the conversation recorded no live run"
    elif not read:
        reason = f"no token ground truth: no run debug captured for any of the {len(runs)} live run(s)"
    else:
        reason = f"no token ground truth: run debug captured only {len(read)} of the {len(runs)} live runs"
    return PremiseResult(name=TOKEN_GROUND_TRUTH, held=False, reason=reason, units=units)


def check_premises(case: schema.Case, record: RunRecord) -> list[PremiseResult]:
    """Every premise that applies to this case, held or not, in a fixed order."""
    # The provider first: when the model never answered, that is the reason a reader needs to see.
    premises = [_model_provider(record)]
    token_units = [f"process#{i}" for i, text in enumerate(case.process_expectations) if is_token_expectation(text)]
    token_units += [f"outcome#{i}" for i, text in enumerate(case.outcome_expectations) if is_token_expectation(text)]
    if case.seed is not None or record.seed.mode != "none":
        premises.append(_seed_restored(record))
    if isinstance(case.seed, schema.InlineSeed) and case.seed.prior_runs:
        premises.append(_prior_runs(case, record))
    if case.requires_memory_compaction:
        premises.append(_compaction(record))
    premises.append(_instance_undisturbed(record))
    if record.model_failure is None:
        # With no model answering, "the agent produced nothing" says nothing more about the agent.
        premises.append(_agent_output(record))
    if token_units:
        premises.append(_token_ground_truth(record, token_units))
    premises.extend(user_premises(case, record))
    return premises


def failed_premises(premises: list[PremiseResult]) -> list[PremiseResult]:
    """The premises of the whole case that did not hold, in order; empty when the case tested what it claims.

    A premise scoped to some units (``units``) is not here: it holds back only those (:func:`held_back_units`).
    """
    return [p for p in premises if not p.held and not p.units]


def held_back_units(premises: list[PremiseResult]) -> dict[str, str]:
    """Unit -> the reason it is not judged, for every unit whose own premise (``units``) failed."""
    held: dict[str, str] = {}
    for premise in premises:
        if not premise.held:
            for unit in premise.units:
                held.setdefault(unit, premise.reason)
    return held


_BLAME_ORDER: tuple[Attribution, ...] = ("framework_issue", "proxy_issue", "timeout", "verification_gap")
"""When several premises failed, the first of these among their attributions speaks for all: a harness
or instance fault explains everything after it, the simulated user's mistakes explain a missing event."""


def _blame(failed: list[PremiseResult]) -> Attribution:
    found = {p.attribution or "framework_issue" for p in failed}
    return next((a for a in _BLAME_ORDER if a in found), "framework_issue")


def void_units(
    verdicts: list[UnitVerdict], premises: list[PremiseResult], *, ended_by: str | None = None
) -> list[UnitVerdict]:
    """Every verdict turned not judged when a premise failed; unchanged otherwise.

    The deterministic checks are voided too: a case that tested nothing judges nothing, and a check
    that "passed" on a thread that never compacted would be a pass nobody earned. The attribution is
    the failed premises' own (``framework_issue`` unless a premise says otherwise; the first of
    :data:`_BLAME_ORDER` among them), except when the only failure is silence from an agent whose run the clock
    cut off (``ended_by`` in :data:`TIMEOUT_ENDINGS`): then it is ``timeout`` and the reason is the
    premise's own (for a single-prompt run, ``BUILD FAILED: Run timed out with no scored result``).
    """
    failed = failed_premises(premises)
    if not failed:
        return verdicts
    attribution = _blame(failed)
    reason = "not judged — premise failed: " + "; ".join(p.reason for p in failed)
    if ended_by in TIMEOUT_ENDINGS and [p.name for p in failed] == [AGENT_OUTPUT]:
        attribution, reason = "timeout", failed[0].reason
    return [
        v.model_copy(update={"status": "not_judged", "reason": reason, "attribution": attribution}) for v in verdicts
    ]
