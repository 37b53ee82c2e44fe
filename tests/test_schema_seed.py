"""The seed slot: inline (messages, workflows, tables, folders, agents, projects, prior runs) and replay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_schema import assert_problem, ok, problems
from threadcase.case.schema import Case, InlineSeed, ReplaySeed
from threadcase.case.seed import ENVELOPE_FORM, SHORTHAND_FORM


def case_with(seed: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": "Carry on."}],
        "complexity": "medium",
        "tags": ["seeded"],
        "processExpectations": ["Carries on."],
        "seed": seed,
    }
    data.update(overrides)
    return data


def inline(**fields: Any) -> dict[str, Any]:
    return {"mode": "inline", **fields}


def wf(wid: str = "wf-abcdefgh", name: str = "Leads", **extra: Any) -> dict[str, Any]:
    return {"id": wid, "name": name, "nodes": [], "connections": {}, **extra}


def agent(aid: str = "agent-0001", **config: Any) -> dict[str, Any]:
    base = {
        "name": f"Bot {aid}",
        "model": "anthropic/claude-sonnet-4-5",
        "instructions": "Help.",
        "skills": [],
        "tools": [],
    }
    return {"id": aid, "config": {**base, **config}, "skills": {}}


def seed_of(case: Case) -> InlineSeed:
    assert isinstance(case.seed, InlineSeed)
    return case.seed


# --- the slot ---------------------------------------------------------------------------------------


def test_seed_needs_a_known_mode() -> None:
    assert_problem(case_with({"threadId": "t"}), "seed", "needs a 'mode': 'inline' or 'replay'")
    assert_problem(case_with({"mode": "file"}), "seed", "mode 'file' is not valid")


def test_both_arms_are_strict() -> None:
    assert_problem(case_with(inline(messages=[], sessionBoundary=True)), "seed.sessionBoundary", "unknown key")
    replay = {"mode": "replay", "threadId": "t", "workflows": []}
    assert_problem(case_with(replay, datasets=["seeded"]), "seed.workflows", "unknown key")


def test_an_inline_seed_must_carry_something() -> None:
    assert_problem(case_with(inline()), "seed", "must carry something")
    assert_problem(case_with(inline(source={"from": "x"}, priorRuns=[])), "seed", "must carry something")
    assert ok(case_with(inline(projects=[{"name": "Ops"}]))).inline_seed is not None


# --- messages ----------------------------------------------------------------------------------------


def envelope(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "m-1",
        "role": "assistant",
        "type": "llm",
        "createdAt": "2026-01-05T10:00:00Z",
        "content": [{"type": "text", "text": "done"}],
    }
    data.update(overrides)
    return data


def test_shorthand_and_envelopes_mix_and_stay_as_authored() -> None:
    messages = [
        {"role": "user", "text": "hello"},
        {"role": "assistant", "text": ["two", "lines"]},
        envelope(extra={"kept": True}, createdAt=1767607200000),
        {"id": "m-2", "type": "custom", "data": {"anything": 1}},
    ]
    seed = seed_of(ok(case_with(inline(messages=messages))))
    assert seed.messages == messages  # expansion happens at run time (seeds.inline), not at load


def test_near_miss_shorthand_fails_showing_both_forms() -> None:
    data = case_with(inline(messages=[{"role": "user", "text": 123}]))
    assert_problem(data, "seed.messages[0]", "shorthand near miss: text 123 is not a string or a list of strings")
    assert_problem(data, "seed.messages[0]", SHORTHAND_FORM)
    assert_problem(data, "seed.messages[0]", ENVELOPE_FORM)
    assert_problem(case_with(inline(messages=[{"role": "bot", "text": "x"}])), "seed.messages[0]", "role 'bot'")


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ("hello", "'hello' is not a message object"),
        (
            {"role": "user", "text": "x", "createdAt": "2026-01-01"},
            "missing 'id' (looks like shorthand with extra keys)",
        ),
        (envelope(id=""), "id '' is not a non-empty string"),
        ({k: v for k, v in envelope().items() if k != "role"}, "missing 'role'"),
        (envelope(role="system"), "role 'system'"),
        (envelope(createdAt="yesterday"), "createdAt 'yesterday' is not a parseable timestamp"),
        (envelope(createdAt=True), "createdAt True is not a parseable timestamp"),
        (envelope(content=[]), "content [] is not a non-empty list of blocks"),
        (envelope(content="done"), "content 'done' is not a non-empty list"),
        (envelope(content=[{"text": "x"}]), "content[0] needs a non-empty 'type'"),
        (envelope(content=["x"]), "content[0] 'x' is not an object"),
        ({k: v for k, v in envelope().items() if k != "content"}, "missing 'content'"),
        (envelope(type=""), "type '' is not a non-empty string"),
    ],
)
def test_envelope_rules(message: Any, fragment: str) -> None:
    data = case_with(inline(messages=[{"role": "user", "text": "fine"}, message]))
    assert_problem(data, "seed.messages[1]", fragment)
    assert_problem(data, "seed.messages[1]", "a seed message is either the exact shorthand")


def test_too_many_messages() -> None:
    data = case_with(inline(messages=[{"role": "user", "text": "x"}] * 1001))
    assert_problem(data, "seed.messages", "has 1001 entries; at most 1000 allowed")


# --- workflows, tables, prior runs --------------------------------------------------------------------


def test_seed_ids_need_eight_characters() -> None:
    assert_problem(case_with(inline(workflows=[wf("wf-1")])), "seed.workflows[0].id", "too short to remap safely")
    tables = [{"id": "t-1", "name": "T", "columns": []}]
    assert_problem(case_with(inline(dataTables=tables)), "seed.dataTables[0].id", "needs 8–64")
    folders = [{"id": "f-1", "name": "F"}]
    assert_problem(case_with(inline(folders=folders)), "seed.folders[0].id", "needs 8–64")
    assert_problem(case_with(inline(agents=[agent("a-1")])), "seed.agents[0].id", "needs 8–64")


def test_workflow_ids_and_names_are_unique() -> None:
    data = case_with(inline(workflows=[wf(), wf()]))
    assert_problem(data, "seed.workflows[1]", "duplicate seed workflow id 'wf-abcdefgh' (also workflows[0])")
    assert_problem(data, "seed.workflows[1]", "duplicate seed workflow name 'Leads'")
    assert len(seed_of(ok(case_with(inline(workflows=[wf(), wf("wf-bcdefghi", "Other")])))).workflows) == 2


def test_workflow_limits() -> None:
    assert_problem(case_with(inline(workflows=[wf(nodes=[{}] * 501)])), "seed.workflows[0].nodes", "at most 500")
    assert_problem(case_with(inline(workflows=[wf(name="")])), "seed.workflows[0].name", "needs 1–255")
    assert_problem(case_with(inline(workflows=[wf(published="yes")])), "seed.workflows[0].published", "true or false")


def test_workflow_and_agent_ids_share_one_space() -> None:
    data = case_with(inline(workflows=[wf("shared-id-1")], agents=[agent("shared-id-1")]))
    assert_problem(data, "seed.agents[0].id", "is also a seed workflow id")


def test_data_tables_are_schema_only_unique_and_bounded() -> None:
    table = {"id": "table-0001", "name": "Leads", "columns": [{"name": "email", "type": "string"}]}
    assert_problem(case_with(inline(dataTables=[table, table])), "seed.dataTables[1]", "duplicate seed data table id")
    rows = {**table, "rows": [{"email": "a@b.c"}]}
    assert_problem(case_with(inline(dataTables=[rows])), "seed.dataTables[0].rows", "unknown key")
    many = [{**table, "id": f"table-{i:04d}"} for i in range(21)]
    assert_problem(case_with(inline(dataTables=many)), "seed.dataTables", "at most 20")
    dup_columns = {**table, "columns": [{"name": "a", "type": "string"}, {"name": "a", "type": "date"}]}
    assert_problem(case_with(inline(dataTables=[dup_columns])), "seed.dataTables[0].columns", "duplicate column")


def test_prior_runs_name_declared_workflows() -> None:
    data = case_with(inline(workflows=[wf()], priorRuns=[{"workflow": "wf-missing1"}]))
    assert_problem(
        data, "seed.priorRuns[0].workflow", "'wf-missing1' is not declared in seed.workflows (declared: 'wf-abcdefgh')"
    )
    bad_hints = case_with(inline(workflows=[wf()], priorRuns=[{"workflow": "wf-abcdefgh", "hints": ""}]))
    assert_problem(bad_hints, "seed.priorRuns[0].hints", "needs 1–2000")
    long_hints = case_with(inline(workflows=[wf()], priorRuns=[{"workflow": "wf-abcdefgh", "hints": "h" * 2001}]))
    assert_problem(long_hints, "seed.priorRuns[0].hints", "needs 1–2000")
    good = case_with(inline(workflows=[wf()], priorRuns=[{"workflow": "wf-abcdefgh", "hints": "fails on item 2"}]))
    assert seed_of(ok(good)).prior_runs[0].hints == "fails on item 2"


# --- folders ------------------------------------------------------------------------------------------


def folder(fid: str, name: str = "Sales", parent: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"id": fid, "name": name}
    if parent is not None:
        data["parentFolderId"] = parent
    return data


def test_folder_ids_unique_and_parents_declared() -> None:
    dup = case_with(inline(folders=[folder("folder-0001"), folder("folder-0001", "Other")]))
    assert_problem(dup, "seed.folders[1]", "duplicate seed folder id 'folder-0001'")
    orphan = case_with(inline(folders=[folder("folder-0001", parent="folder-9999")]))
    assert_problem(orphan, "seed.folders[0].parentFolderId", "'folder-9999' is not a declared seed folder")
    wf_orphan = case_with(inline(folders=[folder("folder-0001")], workflows=[wf(parentFolderId="folder-9999")]))
    assert_problem(wf_orphan, "seed.workflows[0].parentFolderId", "(declared: 'folder-0001')")


def test_folder_nesting_has_no_cycles() -> None:
    cycle = [folder("folder-000a", "A", "folder-000b"), folder("folder-000b", "B", "folder-000a")]
    assert_problem(case_with(inline(folders=cycle)), "seed.folders[0].parentFolderId", "forms a cycle")
    self_parent = case_with(inline(folders=[folder("folder-000a", "A", "folder-000a")]))
    assert_problem(self_parent, "seed.folders[0].parentFolderId", "is the folder itself")
    nested = [
        folder("folder-000a", "A"),
        folder("folder-000b", "B", "folder-000a"),
        folder("folder-000c", "C", "folder-000b"),
    ]
    assert len(seed_of(ok(case_with(inline(folders=nested)))).folders) == 3


def test_folder_names_are_trimmed_without_slashes_and_bounded() -> None:
    assert_problem(case_with(inline(folders=[folder("folder-0001", "A/B")])), "seed.folders[0].name", "contains '/'")
    assert_problem(case_with(inline(folders=[folder("folder-0001", " A ")])), "seed.folders[0].name", "write 'A'")
    assert_problem(case_with(inline(folders=[folder("folder-0001", " ")])), "seed.folders[0].name", "blank")
    many = [folder(f"folder-{i:04d}", f"F{i}") for i in range(21)]
    assert_problem(case_with(inline(folders=many)), "seed.folders", "at most 20")


# --- agents and projects -------------------------------------------------------------------------------


def test_agent_skills_need_bodies() -> None:
    bare = agent(skills=[{"type": "skill", "id": "skill-refunds"}])
    assert_problem(
        case_with(inline(agents=[bare])), "seed.agents[0].config.skills[0].id", "'skill-refunds' has no body"
    )
    bare["skills"] = {"skill-refunds": {"name": "Refunds", "instructions": "..."}}
    assert seed_of(ok(case_with(inline(agents=[bare])))).agents[0].skills["skill-refunds"]["name"] == "Refunds"


def test_agent_custom_tools_and_tasks_are_refused() -> None:
    custom = agent(tools=[{"type": "workflow", "workflow": "Leads"}, {"type": "custom", "code": "..."}])
    assert_problem(case_with(inline(agents=[custom])), "seed.agents[0].config.tools[1].type", "'custom' tools")
    tasks = agent(tasks=[{"name": "nightly"}])
    assert_problem(case_with(inline(agents=[tasks])), "seed.agents[0].config.tasks", "cannot carry tasks")


def test_agent_sub_agents_are_declared_and_not_self() -> None:
    where = "seed.agents[0].config.subAgents.agents[0]"
    missing = agent(subAgents={"agents": [{"agentId": "agent-9999"}]})
    assert_problem(case_with(inline(agents=[missing])), where, "'agent-9999' is not a seed agent")
    itself = agent(subAgents={"agents": [{"agentId": "agent-0001"}]})
    assert_problem(case_with(inline(agents=[itself])), where, "is the agent itself")
    good = [agent(subAgents={"agents": [{"agentId": "agent-0002"}], "maxChildren": 2}), agent("agent-0002")]
    assert len(seed_of(ok(case_with(inline(agents=good)))).agents) == 2


def test_agent_sub_agents_in_the_old_list_form_are_refused_naming_n8ns_shape() -> None:
    """n8n 2.41's agent config takes ``subAgents: {agents: [{agentId}]}``; a bare list fails its restore."""
    listed = [agent(subAgents=[{"agentId": "agent-0002"}]), agent("agent-0002")]
    assert_problem(case_with(inline(agents=listed)), "seed.agents[0].config.subAgents", '{"agents": [{"agentId"')


