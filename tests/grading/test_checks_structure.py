"""The structural checks of issue 19: identity in place, parameter matchers, credentials, tool arguments,
question bounds, the bypass count and turn-scoped text — each passing, failing and not judged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.grading.records import SLACK_WORKFLOW, case, clean_record, with_turns
from threadcase.grading.checks import run_checks
from threadcase.records import RunRecord, SeededWorkflow, SeedOutcome, ToolCallRecord, Turn, WidgetRecord
from threadcase.verdicts import UnitVerdict
from threadcase.wire import Workflow, WorkflowNode

SEED_ID = "wf-seed-digest-01"


SEED = {
    "mode": "inline",
    "workflows": [
        {
            "id": SEED_ID,
            "name": "Digest",
            "nodes": [{"name": "Slack", "type": "n8n-nodes-base.slack", "parameters": {"channel": "#sales"}}],
            "connections": {},
        }
    ],
}


def _grade(checks: dict[str, Any], record: RunRecord, **fields: Any) -> list[UnitVerdict]:
    if record.seed.workflows:
        fields.setdefault("seed", SEED)
    return run_checks(case(checks=checks, **fields), record)


def _one(checks: dict[str, Any], record: RunRecord, **fields: Any) -> UnitVerdict:
    verdicts = _grade(checks, record, **fields)
    assert len(verdicts) == 1, verdicts
    return verdicts[0]


def _digest(workflow_id: str, channel: str, name: str = "Digest [seed 1a2b3c4d]") -> Workflow:
    return Workflow(
        id=workflow_id,
        name=name,
        nodes=[
            WorkflowNode(name="Schedule Trigger", type="n8n-nodes-base.scheduleTrigger", parameters={"rule": {}}),
            WorkflowNode(name="Slack", type="n8n-nodes-base.slack", parameters={"channel": channel}, position=[9, 9]),
        ],
        connections={"Schedule Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
    )


def _call(tool: str, args: dict[str, Any], result: Any = None, call_id: str = "c") -> ToolCallRecord:
    return ToolCallRecord(tool_call_id=call_id, tool_name=tool, args=args, result=result)


def _seeded_run(*, final: Workflow | None, calls: list[ToolCallRecord], saved: list[Workflow]) -> RunRecord:
    """A seeded edit: the seed's workflow as restored (#sales), its end state, and what the agent saved."""
    seeded = SeededWorkflow(
        seed_id=SEED_ID, seed_name="Digest", id="run-1", restored=_digest("run-1", "#sales"), final=final
    )
    turns = [
        Turn(index=0, role="user", text="Post it to #marketing instead", sent_by="opener"),
        Turn(index=1, role="assistant", text="Done.", tool_calls=calls, finish_status="completed"),
    ]
    outcome = SeedOutcome(mode="inline", id_map={SEED_ID: "run-1"}, workflows=[seeded])
    record = with_turns(clean_record(seed=outcome), turns)
    record.artifacts.workflows = saved
    return record


def _in_place() -> RunRecord:
    edited = _digest("run-1", "#marketing")
    call = _call("build-workflow", {"workflowId": "run-1", "workflow": {"name": edited.name}}, {"workflowId": "run-1"})
    return _seeded_run(final=edited, calls=[call], saved=[edited])


def _rebuilt() -> RunRecord:
    copy = _digest("new-9", "#marketing")
    call = _call("build-workflow", {"workflow": {"name": copy.name}}, {"workflowId": "new-9"})
    return _seeded_run(final=_digest("run-1", "#sales"), calls=[call], saved=[copy])


IDENTITY = {"workflowsEditedInPlace": ["Digest"], "maxNewWorkflows": 0}


# --- identity ---------------------------------------------------------------------------------


def test_an_edit_in_place_passes_and_quotes_what_changed() -> None:
    edited, new = _grade(IDENTITY, _in_place())
    assert (edited.status, new.status) == ("pass", "pass")
    assert 'changed in place: node \'Slack\': parameters.channel was "#sales", now "#marketing"' in edited.reason


