"""The compaction premise on an instance without a memory route (n8n 2.41): run debug's requests decide.

It holds when a live run's model request read the thread through observations; it is not judged, with
what run debug showed, when none did; and with no recorded request it stays what it was before run debug
was read: not judged, "this instance exposes no memory route".
"""

from __future__ import annotations

from tests.grading.records import case, clean_record, compacted_memory
from threadcase.grading.premises import check_premises, void_units
from threadcase.records import RunPrompt, RunRecord
from threadcase.verdicts import PremiseResult, UnitVerdict

NO_ROUTE = "this instance exposes no memory route"
FULL = RunPrompt(run_id="run-1", turn=1, messages_sent=27, thread_messages=26)
COMPACTED = RunPrompt(run_id="run-2", turn=2, messages_sent=1, thread_messages=28, observations=14)


def _compaction(**record: object) -> PremiseResult:
    premises = check_premises(case(requiresMemoryCompaction=True), clean_record(**record))
    return next(p for p in premises if p.name == "memory-compaction")


def test_a_compacted_request_in_run_debug_holds_the_premise_and_names_the_evidence() -> None:
    premise = _compaction(memory_unavailable=NO_ROUTE, run_prompts=[FULL, COMPACTED])
    assert premise.held
    assert premise.reason == (
        "the thread compacted before turn 2: run debug shows its model request sent 1 message(s) where the "
        "thread held 28 before it, with 14 observations in the system prompt (run run-2; " + NO_ROUTE + ")"
    )


def test_no_compacted_request_is_not_judged_never_a_fail_of_the_builder() -> None:
    premise = _compaction(memory_unavailable=NO_ROUTE, run_prompts=[FULL])
    assert not premise.held
    assert premise.reason == (
        "the threshold was never crossed: no live run's model request read the thread through observations "
        "(turn 1 sent 27 message(s) after 26, no observations; from run debug, " + NO_ROUTE + ")"
    )
    verdicts = [UnitVerdict(unit="check:mustContain#0", kind="check", label="y", status="fail", reason="r")]
    voided = void_units(verdicts, [premise])
    assert [(v.status, v.attribution) for v in voided] == [("not_judged", "framework_issue")]
    assert "the threshold was never crossed" in voided[0].reason


def test_observations_with_the_whole_history_still_sent_are_not_a_compaction() -> None:
    """An ``<observations>`` block alone proves nothing: the older messages must also have stopped being sent."""
    both = RunPrompt(run_id="run-3", turn=2, messages_sent=29, thread_messages=28, observations=3)
    premise = _compaction(memory_unavailable=NO_ROUTE, run_prompts=[FULL, both])
    assert not premise.held
    assert "turn 2 sent 29 message(s) after 28, 3 observations" in premise.reason


def test_without_run_debug_the_missing_route_is_the_reason_as_before() -> None:
    premise = _compaction(memory_unavailable=NO_ROUTE)
    assert (premise.held, premise.reason) == (False, NO_ROUTE)


def test_the_memory_route_stays_the_source_where_there_is_one() -> None:
    """The demo has the route: its rows decide, whatever run debug recorded."""
    assert _compaction(memory=compacted_memory(), run_prompts=[FULL]).held
    never = _compaction(run_prompts=[COMPACTED])  # memory never read, route not known to be missing
    assert not never.held
    assert never.reason == "observational memory was never read for this thread, so compaction cannot be shown"


def test_a_journal_written_before_run_prompts_still_reads() -> None:
    old = clean_record().model_dump(mode="json")
    old.pop("run_prompts")
    restored = RunRecord.model_validate(old)
    assert restored.run_prompts == []
    now = clean_record(run_prompts=[COMPACTED])
    assert RunRecord.model_validate_json(now.model_dump_json()).run_prompts == [COMPACTED]
