"""The judge against the fake model server: prompt sections, index mapping, missing verdicts, retries,
malformed output (never a crash, never a pass), the calibration gate and timeout attribution."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import case, clean_record, compacted_memory
from threadcase.grading import CalibrationResult, grade_case
from threadcase.grading.judge import judge_expectations
from threadcase.grading.prompts import JUDGE_SYSTEM_PROMPT
from threadcase.models import ModelSettings
from threadcase.verdicts import UnitVerdict

TWO = case(
    processExpectations=["asks which channel before building"],
    outcomeExpectations=["the workflow posts to Slack", "the workflow runs every morning"],
)


def _models(base_url: str, timeout_seconds: float = 5) -> ModelSettings:
    return ModelSettings(
        api_key=SecretStr("test-key"), base_url=base_url, judge_model="fake-judge", timeout_seconds=timeout_seconds
    )


def _by_unit(verdicts: list[UnitVerdict]) -> dict[str, UnitVerdict]:
    return {v.unit: v for v in verdicts}


def _user_parts(fake: FakeOpenAI, n: int = 0) -> list[str]:
    content = fake.requests[n]["messages"][1]["content"]
    return [part["text"] for part in content]


@pytest.mark.anyio
async def test_prompt_sections_are_sent_static_context_first(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"results": [{"index": i, "reason": f"turn 1 shows it ({i})", "pass": True} for i in range(3)]})
    await judge_expectations(TWO, clean_record(memory=compacted_memory()), models=_models(url))
    request = fake.requests[0]
    assert request["model"] == "fake-judge"
    assert request["messages"][0] == {"role": "system", "content": JUDGE_SYSTEM_PROMPT}
    assert request["response_format"]["type"] == "json_schema"
    static, conversation = _user_parts(fake)
    assert static.startswith("## Workflows built")
    assert "Daily Slack digest" in static
    assert '"channel": "#alerts"' in static
    assert "(no agent produced)" in static
    order = [
        "## Conversation transcript\n### Turn 1 (2 steps",
        "## Conversation metrics (ground truth — do not recount)",
        "## Tool calls per turn (ground truth — do not recount)\nTurn 1: build-workflow×1",
        "## Token usage totals (ground truth — do not recount)\nTotal: 13700 tokens in",
        "## Observational memory after compaction (ground truth — do not recount)\n- [CRITICAL]",
        "## Expectations\n0. [process] asks which channel before building\n1. [outcome] the workflow posts to Slack\n"
        "2. [outcome] the workflow runs every morning",
        "Return a verdict for every numbered expectation, using its 0-based index.",
    ]
    positions = [conversation.index(section) for section in order]
    assert positions == sorted(positions)


@pytest.mark.anyio
async def test_memory_block_only_when_compacted_and_no_workflow_says_so(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"results": []})
    record = clean_record()
    record.artifacts.workflows.clear()
    await judge_expectations(TWO, record, models=_models(url))
    static, conversation = _user_parts(fake)
    assert "(no workflow built)" in static
    assert "Observational memory" not in conversation


@pytest.mark.anyio
async def test_index_mapping_and_missing_verdicts(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        {
            "results": [
                {"index": 2, "reason": "the Schedule trigger fires at 9.", "pass": True},
                {"index": 0, "reason": "turn 1 asks 'Which Slack channel should I post to?'.", "pass": False},
                {"index": 7, "reason": "out of range, ignored", "pass": True},
            ]
        }
    )
    outcome = await judge_expectations(TWO, clean_record(), models=_models(url))
    got = _by_unit(outcome.verdicts)
    assert got["process#0"].status == "fail"
    assert got["process#0"].attribution == "builder_issue"
    assert got["process#0"].label == "asks which channel before building"
    assert got["outcome#1"].status == "pass"
    assert got["outcome#1"].attribution is None
    assert got["outcome#0"].status == "not_judged"
    assert got["outcome#0"].reason == "no verdict returned"
    assert outcome.info["attempts"] == 1


@pytest.mark.anyio
async def test_retries_after_a_500(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(500, {"results": [{"index": i, "reason": "ok", "pass": True} for i in range(3)]})
    outcome = await judge_expectations(TWO, clean_record(), models=_models(url))
    assert [v.status for v in outcome.verdicts] == ["pass", "pass", "pass"]
    assert len(fake.requests) == 2
    assert outcome.info["attempts"] == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answers",
    [
        ("this is not json", "still not json"),
        ({"results": "nope"}, {"verdicts": []}),
        ({"results": [{"index": 0, "pass": True}]}, {"results": [{"index": "zero", "reason": "r", "pass": "yes!"}]}),
        (500, 503),
    ],
)
async def test_malformed_or_failed_answers_are_not_judged_never_pass(
    fake_openai: tuple[FakeOpenAI, str], answers: tuple[object, object]
) -> None:
    fake, url = fake_openai
    fake.queue(*answers)
    outcome = await judge_expectations(TWO, clean_record(), models=_models(url))
    assert {v.status for v in outcome.verdicts} == {"not_judged"}
    assert all(v.reason.startswith("judge produced no result") for v in outcome.verdicts)
    assert len(fake.requests) == 2
    assert fake.pending == 0


@pytest.mark.anyio
async def test_a_bad_request_is_not_retried(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(400, {"results": []})
    outcome = await judge_expectations(TWO, clean_record(), models=_models(url))
    assert len(fake.requests) == 1
    assert "HTTP 400" in outcome.verdicts[0].reason


@pytest.mark.anyio
async def test_a_slow_judge_times_out_per_attempt(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.delay_seconds = 1.0
    fake.queue({"results": []}, {"results": []})
    outcome = await judge_expectations(TWO, clean_record(), models=_models(url, timeout_seconds=0.2))
    assert {v.status for v in outcome.verdicts} == {"not_judged"}
    assert "no answer" in outcome.verdicts[0].reason


@pytest.mark.anyio
async def test_no_judge_model_leaves_checks_graded() -> None:
    graded = await grade_case(
        case(checks={"mustContain": ["#alerts"]}), clean_record(), client=None, models=ModelSettings()
    )
    got = _by_unit(graded.verdicts)
    assert got["check:mustContain#0"].status == "pass"
    assert got["process#0"].status == "not_judged"
    assert got["process#0"].reason == "no judge model configured"


@pytest.mark.anyio
async def test_uncalibrated_judge_verdicts_are_not_judged(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    calibration = CalibrationResult(agreement=0.82, kappa=0.6, n=11, threshold=0.9, passed=False)
    graded = await grade_case(TWO, clean_record(), client=None, models=_models(url), calibration=calibration)
    assert {v.reason for v in graded.verdicts} == {"judge uncalibrated: agreement 0.82 < 0.90"}
    assert fake.requests == []
    assert graded.judge["calibrated"] is False


@pytest.mark.anyio
async def test_failed_premise_spends_no_model_call_and_fails_nothing(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    compaction = case(requiresMemoryCompaction=True, checks={"mustContain": ["#alerts"]})
    graded = await grade_case(compaction, clean_record(), client=None, models=_models(url))
    assert fake.requests == []
    assert {v.status for v in graded.verdicts} == {"not_judged"}
    assert {v.attribution for v in graded.verdicts} == {"framework_issue"}
    assert [p.name for p in graded.premises if not p.held] == ["memory-compaction"]


@pytest.mark.anyio
async def test_timeout_ending_blames_the_clock_for_model_graded_failures(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue({"results": [{"index": i, "reason": "not built in time", "pass": i == 0} for i in range(3)]})
    graded = await grade_case(TWO, clean_record(ended_by="turn-timeout"), client=None, models=_models(url))
    got = _by_unit(graded.verdicts)
    assert got["process#0"].status == "pass"
    assert got["outcome#0"].status == "fail"
    assert got["outcome#0"].attribution == "timeout"
    assert not got["outcome#0"].counts_against_builder
