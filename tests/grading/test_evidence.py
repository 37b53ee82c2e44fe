"""Evidence that matches the question: a token claim with no run debug is never sent to the judge, and
the judge sees every seeded workflow and agent as the conversation left it, saved or not."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import case, clean_record
from threadcase.grading import grade_case
from threadcase.grading.judge import render_artifacts_block
from threadcase.grading.premises import TOKEN_GROUND_TRUTH, check_premises, is_token_expectation
from threadcase.models import ModelSettings
from threadcase.records import AgentArtifact, SeededAgent, SeededWorkflow, SeedOutcome
from threadcase.wire import Workflow, WorkflowNode

COST = case(
    processExpectations=["asks which channel before building", "Later turns read most of their input from cache"],
    outcomeExpectations=["No edit turn produces more output tokens than the build"],
)


def _models(base_url: str) -> ModelSettings:
    return ModelSettings(api_key=SecretStr("test-key"), base_url=base_url, judge_model="fake-judge")


@pytest.mark.parametrize(
    ("text", "about_tokens"),
    [
        ("Later turns read most of their input from cache", True),
        ("The second turn costs fewer tokens than the first", True),
        ("Context consumption stays flat after the build", True),
        ("The agent asks which channel before building", False),
        ("The workflow posts the cost report to #finance", True),  # cautious: only costs a judge call
    ],
)
def test_token_expectations_are_recognised(text: str, about_tokens: bool) -> None:
    assert is_token_expectation(text) is about_tokens


def test_the_token_premise_covers_only_token_expectations_and_needs_every_live_run() -> None:
    premise = check_premises(COST, clean_record())[-1]
    assert (premise.name, premise.held, premise.units) == (TOKEN_GROUND_TRUTH, True, ["process#1", "outcome#0"])
    partial = clean_record()
    del partial.usage["run-2"]
    premise = check_premises(COST, partial)[-1]
    assert not premise.held
    assert "only 1 of the 2 live runs" in premise.reason
    assert TOKEN_GROUND_TRUTH not in [p.name for p in check_premises(case(), clean_record())]


@pytest.mark.anyio
async def test_without_run_debug_a_token_claim_is_not_judged_and_never_sent(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    fake, url = fake_openai
    fake.queue({"results": [{"index": 0, "reason": "turn 1 asks for the channel first", "pass": True}]})
    grading = await grade_case(COST, clean_record(usage={}), client=None, models=_models(url))
    by_unit = {v.unit: v for v in grading.verdicts}
    for unit in ("process#1", "outcome#0"):
        assert by_unit[unit].status == "not_judged"
        assert by_unit[unit].attribution == "verification_gap"
        assert by_unit[unit].reason.startswith("not judged: no token ground truth: no run debug captured")
    assert by_unit["process#0"].status == "pass"
    sent = fake.requests[0]["messages"][1]["content"][1]["text"]
    assert "0. [process] asks which channel before building" in sent
    assert "cache" not in sent.split("## Expectations")[1]
    # The other units still graded: the failed premise is the token claims' alone.
    assert [v.unit for v in grading.verdicts[:3]] == ["process#0", "process#1", "outcome#0"]


def _workflow(workflow_id: str, channel: str) -> Workflow:
    return Workflow(
        id=workflow_id,
        name="Digest [seed 1a2b3c4d]",
        nodes=[WorkflowNode(name="Slack", type="n8n-nodes-base.slack", parameters={"channel": channel})],
    )


def test_the_judge_sees_seeded_workflows_and_agents_saved_or_not() -> None:
    record = clean_record()
    record.seed = SeedOutcome(
        mode="inline",
        workflows=[
            SeededWorkflow(
                seed_id="wf-a",
                seed_name="Digest",
                id="a",
                restored=_workflow("a", "#sales"),
                final=_workflow("a", "#sales"),
            ),
            SeededWorkflow(
                seed_id="wf-b", seed_name="Recap", id="b", restored=_workflow("b", "#x"), final=_workflow("b", "#y")
            ),
            SeededWorkflow(seed_id="wf-c", seed_name="Archive", id="c", restored=_workflow("c", "#z"), deleted=True),
        ],
        agents=[SeededAgent(seed_id="agent-ops", id="ag-1", final=AgentArtifact(id="ag-1", config={"name": "Ops"}))],
    )
    record.artifacts.workflows.append(_workflow("b", "#y"))
    static = render_artifacts_block(record)
    seeded = static.split("## Seeded workflows (restored before the conversation), at the end of it")[1]
    assert (
        "### Seeded workflow 'Digest' (per-run id a): unchanged since the restore; the agent never saved it" in seeded
    )
    assert '"channel": "#sales"' in seeded
    assert "'Recap' (per-run id b): changed in place: node 'Slack': parameters.channel was \"#x\", now \"#y\"" in seeded
    assert "its end state is under Workflows built" in seeded
    assert "### Seeded workflow 'Archive' (per-run id c): deleted during the conversation" in seeded
    assert "### Seeded agent 'agent-ops' (per-run id ag-1): the conversation never read or saved it" in static
