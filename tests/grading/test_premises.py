"""Premises: a case whose premise did not hold judges nothing, and counts nothing as failed."""

from __future__ import annotations

from tests.grading.records import case, clean_record, compacted_memory, seeded_failed
from threadcase.harness.premises import check_premises, void_units
from threadcase.harness.transcript import PriorRunOutcome, SeedOutcome, Turn
from threadcase.harness.verdicts import UnitVerdict
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
    assert _names(check_premises(case(), clean_record())) == {"instance-undisturbed": True, "agent-output": True}


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
        "instance-undisturbed": True,
        "agent-output": True,
    }
    never_ran = clean_record(seed=SeedOutcome(mode="inline", prior_runs=[]))
    assert not _names(check_premises(seeded, never_ran))["prior-runs-ran"]
    failed = check_premises(seeded, clean_record(seed=seeded_failed()))
    assert "restore-thread answered 500" in failed[0].reason
    assert not failed[0].held


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