def test_a_rebuild_as_a_copy_fails_both_and_names_the_copy() -> None:
    edited, new = _grade(IDENTITY, _rebuilt())
    assert (edited.status, new.status) == ("fail", "fail")
    assert "is exactly as restored" in edited.reason
    assert "new-9" in edited.reason
    assert new.reason.startswith("the conversation created 1 workflows")


def test_the_seed_id_names_the_workflow_too_and_unchanged_is_the_opposite() -> None:
    assert _one({"workflowsEditedInPlace": [SEED_ID]}, _in_place()).status == "pass"
    assert _one({"workflowsUnchanged": [SEED_ID]}, _in_place()).status == "fail"
    assert _one({"workflowsUnchanged": ["Digest"]}, _rebuilt()).status == "pass"


def test_positions_and_node_ids_are_not_an_edit() -> None:
    moved = _digest("run-1", "#sales")
    moved.nodes[1].position = [500, 500]
    moved.nodes[1].id = "regenerated"
    call = _call("build-workflow", {"workflowId": "run-1", "workflow": {}}, {"workflowId": "run-1"})
    verdict = _one({"workflowsEditedInPlace": ["Digest"]}, _seeded_run(final=moved, calls=[call], saved=[moved]))
    assert verdict.status == "fail"
    assert "exactly as restored" in verdict.reason


def test_a_deleted_seeded_workflow_fails_an_edit_and_an_unreadable_one_is_not_judged() -> None:
    record = _in_place()
    record.seed.workflows[0].final, record.seed.workflows[0].deleted = None, True
    assert _one({"workflowsEditedInPlace": ["Digest"]}, record).status == "fail"
    record.seed.workflows[0].deleted, record.seed.workflows[0].final_error = False, "could not be read: 500"
    verdict = _one({"workflowsEditedInPlace": ["Digest"]}, record)
    assert (verdict.status, verdict.attribution) == ("not_judged", "framework_issue")
    record.seed.workflows[0].restored = None
    assert _one({"workflowsEditedInPlace": ["Digest"]}, record).status == "not_judged"


def test_identity_checks_that_could_not_have_failed_are_not_judged() -> None:
    quiet = _seeded_run(final=_digest("run-1", "#sales"), calls=[], saved=[])
    unchanged, new = _grade({"workflowsUnchanged": ["Digest"], "maxNewWorkflows": 0}, quiet)
    assert (unchanged.status, new.status) == ("not_judged", "not_judged")
    # Doing nothing is no edit: that one can fail, and does.
    assert _one({"workflowsEditedInPlace": ["Digest"]}, quiet).status == "fail"


def test_max_new_workflows_counts_created_and_deleted_ones_but_never_edits() -> None:
    first = _call("build-workflow", {"workflow": {"name": "A"}}, {"workflowId": "a1"}, "1")
    edit = _call("build-workflow", {"workflowId": "a1", "workflow": {"name": "A"}}, {"workflowId": "a1"}, "2")
    second = _call("build-workflow", {"workflow": {"name": "B"}}, {"workflowId": "b2"}, "3")
    gone = _call("delete-workflow", {"workflowId": "b2"}, {"deleted": True}, "4")
    turns = [Turn(index=0, role="user", text="x"), Turn(index=1, role="assistant", tool_calls=[first, edit])]
    assert _one({"maxNewWorkflows": 1}, with_turns(clean_record(), turns)).status == "pass"
    turns[1].tool_calls += [second, gone]
    verdict = _one({"maxNewWorkflows": 1}, with_turns(clean_record(), turns))
    assert verdict.status == "fail"
    assert "'A' (id a1), 'B' (id b2)" in verdict.reason


# --- node parameters --------------------------------------------------------------------------


