"""Premises: a case whose premise did not hold judges nothing, and counts nothing as failed."""

from __future__ import annotations

from tests.grading.records import case, clean_record, compacted_memory, seeded_failed
from threadcase.grading.premises import check_premises, void_units
from threadcase.records import BUILD_FAILED_TIMEOUT, PriorRunOutcome, SeedOutcome, Turn
from threadcase.verdicts import UnitVerdict
from threadcase.wire import ObservationCursor, ThreadMemory

_SEED = {
    "mode": "inline",
    "messages": [{"role": "user", "text": "build it"}],
    "workflows": [{"id": "seed-wf-0001", "name": "Digest", "nodes": [], "connections": {}}],
    "priorRuns": [{"workflow": "seed-wf-0001"}],
}


def _names(premises: list) -> dict[str, bool]:  # type: ignore[type-arg]
    return {p.name: p.held for p in premises}


def test_clean_run_holds_every_premise() -> None:
    assert _names(check_premises(case(), clean_record())) == {
        "model-provider": True,
        "instance-undisturbed": True,
        "agent-output": True,
    }


def test_compaction_premise() -> None:
    compaction = case(requiresMemoryCompaction=True)
    assert not _names(check_premises(compaction, clean_record()))["memory-compaction"]
    cursor_only = clean_record(memory=ThreadMemory(cursor=ObservationCursor(lastObservedMessageId="m")))
    failed = [p for p in check_premises(compaction, cursor_only) if not p.held]
    assert failed[0].reason == "observational memory compacted this thread but kept no observation rows"
    assert _names(check_premises(compaction, clean_record(memory=compacted_memory())))["memory-compaction"]


def test_seed_and_prior_run_premises() -> None:
    seeded = case(seed=_SEED)
    record = clean_record(
        seed=SeedOutcome(mode="inline", prior_runs=[PriorRunOutcome(workflow="seed-wf-0001", ran=True)])
    )
    assert _names(check_premises(seeded, record)) == {
        "seed-restored": True,
        "prior-runs-ran": True,
        "model-provider": True,
        "instance-undisturbed": True,
        "agent-output": True,
    }
    never_ran = clean_record(seed=SeedOutcome(mode="inline", prior_runs=[]))
    assert not _names(check_premises(seeded, never_ran))["prior-runs-ran"]
    failed = [p for p in check_premises(seeded, clean_record(seed=seeded_failed())) if not p.held]
    assert "restore-thread answered 500" in failed[0].reason


def test_an_instance_without_a_memory_route_leaves_compaction_not_judged() -> None:
    """n8n 2.41 has no memory route: compaction can be neither shown nor refuted, so it is never a pass
    nor a fail, and the reason says why."""
    record = clean_record(memory_unavailable="this instance exposes no memory route")
    premises = check_premises(case(requiresMemoryCompaction=True), record)
    failed = [p for p in premises if not p.held]
    assert [(p.name, p.reason) for p in failed] == [("memory-compaction", "this instance exposes no memory route")]
    verdicts = [UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="pass", reason="r")]
    voided = void_units(verdicts, premises)
    assert [(v.status, v.attribution) for v in voided] == [("not_judged", "framework_issue")]
    assert voided[0].reason.endswith("this instance exposes no memory route")
    # A case that does not need compaction is untouched by the missing route.
    assert all(p.held for p in check_premises(case(), record))


def test_a_model_provider_failure_voids_everything_with_the_providers_words() -> None:
    """The builder's model failed (n8n: an error event, then a run that ended in error saying nothing):
    not the agent's doing, so nothing is judged, attributed to the framework, and the reason is the
    provider's own message, not "the build produced no agent output"."""
    message = "Failed after 3 attempts. Last error: AI_APICallError: upstream overloaded"
    silent = clean_record(
        model_failure=message,
        ended_by="error",
        turns=[Turn(index=0, role="user", text="hi"), Turn(index=1, role="assistant", finish_status="error")],
    )
    premises = check_premises(case(), silent)
    failed = [p for p in premises if not p.held]
    assert [p.name for p in failed] == ["model-provider"]
    assert failed[0].reason == f"the model provider failed: {message}"
    verdicts = [
        UnitVerdict(
            unit="process#0", kind="process", label="x", status="fail", reason="r", attribution="builder_issue"
        ),
        UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="pass", reason="r"),
    ]
    voided = void_units(verdicts, premises, ended_by=silent.ended_by)
    assert {(v.status, v.attribution) for v in voided} == {("not_judged", "framework_issue")}
    assert all(message in v.reason for v in voided)


def test_no_agent_output() -> None:
    silent = clean_record(turns=[Turn(index=0, role="user", text="hi"), Turn(index=1, role="assistant")])
    premise = check_premises(case(), silent)[-1]
    assert not premise.held
    assert premise.reason == "the build produced no agent output"