@pytest.mark.parametrize(
    ("config", "path", "fragment"),
    [
        ({"model": "gpt-4o"}, "model", "not a model n8n accepts"),
        ({"model": "openai/"}, "model", "not a model n8n accepts"),
        ({"model": "anthropic claude"}, "model", "not a model n8n accepts"),
        ({"model": None}, "model", "not a model n8n accepts"),
        ({"instructions": 3}, "instructions", "is not a string"),
        ({"name": ""}, "name", "not a name of 1-128 characters"),
        ({"name": "n" * 129}, "name", "not a name of 1-128 characters"),
    ],
)
def test_agent_configs_n8n_refuses_fail_validate(config: dict[str, Any], path: str, fragment: str) -> None:
    """Regression: an agent seed whose model was not ``provider/model`` validated, then n8n refused it at
    restore (400 'Model must be "provider/model-name" format')."""
    assert_problem(case_with(inline(agents=[agent(**config)])), f"seed.agents[0].config.{path}", fragment)


@pytest.mark.parametrize("model", ["", "openrouter/amazon/nova-micro-v1", "custom/local:7b", "Anthropic/Claude-3.5"])
def test_agent_models_n8n_accepts_pass(model: str) -> None:
    assert seed_of(ok(case_with(inline(agents=[agent(model=model)])))).agents[0].config["model"] == model