def test_contains_matches_and_equals_read_the_value() -> None:
    record = clean_record()
    checks = {
        "nodeParameters": [
            {"node": "Post to Slack", "path": "channel", "contains": "#ale"},
            {"node": "slack", "path": "channel", "matches": "^#al.rts$"},
            {"node": "slack", "path": "options.retry", "contains": '"count": 3'},
            {"node": "slack", "path": "channel", "matches": "^alerts$"},
        ]
    }
    assert [v.status for v in _grade(checks, record)] == ["pass", "pass", "pass", "fail"]


def test_absent_without_a_node_searches_every_parameter_of_every_workflow() -> None:
    checks = {"nodeParameters": [{"contains": "sk-live-", "absent": True}]}
    assert _one(checks, clean_record()).status == "pass"
    leaky = clean_record()
    leaky.artifacts.workflows[0].nodes[1].parameters["headers"] = {"values": [{"value": "Bearer sk-live-42"}]}
    verdict = _one(checks, leaky)
    assert verdict.status == "fail"
    assert "headers.values.0.value = 'Bearer sk-live-42'" in verdict.reason


def test_absent_with_a_path_means_the_parameter_does_not_exist() -> None:
    assert _one({"nodeParameters": [{"node": "slack", "path": "apiKey", "absent": True}]}, clean_record()).status == (
        "pass"
    )
    assert _one({"nodeParameters": [{"node": "slack", "path": "channel", "absent": True}]}, clean_record()).status == (
        "fail"
    )


def test_absent_with_nothing_to_inspect_is_not_judged() -> None:
    empty = clean_record()
    empty.artifacts.workflows = []
    assert _one({"nodeParameters": [{"contains": "x", "absent": True}]}, empty).status == "not_judged"
    verdict = _one({"nodeParameters": [{"node": "gmail", "path": "sendTo", "absent": True}]}, clean_record())
    assert verdict.status == "not_judged"


def _two_workflows() -> RunRecord:
    record = clean_record()
    other = SLACK_WORKFLOW.model_copy(deep=True)
    other.id, other.name = "wf-2", "Copy of digest"
    other.nodes[1].parameters["channel"] = "#general"
    record.artifacts.workflows.append(other)
    return record


def test_first_any_and_all_over_every_workflow() -> None:
    record = _two_workflows()
    entry = {"node": "slack", "path": "channel", "equals": "#general"}
    first, anyone, everyone = _grade(
        {"nodeParameters": [entry, {**entry, "match": "any"}, {**entry, "match": "all"}]}, record
    )
    assert (first.status, anyone.status, everyone.status) == ("fail", "pass", "fail")
    assert "1 of the 2 selected nodes miss it" in everyone.reason


def test_workflow_scope_names_a_built_one_by_name_or_a_seeded_one_by_seed_name() -> None:
    record = _two_workflows()
    scoped = {"workflow": "copy of digest", "node": "slack", "path": "channel", "equals": "#general"}
    assert _one({"nodeParameters": [scoped]}, record).status == "pass"
    missing = _one({"nodeParameters": [{**scoped, "workflow": "Nope"}]}, record)
    assert missing.status == "fail"
    assert "no workflow named 'Nope'" in missing.reason
    rebuilt = {"workflow": "Digest", "node": "Slack", "path": "channel", "equals": "#marketing"}
    # The seeded workflow, never the copy the agent built under the same name.
    assert _one({"nodeParameters": [rebuilt]}, _rebuilt()).status == "fail"
    assert _one({"nodeParameters": [rebuilt]}, _in_place()).status == "pass"


# --- credentials, tool arguments, questions, bypass count ----------------------------------------


