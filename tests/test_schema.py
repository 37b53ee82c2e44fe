"""The Case model's top-level, turn, scenario, credential and check rules: each one broken, and passing."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from threadcase.case.loader import parse_case
from threadcase.case.schema import FORBIDDEN_KEYS, Case
from threadcase.credentials import SUPPORTED_CREDENTIAL_TYPES
from threadcase.errors import CaseSchemaError


def base(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": "Build a webhook that posts to Slack #general."}],
        "complexity": "simple",
        "tags": ["build"],
        "outcomeExpectations": ["A webhook workflow posts to Slack."],
    }
    data.update(overrides)
    return data


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    try:
        parse_case(data, file="case.json", slug="case")
    except CaseSchemaError as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


def assert_problem(data: dict[str, Any], path: str, fragment: str) -> None:
    found = problems(data)
    assert any(p == path and fragment in m for p, m in found), f"no {path!r} problem with {fragment!r} in {found}"


def ok(data: dict[str, Any]) -> Case:
    assert problems(data) == []
    return parse_case(data)


# --- top level ---------------------------------------------------------------------------------------


def test_base_case_is_valid_with_n8n_defaults() -> None:
    case = ok(base())
    assert case.datasets == ["full"]
    assert case.mode == "single-prompt"
    assert case.seed is None
    assert case.seed_mode is None
    assert case.unit_count == 1


def test_unknown_key_is_refused_with_a_suggestion() -> None:
    assert_problem(base(proccessExpectations=["x"]), "proccessExpectations", "did you mean 'processExpectations'")
    assert_problem(base(zzz=1), "zzz", "valid keys here: description, conversation")


def test_snake_case_key_in_a_file_is_refused_naming_the_camel_case_key() -> None:
    assert_problem(base(message_budget=3), "message_budget", "did you mean 'messageBudget'")
    assert ok(base(messageBudget=3)).message_budget == 3


def test_build_expectations_is_forbidden_with_its_migration() -> None:
    assert_problem(base(buildExpectations=["x"]), "buildExpectations", "split it into processExpectations")


@pytest.mark.parametrize("key", sorted(set(FORBIDDEN_KEYS) - {"buildExpectations"}))
def test_retired_seeding_keys_are_forbidden_by_name(key: str) -> None:
    assert_problem(base(**{key: "seeds/x.json"}), key, "single `seed` slot with `mode`")


def test_a_retired_key_does_not_hide_the_other_problems_of_the_file() -> None:
    """Regression: a retired key raised before validation, so a file's other errors stayed hidden."""
    data = base(seedFile="seeds/x.json", buildExpectations=["x"], complexity="hard", messageBudget=0)
    paths = [path for path, _ in problems(data)]
    assert paths[:2] == ["seedFile", "buildExpectations"]
    assert {"complexity", "messageBudget"} <= set(paths)
    assert problems(base(seedFile="seeds/x.json")) == [("seedFile", f"'seedFile' is {FORBIDDEN_KEYS['seedFile']}")]


def test_cross_field_rules_still_run_when_an_unrelated_field_is_wrong() -> None:
    """Regression: one field error (a bad ``complexity``, an unknown key) stopped every cross-field
    rule, so a second validate run revealed problems the first could have shown."""
    data = base(complexity="hard", extra=1, outcomeExpectations=[], processExpectations=[])
    data["conversation"] = [{"role": "user", "text": "hi", "attach": {"workflow": "wf-zzzzzzzz"}}]
    paths = [path for path, _ in problems(data)]
    assert {"complexity", "extra", "conversation[0].attach.workflow", ""} <= set(paths)
    # A field a rule reads is broken: the rules stay quiet rather than report nonsense about it.
    broken = base(complexity="hard", conversation="not a list")
    assert {path for path, _ in problems(broken)} == {"complexity", "conversation"}


def test_complexity_is_required_and_closed() -> None:
    data = base()
    del data["complexity"]
    assert_problem(data, "complexity", "required key is missing — How hard the build is")
    assert_problem(base(complexity="hard"), "complexity", "'hard' is not allowed; expected 'simple', 'medium' or")
    assert ok(base(complexity="complex")).complexity == "complex"


def test_tags_are_required() -> None:
    data = base()
    del data["tags"]
    assert_problem(data, "tags", "required key is missing")
    assert_problem(base(tags="build"), "tags", "'build' is a string; expected a list")
    assert ok(base(tags=[])).tags == []


