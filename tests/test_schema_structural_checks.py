"""Load-time rules of the structural checks: every entry says one clear thing, identity checks name seed
workflows, bounds agree, text entries may be scoped to a turn, and ``review`` may be one string."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_schema import assert_problem, base, ok, problems
from threadcase.case.schema import Case

SEED = {
    "mode": "inline",
    "workflows": [
        {"id": "wf-orders-digest-01", "name": "Orders digest", "nodes": [], "connections": {}},
        {"id": "wf-weekly-recap-01", "name": "Weekly recap", "nodes": [], "connections": {}},
    ],
}


def test_every_new_check_is_one_unit_with_the_graders_id() -> None:
    case = ok(
        base(
            seed=SEED,
            checks={
                "nodeCredentials": [{"node": "slack", "credential": "Team Slack"}],
                "workflowsEditedInPlace": ["Orders digest"],
                "workflowsUnchanged": ["wf-weekly-recap-01"],
                "maxNewWorkflows": 0,
                "toolArguments": [{"tool": "build-workflow", "matches": "sk-", "absent": True}],
                "minClarifyingQuestions": 1,
                "credentialTestsBypassed": 2,
            },
        )
    )
    assert case.checks is not None
    assert case.checks.unit_keys() == [
        "check:nodeCredentials#0",
        "check:workflowsEditedInPlace#0",
        "check:workflowsUnchanged#0",
        "check:maxNewWorkflows",
        "check:toolArguments#0",
        "check:minClarifyingQuestions",
        "check:credentialTestsBypassed",
    ]


def test_identity_checks_name_a_seed_workflow_by_id_or_name() -> None:
    ok(base(seed=SEED, checks={"workflowsEditedInPlace": ["orders DIGEST", "wf-weekly-recap-01"]}))
    assert_problem(
        base(seed=SEED, checks={"workflowsEditedInPlace": ["Order digest"]}),
        "checks.workflowsEditedInPlace[0]",
        "'Order digest' is neither the id nor the name of a seed workflow (declared: 'wf-orders-digest-01 (Orders",
    )
    assert_problem(
        base(checks={"workflowsUnchanged": ["Orders digest"]}),
        "checks.workflowsUnchanged[0]",
        "this check needs an inline seed that declares workflows",
    )


def test_one_workflow_cannot_be_both_edited_and_unchanged() -> None:
    assert_problem(
        base(
            seed=SEED,
            checks={"workflowsEditedInPlace": ["Orders digest"], "workflowsUnchanged": ["wf-orders-digest-01"]},
        ),
        "checks.workflowsUnchanged[0]",
        "also in checks.workflowsEditedInPlace",
    )


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"node": "slack"}, "say what to check"),
        ({"node": "slack", "path": "channel"}, "say what to check"),
        ({"node": "slack", "equals": "#a"}, "equals needs a path"),
        ({"node": "slack", "path": "channel", "equals": "#a", "contains": "#"}, "cannot be combined"),
        ({"path": "channel", "equals": "#a", "match": "first"}, "match 'first' needs a node"),
        ({"contains": "sk-", "absent": True, "match": "all"}, "drop match"),
        ({"node": "slack", "path": "channel", "matches": "(["}, "not a valid regular expression"),
        ({"node": "slack", "path": "channel", "equals": "#a", "match": "some"}, "'first', 'any' or 'all'"),
    ],
)
def test_a_node_parameter_entry_says_one_clear_thing(entry: dict[str, Any], fragment: str) -> None:
    found = problems(base(checks={"nodeParameters": [entry]}))
    assert any(path.startswith("checks.nodeParameters[0]") and fragment in message for path, message in found), found


def test_node_parameter_entries_that_load() -> None:
    case = ok(
        base(
            checks={
                "nodeParameters": [
                    {"node": "slack", "path": "channel", "equals": None},
                    {"contains": "sk-live-", "absent": True},
                    {"workflow": "Orders digest", "path": "channel", "matches": "^#", "match": "all"},
                    {"node": "slack", "path": "apiKey", "absent": True},
                ]
            }
        )
    )
    assert case.checks is not None
    first, anywhere, scoped, missing = case.checks.node_parameters
    assert (first.has_equals, first.quantifier) == (True, "first")
    assert (anywhere.has_equals, anywhere.quantifier) == (False, "any")
    assert scoped.quantifier == "all"
    assert missing.absent
    assert missing.path == "apiKey"


def test_a_tool_argument_entry_needs_a_path_or_a_pattern() -> None:
    assert_problem(base(checks={"toolArguments": [{"tool": "build-workflow"}]}), "checks.toolArguments[0]", "say what")


def test_question_bounds_must_agree() -> None:
    assert_problem(
        base(checks={"minClarifyingQuestions": 3, "maxClarifyingQuestions": 1}), "checks", "no run could pass"
    )
    assert_problem(base(checks={"minClarifyingQuestions": 0}), "checks.minClarifyingQuestions", "")


def test_text_entries_may_be_scoped_to_a_live_turn() -> None:
    case = ok(
        base(
            checks={
                "mustContain": ["#ops", {"text": "#ops", "turn": 2}],
                "mustNotContain": [{"text": "x", "turn": "last"}],
            }
        )
    )
    assert case.checks is not None
    assert [(e.text, e.turn) for e in case.checks.must_contain] == [("#ops", None), ("#ops", 2)]
    assert_problem(base(checks={"mustContain": [{"text": "#ops", "turn": 0}]}), "checks.mustContain[0].turn", "from 1")
    assert_problem(
        base(checks={"mustContain": [{"text": "#ops", "turn": "first"}]}), "checks.mustContain[0].turn", "'last'"
    )
    assert_problem(base(checks={"mustContain": [{"text": "#ops", "when": 2}]}), "checks.mustContain[0].when", "")


def test_review_is_a_string_or_a_list() -> None:
    one = ok(base(checks={"review": "Reads naturally"}))
    assert one.checks is not None
    assert one.checks.review == ["Reads naturally"]
    assert_problem(base(checks={"review": ""}), "checks.review", "blank")


def test_the_json_schema_describes_the_new_keys() -> None:
    checks = Case.model_json_schema(by_alias=True)["$defs"]["Checks"]["properties"]
    for key in (
        "nodeCredentials",
        "workflowsEditedInPlace",
        "workflowsUnchanged",
        "maxNewWorkflows",
        "toolArguments",
        "minClarifyingQuestions",
        "credentialTestsBypassed",
    ):
        assert checks[key]["description"], key
    assert checks["review"]["anyOf"][0] == {"type": "string"}
    scoped = checks["mustContain"]["items"]["anyOf"]
    assert scoped[0]["type"] == "string"
    assert scoped[1]["required"] == ["text"]