def test_agent_names_that_slugify_alike_are_refused() -> None:
    pair = [agent(name="Support Bot"), agent("agent-0002", name="support-bot")]
    assert_problem(case_with(inline(agents=pair)), "seed.agents[1].config.name", "both address as 'support-bot'")
    assert_problem(case_with(inline(agents=[agent(), agent()])), "seed.agents[1]", "duplicate seed agent id")
    many = [agent(f"agent-{i:04d}") for i in range(6)]
    assert_problem(case_with(inline(agents=many)), "seed.agents", "at most 5")


def test_projects_trimmed_unique_and_bounded() -> None:
    assert_problem(case_with(inline(projects=[{"name": " Ops"}])), "seed.projects[0].name", "write 'Ops'")
    assert_problem(case_with(inline(projects=[{"name": "Ops"}, {"name": "Ops"}])), "seed.projects[1]", "duplicate")
    assert_problem(case_with(inline(projects=[{"name": ""}])), "seed.projects[0].name", "needs 1–255")
    many = [{"name": f"P{i}"} for i in range(6)]
    assert_problem(case_with(inline(projects=many)), "seed.projects", "at most 5")


def test_all_seed_problems_are_reported_at_once() -> None:
    data = case_with(
        inline(
            workflows=[wf(), wf()],
            folders=[folder("folder-0001", "A/B")],
            priorRuns=[{"workflow": "wf-zzzzzzzz"}],
        )
    )
    paths = {p for p, _ in problems(data)}
    assert {"seed.workflows[1]", "seed.folders[0].name", "seed.priorRuns[0].workflow"} <= paths