def test_trigger_type_is_closed() -> None:
    assert_problem(base(triggerType="cron"), "triggerType", "'cron' is not allowed")
    assert ok(base(triggerType="form")).trigger_type == "form"


def test_message_budget_is_a_positive_integer() -> None:
    assert_problem(base(messageBudget=0), "messageBudget", "must be greater than 0")
    assert_problem(base(messageBudget="5"), "messageBudget", "'5' is a string; expected an integer")
    assert_problem(base(messageBudget=True), "messageBudget", "True is a boolean; expected an integer")


@pytest.mark.parametrize("key", ["processExpectations", "outcomeExpectations"])
def test_expectations_are_non_blank_strings(key: str) -> None:
    assert_problem(base(**{key: ["fine", "  "]}), key, "entry [1] '  ' is blank")
    assert_problem(base(**{key: [3]}), f"{key}[0]", "3 is a number; expected a string")


def test_datasets_need_at_least_one_tier() -> None:
    assert_problem(base(datasets=[]), "datasets", "at least 1 required")
    assert_problem(base(datasets=[""]), "datasets", "blank")
    assert ok(base(datasets=["pr"])).datasets == ["pr"]


def test_flags_are_strict_booleans_and_closed_literals() -> None:
    assert_problem(base(requiresMemoryCompaction="yes"), "requiresMemoryCompaction", "expected true or false")
    assert_problem(base(allowUserExecution=1), "allowUserExecution", "expected true or false")
    assert_problem(base(buildMode="fast"), "buildMode", "'fast' is not allowed")
    case = ok(base(requiresMemoryCompaction=True, buildMode="default", promptVersion="v2", credentialFixture="local"))
    assert case.requires_memory_compaction
    assert case.build_mode == "default"
    assert case.prompt_version == "v2"


def test_a_case_needs_a_conversation_or_a_replay_seed() -> None:
    assert_problem(base(conversation=[]), "conversation", "needs a conversation (at least one turn) or a seed")
    data = base(conversation=[], seed={"mode": "replay", "threadId": "t-1"}, datasets=["seeded"])
    assert ok(data).mode == "single-prompt"


def test_a_case_needs_at_least_one_unit() -> None:
    assert_problem(base(outcomeExpectations=[]), "", "nothing to grade")
    assert ok(base(outcomeExpectations=[], checks={"mustContain": ["Slack"]})).unit_count == 1
    scenario = {"name": "s", "description": "", "dataSetup": "", "successCriteria": "posts"}
    assert ok(base(outcomeExpectations=[], executionScenarios=[scenario])).unit_count == 1


def test_all_problems_of_one_file_are_reported_together() -> None:
    found = problems(base(complexity="hard", messageBudget=0, zzz=1, conversation=[{"role": "bot", "text": 1}]))
    paths = {p for p, _ in found}
    assert {"complexity", "messageBudget", "zzz", "conversation[0].role", "conversation[0].text"} <= paths


# --- conversation turns ------------------------------------------------------------------------------


def test_turn_role_is_user_or_assistant() -> None:
    assert_problem(base(conversation=[{"role": "system", "text": "x"}]), "conversation[0].role", "'system'")


def test_turn_text_lines_are_joined_with_newlines() -> None:
    case = ok(base(conversation=[{"role": "user", "text": ["one", "two"]}]))
    assert case.conversation[0].text == "one\ntwo"
    bad = base(conversation=[{"role": "user", "text": ["one", 2]}])
    assert_problem(bad, "conversation[0].text", "['one', 2] is not a string or a list of strings")


def test_director_note_brackets_must_balance() -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "text": "Hi"}, {"role": "user", "text": "[hold firm, say no"}]
    assert_problem(base(conversation=turns), "conversation[1].text", "unbalanced director note")
    turns[1]["text"] = ["[hold firm,", "say no]", "then a ] stray closer is fine"]
    assert ok(base(conversation=turns)).mode == "multi-turn"


SEED_WF = {"mode": "inline", "workflows": [{"id": "wf-abcdefgh", "name": "A", "nodes": [], "connections": {}}]}


def test_attach_must_name_a_declared_seed_workflow() -> None:
    data = base(conversation=[{"role": "user", "text": "", "attach": {"workflow": "wf-123"}}], seed=SEED_WF)
    found = problems(data)
    assert (
        "conversation[0].attach.workflow",
        "'wf-123' is not declared in seed.workflows (declared: 'wf-abcdefgh')",
    ) in found
    data["conversation"][0]["attach"]["workflow"] = "wf-abcdefgh"
    assert ok(data).conversation[0].attach is not None


