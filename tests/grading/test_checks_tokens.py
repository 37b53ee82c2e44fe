"""Per-turn token bounds (``maxInputTokensPerTurn``, ``maxOutputTokensPerTurn``): judged on the numbers each
``### Turn N`` header shows, live turns only, and never a pass on a turn whose numbers are missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.grading.records import case, clean_record, with_turns
from tests.test_cli_cases import run, write_case
from tests.test_schema import assert_problem, base, ok
from threadcase.case.schema import Case
from threadcase.grading import grade_case
from threadcase.grading.checks import run_checks
from threadcase.models import ModelSettings
from threadcase.records import RunRecord, Turn
from threadcase.render import render_transcript
from threadcase.verdicts import UnitVerdict
from threadcase.wire import TokenUsage

IN = "check:maxInputTokensPerTurn"
OUT = "check:maxOutputTokensPerTurn"


def _grade(checks: dict[str, Any], record: RunRecord) -> dict[str, UnitVerdict]:
    return {v.unit: v for v in run_checks(case(checks=checks), record)}


def _seeded_then_live() -> RunRecord:
    """A restored exchange (turn 1, its run far over any bound) followed by the live turns 2 and 3."""
    live = clean_record()
    seeded = [
        Turn(index=0, role="user", text="Earlier: build the digest.", seeded=True, sent_by="seed"),
        Turn(index=1, role="assistant", text="Built it.", seeded=True, run_ids=["run-old"]),
    ]
    moved = [t.model_copy(update={"index": t.index + 2}) for t in live.turns]
    usage = {**live.usage, "run-old": [TokenUsage(inputTokens=90_000, outputTokens=9_000)]}
    return with_turns(live, [*seeded, *moved]).model_copy(update={"usage": usage})


# --- pass and fail ----------------------------------------------------------------------------


def test_within_both_bounds_passes_listing_each_turns_numbers() -> None:
    # clean_record: turn 1 = 2 steps, 8500 in / 420 out; turn 2 = 1 step, 5200 in / 80 out.
    got = _grade({"maxInputTokensPerTurn": 8_500, "maxOutputTokensPerTurn": 1_000}, clean_record())
    assert (got[IN].status, got[IN].attribution) == ("pass", None)
    assert got[IN].reason == "turn 1: 8,500 in; turn 2: 5,200 in; max 8,500 ≤ 8,500"
    assert got[IN].label == "every live agent turn read at most 8,500 input tokens"
    assert got[OUT].status == "pass"
    assert got[OUT].reason == "turn 1: 420 out; turn 2: 80 out; max 420 ≤ 1,000"


def test_the_numbers_are_the_ones_the_transcript_header_shows() -> None:
    record = clean_record()
    transcript = render_transcript(record)
    assert "### Turn 1 (2 steps, 8500 tokens in [3000 cached], 420 tokens out)" in transcript
    assert "### Turn 2 (1 steps, 5200 tokens in [4400 cached], 80 tokens out)" in transcript
    assert _grade({"maxInputTokensPerTurn": 8_499}, record)[IN].status == "fail"
    assert _grade({"maxOutputTokensPerTurn": 419}, record)[OUT].status == "fail"


def test_a_turn_over_the_bound_fails_as_the_builders_naming_the_turn() -> None:
    got = _grade({"maxInputTokensPerTurn": 6_000, "maxOutputTokensPerTurn": 100}, clean_record())
    assert (got[IN].status, got[IN].attribution) == ("fail", "builder_issue")
    assert got[IN].reason == "turn 1 (8,500 in) exceeds 6,000; per turn: turn 1: 8,500 in; turn 2: 5,200 in"
    assert got[IN].turn_index == 1  # the agent's answer in turn 1
    assert got[OUT].reason == "turn 1 (420 out) exceeds 100; per turn: turn 1: 420 out; turn 2: 80 out"


def test_every_turn_over_the_bound_is_named() -> None:
    got = _grade({"maxInputTokensPerTurn": 5_000}, clean_record())[IN]
    assert got.status == "fail"
    assert got.reason.startswith("turn 1 (8,500 in) and turn 2 (5,200 in) exceed 5,000;")


@pytest.mark.anyio
async def test_a_failure_stays_the_builders_when_the_clock_ended_the_conversation() -> None:
    """The tokens were already spent: more time could not have brought them under the bound."""
    graded = await grade_case(
        case(checks={"maxInputTokensPerTurn": 5_000, "maxOutputTokensPerTurn": 100}),
        clean_record(ended_by="turn-timeout"),
        client=None,
        models=ModelSettings(),
    )
    verdicts = [v for v in graded.verdicts if v.kind == "check"]
    assert {(v.unit, v.status, v.attribution) for v in verdicts} == {
        (IN, "fail", "builder_issue"),
        (OUT, "fail", "builder_issue"),
    }


# --- missing numbers: never a pass ------------------------------------------------------------


def test_no_run_debug_at_all_is_not_judged() -> None:
    got = _grade({"maxInputTokensPerTurn": 100_000, "maxOutputTokensPerTurn": 100_000}, clean_record(usage={}))
    for unit in (IN, OUT):
        assert (got[unit].status, got[unit].attribution) == ("not_judged", "verification_gap"), unit
        assert (
            "(turn 1: run debug gave 0 of its 1 run(s); turn 2: run debug gave 0 of its 1 run(s))" in got[unit].reason
        )


def test_one_turn_without_numbers_keeps_the_others_from_passing() -> None:
    record = clean_record()
    del record.usage["run-2"]
    got = _grade({"maxInputTokensPerTurn": 100_000}, record)[IN]
    assert (got.status, got.attribution) == ("not_judged", "verification_gap")
    assert got.reason == (
        "not every live agent turn has token numbers (turn 2: run debug gave 0 of its 1 run(s)), "
        "so the bound cannot be judged"
    )


def test_a_turn_with_part_of_its_runs_or_no_step_is_not_judged() -> None:
    partial = clean_record()
    partial.turns[3].run_ids.append("run-3")
    assert _grade({"maxInputTokensPerTurn": 100_000}, partial)[IN].status == "not_judged"
    stepless = clean_record()
    stepless.usage["run-2"] = []
    got = _grade({"maxOutputTokensPerTurn": 100_000}, stepless)[OUT]
    assert (got.status, got.reason) == (
        "not_judged",
        "not every live agent turn has token numbers (turn 2: run debug gave no step for it), "
        "so the bound cannot be judged",
    )


def test_a_measured_turn_over_the_bound_still_fails_beside_one_without_numbers() -> None:
    """Missing numbers forbid a pass, not a failure already proven on a turn that has them."""
    record = clean_record()
    del record.usage["run-2"]
    got = _grade({"maxInputTokensPerTurn": 6_000}, record)[IN]
    assert (got.status, got.attribution) == ("fail", "builder_issue")
    assert got.reason == (
        "turn 1 (8,500 in) exceeds 6,000; per turn: turn 1: 8,500 in; "
        "turn 2: no numbers (run debug gave 0 of its 1 run(s))"
    )


def test_no_live_agent_turn_is_not_judged() -> None:
    silent = with_turns(clean_record(), [Turn(index=0, role="user", text="Build it.", sent_by="opener")])
    got = _grade({"maxInputTokensPerTurn": 10, "maxOutputTokensPerTurn": 10}, silent)
    for unit in (IN, OUT):
        assert (got[unit].status, got[unit].attribution) == ("not_judged", "verification_gap")
        assert got[unit].reason == "the agent answered no live turn, so there was no turn to measure"


# --- seeded turns -----------------------------------------------------------------------------


def test_seeded_turns_are_not_counted_and_live_turns_keep_their_header_numbers() -> None:
    record = _seeded_then_live()
    assert "### Turn 1 (1 steps, 90000 tokens in" in render_transcript(record)
    got = _grade({"maxInputTokensPerTurn": 8_500, "maxOutputTokensPerTurn": 420}, record)
    assert got[IN].status == "pass"
    assert got[IN].reason == "turn 2: 8,500 in; turn 3: 5,200 in; max 8,500 ≤ 8,500"
    assert got[OUT].status == "pass"


def test_a_seeded_turn_without_run_debug_does_not_hold_the_bound_back() -> None:
    record = _seeded_then_live()
    del record.usage["run-old"]
    assert _grade({"maxInputTokensPerTurn": 8_500}, record)[IN].status == "pass"


# --- the case file ----------------------------------------------------------------------------


def test_each_bound_is_one_unit_under_its_camel_case_key() -> None:
    loaded = ok(base(checks={"maxInputTokensPerTurn": 5_000, "maxOutputTokensPerTurn": 800, "maxLines": 4}))
    assert loaded.checks is not None
    assert loaded.checks.max_input_tokens_per_turn == 5_000
    assert loaded.checks.max_output_tokens_per_turn == 800
    assert loaded.checks.unit_keys() == ["check:maxLines", IN, OUT]
    assert loaded.unit_count == 4  # the outcome expectation and three checks


@pytest.mark.parametrize("key", ["maxInputTokensPerTurn", "maxOutputTokensPerTurn"])
@pytest.mark.parametrize(("value", "message"), [(0, "0 is not allowed"), (-5, "-5 is not allowed")])
def test_zero_or_a_negative_bound_is_refused(key: str, value: int, message: str) -> None:
    assert_problem(base(checks={key: value}), f"checks.{key}", f"{message}; it must be greater than 0")


def test_the_snake_case_spelling_is_an_unknown_key() -> None:
    assert_problem(
        base(checks={"max_input_tokens_per_turn": 5_000}), "checks.max_input_tokens_per_turn", "maxInputTokensPerTurn"
    )


def test_validate_prints_one_line_for_a_bad_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_case(tmp_path, "file", checks={"maxOutputTokensPerTurn": 0})
    code, out, err = run(["validate", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"{bad}: checks.maxOutputTokensPerTurn: 0 is not allowed; it must be greater than 0"]


def test_the_json_schema_describes_both_bounds() -> None:
    checks = Case.model_json_schema(by_alias=True)["$defs"]["Checks"]["properties"]
    for key in ("maxInputTokensPerTurn", "maxOutputTokensPerTurn"):
        integer = next(s for s in checks[key]["anyOf"] if s.get("type") == "integer")
        assert integer["exclusiveMinimum"] == 0, key
        assert "run-debug steps" in checks[key]["description"], key