def test_a_failed_premise_voids_every_unit_including_checks() -> None:
    verdicts = [
        UnitVerdict(
            unit="process#0", kind="process", label="x", status="fail", reason="r", attribution="builder_issue"
        ),
        UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="pass", reason="r"),
    ]
    premises = check_premises(case(requiresMemoryCompaction=True), clean_record())
    voided = void_units(verdicts, premises)
    assert {v.status for v in voided} == {"not_judged"}
    assert {v.attribution for v in voided} == {"framework_issue"}
    assert "compaction cannot be shown" in voided[0].reason
    assert void_units(verdicts, check_premises(case(), clean_record())) == verdicts


def test_an_instance_failure_the_conversation_survived_voids_the_case() -> None:
    """Regression: this used to be a regex over warning texts in the runner; now the loop records it."""
    record = clean_record()
    record.note_instance_failure("confirm r1 failed: instance refused the call (POST /x -> 503)", record.turns[-1])
    premises = check_premises(case(), record)
    failed = [p for p in premises if not p.held]
    assert [p.name for p in failed] == ["instance-undisturbed"]
    assert "confirm r1 failed" in failed[0].reason
    assert "confirm r1 failed" in record.turns[-1].errors[-1]
    verdicts = [UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="pass", reason="r")]
    assert [v.status for v in void_units(verdicts, premises)] == ["not_judged"]


def test_a_single_prompt_run_cut_off_before_any_output_is_the_clocks() -> None:
    """Regression: a single-prompt timeout with no output read "the build produced no agent output",
    blamed on the framework, instead of the BUILD FAILED timeout line blamed on the clock."""
    silent = clean_record(
        mode="single-prompt",
        ended_by="turn-timeout",
        turns=[Turn(index=0, role="user", text="hi"), Turn(index=1, role="assistant", finish_status="timeout")],
    )
    premises = check_premises(case(), silent)
    assert [(p.name, p.reason) for p in premises if not p.held] == [("agent-output", BUILD_FAILED_TIMEOUT)]
    verdicts = [UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="fail", reason="r")]
    voided = void_units(verdicts, premises, ended_by=silent.ended_by)
    assert [(v.status, v.attribution, v.reason) for v in voided] == [("not_judged", "timeout", BUILD_FAILED_TIMEOUT)]


def test_a_multi_turn_run_cut_off_before_any_output_names_the_ending() -> None:
    silent = clean_record(ended_by="stalled", turns=[Turn(index=0, role="user", text="hi")])
    premise = check_premises(case(), silent)[-1]
    assert premise.reason == "the conversation ended (stalled) before the agent produced any output"
    assert void_units([], [premise], ended_by="stalled") == []
    verdicts = [UnitVerdict(unit="outcome#0", kind="outcome", label="y", status="fail", reason="r")]
    assert void_units(verdicts, [premise], ended_by="stalled")[0].attribution == "timeout"


def test_a_framework_premise_beside_a_timeout_still_blames_the_framework() -> None:
    record = clean_record(ended_by="turn-timeout", turns=[Turn(index=0, role="user", text="hi")])
    record.note_instance_failure("confirm r1 failed: 503")
    premises = check_premises(case(), record)
    verdicts = [UnitVerdict(unit="outcome#0", kind="outcome", label="y", status="fail", reason="r")]
    voided = void_units(verdicts, premises, ended_by=record.ended_by)
    assert voided[0].attribution == "framework_issue"
    assert "confirm r1 failed" in voided[0].reason


def test_two_prior_runs_of_one_workflow_are_checked_one_by_one() -> None:
    """Regression: outcomes were keyed by workflow id, so a second prior run of the same workflow that
    ran hid a first one that never ran, and the premise held."""
    twice = case(seed={**_SEED, "priorRuns": [{"workflow": "seed-wf-0001"}, {"workflow": "seed-wf-0001"}]})
    first_failed = SeedOutcome(
        mode="inline",
        prior_runs=[
            PriorRunOutcome(workflow="seed-wf-0001", ran=False, error="execute answered 503"),
            PriorRunOutcome(workflow="seed-wf-0001", ran=True, success=True),
        ],
    )
    premise = next(p for p in check_premises(twice, clean_record(seed=first_failed)) if p.name == "prior-runs-ran")
    assert not premise.held
    assert premise.reason == "never ran: prior run #0 (seed workflow 'seed-wf-0001'): execute answered 503"
    only_one = SeedOutcome(mode="inline", prior_runs=first_failed.prior_runs[1:])
    premise = next(p for p in check_premises(twice, clean_record(seed=only_one)) if p.name == "prior-runs-ran")
    assert not premise.held
    assert premise.reason == "never ran: prior run #1 (seed workflow 'seed-wf-0001'): no outcome recorded"
    both = SeedOutcome(mode="inline", prior_runs=[first_failed.prior_runs[1]] * 2)
    premise = next(p for p in check_premises(twice, clean_record(seed=both)) if p.name == "prior-runs-ran")
    assert premise.held
    assert premise.reason == "all 2 prior runs ran"