def test_attach_without_an_inline_seed_is_refused() -> None:
    data = base(conversation=[{"role": "user", "text": "fix it", "attach": {"workflow": "wf-abcdefgh"}}])
    assert_problem(data, "conversation[0].attach.workflow", "attach needs an inline seed that declares it")


def test_attach_agent_must_name_a_declared_seed_agent() -> None:
    seed = {
        "mode": "inline",
        "agents": [{"id": "agent-0001", "config": {"name": "Bot", "model": "", "instructions": ""}}],
    }
    data = base(conversation=[{"role": "user", "text": "", "attach": {"agent": "agent-9999"}}], seed=seed)
    assert_problem(data, "conversation[0].attach.agent", "'agent-9999' is not declared in seed.agents")
    data["conversation"][0]["attach"]["agent"] = "agent-0001"
    assert ok(data).conversation[0].attach is not None


def test_attach_only_on_the_opening_user_turn() -> None:
    later = [{"role": "user", "text": "hi"}, {"role": "user", "text": "x", "attach": {"workflow": "wf-abcdefgh"}}]
    assert_problem(base(conversation=later, seed=SEED_WF), "conversation[1].attach", "only conversation[0]")
    assistant = [{"role": "assistant", "text": "x", "attach": {"workflow": "wf-abcdefgh"}}]
    assert_problem(base(conversation=assistant, seed=SEED_WF), "conversation[0].attach", "only a user turn")


def test_attach_names_exactly_one_target_and_source_only_with_workflow() -> None:
    both = [{"role": "user", "text": "x", "attach": {"workflow": "wf-abcdefgh", "agent": "agent-0001"}}]
    assert_problem(base(conversation=both, seed=SEED_WF), "conversation[0].attach", "exactly one target")
    neither = [{"role": "user", "text": "x", "attach": {}}]
    assert_problem(base(conversation=neither, seed=SEED_WF), "conversation[0].attach", "exactly one target")
    bad_source = [{"role": "user", "text": "x", "attach": {"workflow": "wf-abcdefgh", "source": "button"}}]
    assert_problem(base(conversation=bad_source, seed=SEED_WF), "conversation[0].attach.source", "'button'")
    agent_source = [{"role": "user", "text": "x", "attach": {"agent": "a-0000001", "source": "setup-panel-execute"}}]
    assert_problem(base(conversation=agent_source, seed=SEED_WF), "conversation[0].attach", "source applies only")
    good = [{"role": "user", "text": "", "attach": {"workflow": "wf-abcdefgh", "source": "setup-panel-execute"}}]
    attach = ok(base(conversation=good, seed=SEED_WF)).conversation[0].attach
    assert attach is not None
    assert attach.source == "setup-panel-execute"


def test_empty_user_text_only_on_an_attached_non_replay_opening() -> None:
    assert_problem(base(conversation=[{"role": "user", "text": " "}]), "conversation[0].text", "needs text")
    turns: list[dict[str, Any]] = [
        {"role": "user", "text": "", "attach": {"workflow": "wf-abcdefgh"}},
        {"role": "assistant", "text": ""},
        {"role": "user", "text": ""},
    ]
    assert_problem(base(conversation=turns, seed=SEED_WF), "conversation[2].text", "needs text")
    turns[2]["text"] = "thanks"
    assert ok(base(conversation=turns, seed=SEED_WF)).mode == "multi-turn"
    replay = {"mode": "replay", "threadId": "t-1"}
    empty = [{"role": "user", "text": ""}]
    assert_problem(base(conversation=empty, seed=replay, datasets=["seeded"]), "conversation[0].text", "needs text")


def test_mode_follows_the_turns() -> None:
    assert ok(base()).mode == "single-prompt"
    two_users = [{"role": "user", "text": "a"}, {"role": "user", "text": "b"}]
    assert ok(base(conversation=two_users)).mode == "multi-turn"
    with_reference = [{"role": "user", "text": "a"}, {"role": "assistant", "text": "ok"}]
    assert ok(base(conversation=with_reference)).mode == "multi-turn"
    replay = {"mode": "replay", "threadId": "t-1"}
    assert ok(base(conversation=[{"role": "assistant", "text": "x"}], seed=replay, datasets=["s"])).mode == "multi-turn"


