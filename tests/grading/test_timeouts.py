"""A budget that ends the conversation: what was collected is still graded, and the failures the cut
explains are attributed to ``timeout``, never counted against the builder."""

from __future__ import annotations

import pytest

from tests.conversation.helpers import FAST, drive, make_case
from tests.grading.records import case, clean_record
from threadcase.demo_instance import DemoSettings
from threadcase.grading import grade_case
from threadcase.models import ModelSettings
from threadcase.records import BUILD_FAILED_TIMEOUT

pytestmark = pytest.mark.anyio

CHECKS = {
    "mustContain": ["the schedule is set"],
    "mustNotContain": ["Anything else"],
    "nodeTypesPresent": ["n8n-nodes-base.gmail"],
    "toolsCalled": ["run-workflow"],
    "maxLines": 1,
}


async def test_failing_checks_of_a_cut_conversation_are_the_clocks_unless_already_done() -> None:
    """Regression: failing checks of a timed-out run counted against the builder (only model-graded
    units were re-attributed). A check that failed on something the agent already said stays its own."""
    for ended_by in ("turn-timeout", "conversation-timeout", "stalled"):
        graded = await grade_case(
            case(checks=CHECKS), clean_record(ended_by=ended_by), client=None, models=ModelSettings()
        )
        got = {v.unit: v for v in graded.verdicts if v.kind == "check"}
        for unit in ("check:mustContain#0", "check:nodeTypesPresent#0", "check:toolsCalled#0"):
            assert (got[unit].status, got[unit].attribution) == ("fail", "timeout"), unit
            assert not got[unit].counts_against_builder
            assert f"(the conversation ended: {ended_by})" in got[unit].reason
        for unit in ("check:mustNotContain#0", "check:maxLines"):
            assert (got[unit].status, got[unit].attribution) == ("fail", "builder_issue"), unit
    finished = await grade_case(case(checks=CHECKS), clean_record(), client=None, models=ModelSettings())
    assert {v.attribution for v in finished.verdicts if v.status == "fail"} == {"builder_issue"}


async def test_a_single_prompt_run_timed_out_on_the_demo_reports_build_failed() -> None:
    """The audit's repro (``--timeout-seconds 0.3 --demo-latency-ms 400``): no output before the budget
    ran out is "BUILD FAILED: Run timed out with no scored result", attribution timeout."""
    single = make_case(
        ["Every day at 9am post a summary to #general on Slack"],
        checks={"nodeTypesPresent": ["n8n-nodes-base.slack"], "toolsCalled": ["build-workflow"]},
    )
    assert single.mode == "single-prompt"
    out = await drive(
        single, budgets=FAST.model_copy(update={"turn_seconds": 0.3}), settings=DemoSettings(latency_ms=400)
    )
    assert out.record.ended_by == "turn-timeout"
    assert not out.record.produced_output
    graded = await grade_case(single, out.record, client=None, models=ModelSettings())
    assert [(p.name, p.reason) for p in graded.premises if not p.held] == [("agent-output", BUILD_FAILED_TIMEOUT)]
    assert {(v.status, v.attribution, v.reason) for v in graded.verdicts} == {
        ("not_judged", "timeout", BUILD_FAILED_TIMEOUT)
    }