def test_node_credentials_by_declared_name() -> None:
    record = clean_record()
    record.artifacts.workflows[0].nodes[1].credentials = {"slackApi": {"id": "c9", "name": "Marketing Slack"}}
    ok, wrong = _grade(
        {
            "nodeCredentials": [
                {"node": "slack", "credential": "Marketing Slack"},
                {"node": "slack", "credential": "Team Slack"},
            ]
        },
        record,
    )
    assert (ok.status, wrong.status) == ("pass", "fail")
    assert "'Marketing Slack' (slackApi)" in wrong.reason
    bare = _one({"nodeCredentials": [{"node": "slack", "credential": "Team Slack"}]}, clean_record())
    assert bare.status == "fail"
    assert "has no credential" in bare.reason


def test_tool_arguments_present_absent_and_never_called() -> None:
    record = clean_record()
    present = {"tool": "build-workflow", "path": "workflow.name", "matches": "digest$"}
    absent = {"tool": "build-workflow", "matches": "sk-live-", "absent": True}
    never = {"tool": "rename-workflow", "matches": ".", "absent": True}
    verdicts = _grade({"toolArguments": [present, absent, never, {**present, "tool": "rename-workflow"}]}, record)
    assert [v.status for v in verdicts] == ["pass", "pass", "not_judged", "fail"]
    record.turns[1].tool_calls[0].args["workflow"]["apiKey"] = "sk-live-1"
    leaked = _one({"toolArguments": [absent]}, record)
    assert (leaked.status, leaked.turn_index) == ("fail", 1)
    assert "sk-live-1" in leaked.reason


def test_min_clarifying_questions_fails_an_agent_that_never_asks() -> None:
    assert _one({"minClarifyingQuestions": 1}, clean_record()).status == "pass"
    silent = clean_record()
    silent.turns[1].widgets = []
    verdict = _one({"minClarifyingQuestions": 1}, silent)
    assert verdict.status == "fail"
    assert verdict.reason.startswith("0 question(s) asked")


def _credential_card() -> WidgetRecord:
    return WidgetRecord(request_id="r9", input_type="setup", request={"requestId": "r9"}, outcome="filled")


def test_bypass_count_passes_fails_and_says_whose_fault() -> None:
    declared = [{"type": "slackApi", "name": "Team Slack"}, {"type": "slackApi", "name": "Ops Slack", "valid": False}]
    record = clean_record(proxy_stats={"credential-test-bypassed": 1})
    assert _one({"credentialTestsBypassed": 1}, record, credentials=declared).status == "pass"
    short = _one({"credentialTestsBypassed": 2}, record, credentials=declared)
    assert (short.status, short.attribution) == ("fail", "builder_issue")
    assert "never showed a credential card" in short.reason
    record.turns[1].widgets.append(_credential_card())
    proxy = _one({"credentialTestsBypassed": 2}, record, credentials=declared)
    assert (proxy.status, proxy.attribution) == ("fail", "proxy_issue")


def test_bypass_count_with_no_credential_anywhere_is_not_judged() -> None:
    assert _one({"credentialTestsBypassed": 0}, clean_record()).status == "not_judged"


# --- turn-scoped text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "status"),
    [
        ({"text": "Which Slack channel", "turn": 1}, "pass"),
        ({"text": "Which Slack channel", "turn": 2}, "fail"),
        ({"text": "#alerts", "turn": "last"}, "pass"),
        ({"text": "#alerts", "turn": 3}, "not_judged"),
    ],
)
def test_must_contain_scoped_to_one_live_turn(entry: dict[str, Any], status: str) -> None:
    assert _one({"mustContain": [entry]}, clean_record()).status == status


def test_must_not_contain_scoped_to_one_live_turn() -> None:
    scoped = _grade(
        {"mustNotContain": [{"text": "#alerts", "turn": 1}, {"text": "#alerts", "turn": 2}, "#alerts"]},
        clean_record(),
    )
    assert [v.status for v in scoped] == ["pass", "fail", "fail"]


def test_review_may_be_one_string() -> None:
    verdict = _one({"review": "The reply reads naturally"}, clean_record())
    assert (verdict.unit, verdict.status, verdict.label) == ("review#0", "reviewed", "The reply reads naturally")