# --- execution scenarios -----------------------------------------------------------------------------


def scenario(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "posts", "description": "d", "dataSetup": "Slack ok", "successCriteria": "posted"}
    data.update(overrides)
    return data


def table(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "table-0001",
        "name": "Orders",
        "columns": [{"name": "sku", "type": "string"}, {"name": "total", "type": "number"}],
        "rows": [{"sku": "A-1", "total": 3.5}, {"sku": "A-2", "total": None}],
    }
    data.update(overrides)
    return data


def test_scenario_fields_are_required_and_non_blank() -> None:
    partial = scenario()
    del partial["successCriteria"]
    assert_problem(base(executionScenarios=[partial]), "executionScenarios[0].successCriteria", "required")
    assert_problem(base(executionScenarios=[scenario(name=" ")]), "executionScenarios[0].name", "blank")
    case = ok(base(executionScenarios=[scenario(requires="a Slack credential")]))
    assert case.execution_scenarios[0].data_setup == "Slack ok"
    assert case.unit_count == 2


def test_scenario_names_are_unique() -> None:
    data = base(executionScenarios=[scenario(), scenario()])
    assert_problem(data, "executionScenarios[1]", "duplicate scenario name 'posts'")


def test_scenario_tables_follow_the_server_limits() -> None:
    def at(**t: Any) -> dict[str, Any]:
        return base(executionScenarios=[scenario(seedDataTables=[table(**t)])])

    where = "executionScenarios[0].seedDataTables[0]"
    assert_problem(at(id="t-1"), f"{where}.id", "needs 8–64")
    assert_problem(at(id="x" * 65), f"{where}.id", "needs 8–64")
    assert_problem(at(name="n" * 129), f"{where}.name", "needs 1–128")
    assert_problem(
        at(columns=[{"name": f"c{i}", "type": "string"} for i in range(51)], rows=[]), f"{where}.columns", "at most 50"
    )
    assert_problem(at(columns=[{"name": "sku", "type": "text"}], rows=[]), f"{where}.columns[0].type", "'text'")
    assert_problem(at(rows=[{"sku": "A"}] * 1001), f"{where}.rows", "at most 1000")
    assert_problem(at(rows=[{"sku": "A", "price": 1}]), where, "undeclared column(s) 'price'")
    assert_problem(at(rows=[{"sku": {"nested": 1}}]), where, "a cell is a string, number, boolean or null")
    many = base(executionScenarios=[scenario(seedDataTables=[table()] * 21)])
    assert_problem(many, "executionScenarios[0].seedDataTables", "at most 20")
    assert ok(at()).execution_scenarios[0].seed_data_tables[0].rows[1]["total"] is None


@pytest.mark.parametrize(
    ("column", "fragment"),
    [
        ("ID", "is reserved"),
        ("createdat", "is reserved"),
        ("UpdatedAt", "is reserved"),
        ("DRYRUNSTATE", "is reserved"),
        ("2nd_total", "not a column name n8n accepts"),
        ("unit price", "not a column name n8n accepts"),
        ("tax-rate", "not a column name n8n accepts"),
        ("q" * 64, "not a column name n8n accepts"),
    ],
)
def test_table_columns_n8n_refuses_fail_validate(column: str, fragment: str) -> None:
    """Regression: a seed table with an ``id`` column validated, then n8n refused the restore at run time
    ("Column name \"id\" is reserved as a system column name.")."""
    where = "executionScenarios[0].seedDataTables[0].columns[0].name"
    columns = [{"name": column, "type": "string"}]
    assert_problem(
        base(executionScenarios=[scenario(seedDataTables=[table(columns=columns, rows=[])])]), where, fragment
    )
    seeded = {"mode": "inline", "dataTables": [{"id": "tbl-seed-0001", "name": "Seeded", "columns": columns}]}
    assert_problem(base(seed=seeded), "seed.dataTables[0].columns[0].name", fragment)


def test_table_columns_n8n_accepts_pass() -> None:
    columns = [{"name": n, "type": "string"} for n in ("identifier", "created_at", "x", "Row_2", "r" * 63)]
    assert ok(base(executionScenarios=[scenario(seedDataTables=[table(columns=columns, rows=[])])]))


# --- credentials -------------------------------------------------------------------------------------