# --- replay ------------------------------------------------------------------------------------------


def replay(**fields: Any) -> dict[str, Any]:
    return {"mode": "replay", "threadId": "3f1c9a52-0000-4000-8000-000000000001", **fields}


def test_replay_seed_fields() -> None:
    case = ok(
        case_with(replay(project="instance-ai", endpoint="https://eu.api.smith.langchain.com"), datasets=["seeded"])
    )
    assert isinstance(case.seed, ReplaySeed)
    assert case.replay is case.seed
    assert case.seed_mode == "replay"
    assert_problem(case_with(replay(threadId=" "), datasets=["seeded"]), "seed.threadId", "blank")
    assert_problem(
        case_with(replay(endpoint="smith.langchain.com"), datasets=["seeded"]), "seed.endpoint", "not an http(s) URL"
    )
    assert_problem(case_with(replay(liveTurnRunId=""), datasets=["seeded"]), "seed.liveTurnRunId", "blank")


@pytest.mark.parametrize("tier", ["full", "pr"])
def test_replay_cases_stay_out_of_full_and_pr(tier: str) -> None:
    assert_problem(case_with(replay(), datasets=["seeded", tier]), "datasets", f"a replay case cannot be in '{tier}'")
    assert_problem(case_with(replay()), "datasets", "use a 'seeded' tier")