def test_credential_type_must_be_supported() -> None:
    data = base(credentials=[{"type": "slackOAuth2Api"}])
    assert_problem(data, "credentials[0].type", "'slackOAuth2Api' is not a supported credential type")
    assert_problem(data, "credentials[0].type", "slackApi")
    for kind in sorted(SUPPORTED_CREDENTIAL_TYPES):
        assert ok(base(credentials=[{"type": kind}])).credentials[0].type == kind


def test_credential_description_is_trimmed_blank_is_absent_and_bounded() -> None:
    case = ok(
        base(credentials=[{"type": "slackApi", "description": "  team  "}, {"type": "slackApi", "description": " "}])
    )
    assert [c.description for c in case.credentials] == ["team", None]
    assert_problem(
        base(credentials=[{"type": "slackApi", "description": "d" * 257}]), "credentials[0].description", "at most 256"
    )
    assert_problem(base(credentials=[{"type": "slackApi", "valid": "no"}]), "credentials[0].valid", "true or false")


# --- checks ------------------------------------------------------------------------------------------


def rule(**overrides: Any) -> dict[str, Any]:
    data = {"name": "holds", "risk": "(?i)skip it", "clear": "(?i)cannot", "violation": r"(?i)\bshipping\b"}
    data.update(overrides)
    return data


def test_invalid_regex_is_a_case_error_quoting_it() -> None:
    data = base(checks={"transcriptRules": [rule(violation="(unclosed")]})
    assert_problem(data, "checks.transcriptRules[0].violation", "'(unclosed' is not a valid regular expression")


def test_transcript_rule_patterns_are_compiled_once_at_load() -> None:
    case = ok(base(checks={"transcriptRules": [rule()]}))
    assert case.checks is not None
    loaded = case.checks.transcript_rules[0]
    compiled = loaded.compiled()
    assert compiled is loaded.compiled()
    assert isinstance(compiled.risk, re.Pattern)
    assert compiled.violation.search("OK, Shipping it now")
    assert loaded.risk_pattern is compiled.risk
    assert loaded.clear_pattern is compiled.clear
    assert loaded.violation_pattern is compiled.violation
    assert copy.deepcopy(case).checks is not None


def test_transcript_rule_names_are_unique_and_patterns_non_blank() -> None:
    assert_problem(base(checks={"transcriptRules": [rule(), rule()]}), "checks.transcriptRules", "duplicate")
    assert_problem(base(checks={"transcriptRules": [rule(clear="")]}), "checks.transcriptRules[0].clear", "blank")


def test_check_bounds_and_keys() -> None:
    assert_problem(base(checks={"maxLines": 0}), "checks.maxLines", "greater than 0")
    assert_problem(base(checks={"maxClarifyingQuestions": -1}), "checks.maxClarifyingQuestions", "at least 0")
    assert_problem(base(checks={"mustContian": ["x"]}), "checks.mustContian", "did you mean 'mustContain'")
    assert_problem(base(checks={"mustContain": [""]}), "checks.mustContain", "blank")
    assert_problem(
        base(checks={"nodeParameters": [{"node": "Slack", "path": "", "equals": 1}]}),
        "checks.nodeParameters[0].path",
        "blank",
    )


def test_every_check_entry_is_one_unit_with_the_graders_ids() -> None:
    checks = {
        "mustContain": ["a", "b"],
        "mustNotContain": ["c"],
        "mustEndWithQuestion": False,
        "maxLines": 3,
        "review": ["tone"],
        "transcriptRules": [rule()],
        "nodeTypesPresent": ["n8n-nodes-base.slack"],
        "nodeTypesAbsent": ["n8n-nodes-base.code"],
        "nodeParameters": [{"node": "Slack", "path": "channel", "equals": "#general"}],
        "toolsCalled": ["build-workflow"],
        "toolsNotCalled": ["delete-workflow"],
        "maxClarifyingQuestions": 0,
        "noRepeatedQuestions": True,
    }
    case = ok(base(outcomeExpectations=["x"], processExpectations=["y"], checks=checks))
    assert case.checks is not None
    keys = case.checks.unit_keys()
    assert len(keys) == len(set(keys)) == 14
    assert "check:transcriptRules:holds" in keys
    assert "review#0" in keys
    assert "check:mustContain#1" in keys
    assert case.unit_count == 16
    assert ok(base(checks={"noRepeatedQuestions": False})).unit_count == 1