def test_replay_opening_cannot_attach() -> None:
    turns = [{"role": "user", "text": "x", "attach": {"workflow": "wf-abcdefgh"}}]
    data = case_with(replay(), conversation=turns, datasets=["seeded"])
    assert_problem(data, "conversation[0].attach", "attach needs an inline seed")


# --- seeded build results ------------------------------------------------------------------------


def _build_message(tool: str, output: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool-call", "toolCallId": "c1", "toolName": tool, "state": "resolved", "input": {}}
    return {"id": "m2", "role": "assistant", "type": "llm", "content": [block | {"output": output}]}


def test_a_seeded_build_result_naming_an_undeclared_workflow_or_agent_is_a_load_error() -> None:
    """Regression: this passed ``threadcase validate`` and only failed at run time (exit 3)."""
    data = case_with(
        inline(
            workflows=[wf("wfDaily00000001", "Daily")],
            agents=[agent("agent-0001")],
            messages=[
                {"role": "user", "text": "build daily"},
                _build_message("build-workflow", {"workflowId": "wfNOTSEEDED0001"}),
                _build_message("build_agent", {"agentId": "agent-9999"}),
            ],
        )
    )
    assert_problem(data, "seed.messages[1].content[0].output.workflowId", "'wfNOTSEEDED0001', which is not a seed")
    assert_problem(data, "seed.messages[2].content[0].output.agentId", "'agent-9999', which is not a seed agent")
    good = inline(
        workflows=[wf("wfDaily00000001", "Daily")],
        messages=[
            {"role": "user", "text": "build daily"},
            _build_message("build-workflow", {"workflowId": "wfDaily00000001"}),
        ],
    )
    ok(case_with(good))


def test_a_replay_rebuild_may_name_workflows_deleted_before_the_live_turn() -> None:
    """The build-result rule belongs to case files: a rebuilt history names deleted workflows legitimately."""
    seed = InlineSeed(
        mode="inline",
        messages=[_build_message("build-workflow", {"workflowId": "wf-deleted-0001"})],
        workflows=[],
    )
    assert seed.messages


@pytest.mark.parametrize("stamp", [float("nan"), float("inf"), float("-inf"), 1e20, -1e20])
def test_an_epoch_stamp_the_restore_cannot_convert_is_a_load_error(stamp: float) -> None:
    """Regression: NaN, infinities and far-future epoch numbers validated, then crashed the restore."""
    data = case_with(inline(messages=[envelope(createdAt=stamp)]))
    assert_problem(data, "seed.messages[0]", "is not a parseable timestamp")
    ok(case_with(inline(messages=[envelope(createdAt=1767607200000.5)])))


def test_agent_skills_tools_and_sub_agents_must_be_lists() -> None:
    """Regression: a non-list ``config.skills``/``tools`` (or a subAgents that is not n8n's object)
    validated, then crashed the restore."""
    data = case_with(inline(agents=[agent(skills="x", tools={"a": 1}, subAgents=5)]))
    assert_problem(data, "seed.agents[0].config.skills", "'x' is not a list")
    assert_problem(data, "seed.agents[0].config.tools", "{'a': 1} is not a list")
    assert_problem(data, "seed.agents[0].config.subAgents", "5 is not n8n's sub-agent config")
