"""Cross-field load-time rules of a case file, as pure functions over validated models.

:mod:`threadcase.harness.schema` calls these from its model validators. Each function returns every
problem it finds as ``(relative JSON path, message)`` pairs rather than raising at the first, so a
case author sees all the broken rules of a file in one ``threadcase validate``. Paths are relative to
the model the rule belongs to (``workflows[1].parentFolderId`` inside ``seed``); the loader prefixes
them with where that model sits in the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from threadcase.harness.schema import Case, InlineSeed

__all__ = [
    "BUILD_RESULT_KEYS",
    "ENVELOPE_FORM",
    "GATED_DATASETS",
    "REPLAY_FORBIDDEN_DATASETS",
    "SHORTHAND_FORM",
    "Problem",
    "build_result_problems",
    "case_problems",
    "inline_seed_problems",
    "seed_message_problem",
    "slugify",
    "unbalanced_bracket",
]

Problem = tuple[str, str]
"""``(relative JSON path, message)``; the path is empty when the problem is the model as a whole."""

SHORTHAND_FORM = '{"role": "user" | "assistant", "text": "..." or ["line", ...]}'
ENVELOPE_FORM = (
    '{"id": "...", "role": "user" | "assistant", "type": "llm", "createdAt": "2020-01-01T00:00:00.000Z", '
    '"content": [{"type": "text", "text": "..."}]}'
)
_BOTH_FORMS = f"a seed message is either the exact shorthand {SHORTHAND_FORM} or a full envelope {ENVELOPE_FORM}"

# A replay case depends on a trace that expires (~14 days) and may hold personal data, so it must
# never sit in the tiers CI and nightly runs select.
REPLAY_FORBIDDEN_DATASETS = ("full", "pr")

GATED_DATASETS = ("pr", "agents", "mcp-gate")
"""Tiers that gate a merge or a release, as n8n's CI lanes select them (the PR gate, the agents suite,
the MCP gate). A case in one of them must finish on its own: nothing may wait on a browser, so a
director note that scripts automatic credential setup (sent, but inert without a browser: the run
stalls until a budget ends it) is a load error there, and allowed in any other tier."""

MAX_FOLDERS = 20
MAX_AGENTS = 5
MAX_PROJECTS = 5
MAX_SEED_TABLES = 20


def _q(value: Any, limit: int = 60) -> str:
    """``repr`` of a value, cut short so one bad field cannot flood a terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _declared(ids: Iterable[str]) -> str:
    listed = ", ".join(repr(i) for i in ids)
    return f"declared: {listed}" if listed else "none declared"


def unbalanced_bracket(text: str) -> bool:
    """True when some ``[`` opening a director note has no ``]`` closing it."""
    if "[" not in text:
        return False
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
    return depth > 0


def slugify(name: str) -> str:
    """The addressing key n8n derives from an agent name: ``Support Bot`` and ``support-bot`` collide."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# --- seed messages ---------------------------------------------------------------------------------


def _is_lines(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(line, str) for line in value))


def _parseable_timestamp(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        # Epoch milliseconds, as the message store writes them; the restore converts them with
        # datetime.fromtimestamp, so NaN, infinities and far-future values must fail here, not there.
        try:
            datetime.fromtimestamp(value / 1000, tz=UTC)
        except (ValueError, OverflowError, OSError):
            return False
        return True
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return False
        return True
    return False


def seed_message_problem(entry: Any) -> str | None:
    """Why one ``seed.messages`` entry is invalid, or None when it is valid as authored.

    Only the exact key set ``{role, text}`` counts as shorthand. A near miss is never guessed at: it
    would become a message the transcript builder silently drops, so it fails here naming both forms.
    """
    if not isinstance(entry, dict):
        return f"{_q(entry)} is not a message object; {_BOTH_FORMS}"
    if set(entry) == {"role", "text"}:
        issues = []
        if entry["role"] not in ("user", "assistant"):
            issues.append(f"role {_q(entry['role'])} is not 'user' or 'assistant'")
        if not _is_lines(entry["text"]):
            issues.append(f"text {_q(entry['text'])} is not a string or a list of strings")
        return None if not issues else "shorthand near miss: " + "; ".join(issues) + f"; {_BOTH_FORMS}"

    issues = []
    custom = entry.get("type") == "custom"
    if "id" not in entry:
        issues.append("missing 'id'" + (" (looks like shorthand with extra keys)" if "text" in entry else ""))
    elif not isinstance(entry["id"], str) or not entry["id"].strip():
        issues.append(f"id {_q(entry['id'])} is not a non-empty string")
    if "type" in entry and (not isinstance(entry["type"], str) or not entry["type"].strip()):
        issues.append(f"type {_q(entry['type'])} is not a non-empty string")
    if "role" in entry:
        if entry["role"] not in ("user", "assistant"):
            issues.append(f"role {_q(entry['role'])} is not 'user' or 'assistant'")
    elif not custom:
        issues.append("missing 'role' (only a message of type 'custom' may omit it)")
    if "createdAt" in entry and not _parseable_timestamp(entry["createdAt"]):
        issues.append(
            f"createdAt {_q(entry['createdAt'])} is not a parseable timestamp (ISO 8601, or finite epoch ms "
            "within years 1–9999)"
        )
    if "content" in entry:
        issues.extend(_content_issues(entry["content"]))
    elif not custom:
        issues.append("missing 'content' (a non-empty list of blocks, each with a 'type')")
    return None if not issues else "; ".join(issues) + f"; {_BOTH_FORMS}"


def _content_issues(content: Any) -> list[str]:
    if not isinstance(content, list) or not content:
        return [f"content {_q(content)} is not a non-empty list of blocks"]
    issues = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            issues.append(f"content[{index}] {_q(block)} is not an object")
        elif not isinstance(block.get("type"), str) or not block["type"].strip():
            issues.append(f"content[{index}] needs a non-empty 'type' (got {_q(block.get('type'))})")
    return issues


# --- inline seed -----------------------------------------------------------------------------------


def _duplicates(values: Sequence[str], label: str, path: str) -> list[Problem]:
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        if value in first:
            problems.append((f"{path}[{index}]", f"duplicate {label} {value!r} (also {path}[{first[value]}])"))
        else:
            first[value] = index
    return problems


def _folder_problems(seed: InlineSeed) -> list[Problem]:
    problems: list[Problem] = []
    if len(seed.folders) > MAX_FOLDERS:
        problems.append(("folders", f"{len(seed.folders)} folders declared; at most {MAX_FOLDERS} are allowed"))
    ids = [folder.id for folder in seed.folders]
    problems += _duplicates(ids, "seed folder id", "folders")
    declared = set(ids)
    for index, folder in enumerate(seed.folders):
        name = folder.name
        if not name.strip():
            problems.append((f"folders[{index}].name", f"{name!r} is blank; a folder needs a name"))
        elif name != name.strip():
            problems.append((f"folders[{index}].name", f"{name!r} has surrounding whitespace; write {name.strip()!r}"))
        if "/" in name:
            problems.append(
                (f"folders[{index}].name", f"{name!r} contains '/', which separates nested folders in a folderPath")
            )
        parent = folder.parent_folder_id
        if parent is not None and parent not in declared:
            problems.append(
                (f"folders[{index}].parentFolderId", f"{parent!r} is not a declared seed folder ({_declared(ids)})")
            )
        elif parent == folder.id:
            problems.append((f"folders[{index}].parentFolderId", f"{parent!r} is the folder itself"))
    for index, workflow in enumerate(seed.workflows):
        parent = workflow.parent_folder_id
        if parent is not None and parent not in declared:
            problems.append(
                (f"workflows[{index}].parentFolderId", f"{parent!r} is not a declared seed folder ({_declared(ids)})")
            )
    problems += _folder_cycles(seed)
    return problems


def _folder_cycles(seed: InlineSeed) -> list[Problem]:
    parent_of = {f.id: f.parent_folder_id for f in seed.folders if f.parent_folder_id and f.parent_folder_id != f.id}
    index_of = {f.id: i for i, f in enumerate(seed.folders)}
    reported: set[str] = set()
    problems: list[Problem] = []
    for start in parent_of:
        chain = [start]
        current = parent_of.get(start)
        while current is not None and current not in chain:
            chain.append(current)
            current = parent_of.get(current)
        if current is not None and current == start and start not in reported:
            reported.update(chain)
            loop = " -> ".join(repr(i) for i in [*chain, start])
            problems.append((f"folders[{index_of[start]}].parentFolderId", f"folder nesting forms a cycle: {loop}"))
    return problems


def _agent_ref(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("agentId", "id"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _agent_problems(seed: InlineSeed) -> list[Problem]:
    problems: list[Problem] = []
    if len(seed.agents) > MAX_AGENTS:
        problems.append(("agents", f"{len(seed.agents)} agents declared; at most {MAX_AGENTS} are allowed"))
    ids = [agent.id for agent in seed.agents]
    problems += _duplicates(ids, "seed agent id", "agents")
    slugs: dict[str, tuple[int, str]] = {}
    for index, agent in enumerate(seed.agents):
        where = f"agents[{index}]"
        config = agent.config
        skills = config.get("skills", [])
        if isinstance(skills, list):
            for k, skill in enumerate(skills):
                skill_id = skill.get("id") if isinstance(skill, dict) else None
                if not isinstance(skill_id, str):
                    problems.append((f"{where}.config.skills[{k}]", f"{_q(skill)} needs a string 'id'"))
                elif skill_id not in agent.skills:
                    problems.append(
                        (
                            f"{where}.config.skills[{k}].id",
                            f"{skill_id!r} has no body in {where}.skills ({_declared(agent.skills)}); "
                            "add the skill's body under its id",
                        )
                    )
        tools = config.get("tools", [])
        if isinstance(tools, list):
            for k, tool in enumerate(tools):
                if isinstance(tool, dict) and tool.get("type") == "custom":
                    problems.append(
                        (
                            f"{where}.config.tools[{k}].type",
                            "'custom' tools cannot be seeded (their code is not portable)",
                        )
                    )
        for key in ("skills", "tools", "subAgents"):
            if key in config and not isinstance(config[key], list):
                # The restore iterates these; anything else would crash it mid-run instead of here.
                problems.append((f"{where}.config.{key}", f"{_q(config[key])} is not a list; write a JSON array"))
        if "tasks" in config:
            problems.append((f"{where}.config.tasks", "agent seeds cannot carry tasks; remove the key"))
        sub_agents = config.get("subAgents", [])
        if isinstance(sub_agents, list):
            for k, entry in enumerate(sub_agents):
                ref = _agent_ref(entry)
                if ref is None:
                    problems.append((f"{where}.config.subAgents[{k}]", f"{_q(entry)} does not name an agent id"))
                elif ref == agent.id:
                    problems.append((f"{where}.config.subAgents[{k}]", f"{ref!r} is the agent itself"))
                elif ref not in ids:
                    problems.append(
                        (f"{where}.config.subAgents[{k}]", f"{ref!r} is not a seed agent ({_declared(ids)})")
                    )
        name = config.get("name")
        if isinstance(name, str):
            slug = slugify(name)
            if slug in slugs:
                other_index, other_name = slugs[slug]
                problems.append(
                    (
                        f"{where}.config.name",
                        f"{name!r} and {other_name!r} (agents[{other_index}]) both address as {slug!r}; "
                        "rename one so the names differ by more than case, spacing or punctuation",
                    )
                )
            else:
                slugs[slug] = (index, name)
    return problems


def inline_seed_problems(seed: InlineSeed) -> list[Problem]:
    """Every cross-field rule of an inline seed; paths relative to the seed."""
    problems: list[Problem] = []
    if not (seed.messages or seed.workflows or seed.data_tables or seed.folders or seed.agents or seed.projects):
        problems.append(
            ("", "an inline seed must carry something: messages, workflows, dataTables, folders, agents or projects")
        )
    problems += _duplicates([w.id for w in seed.workflows], "seed workflow id", "workflows")
    problems += _duplicates([w.name for w in seed.workflows], "seed workflow name", "workflows")
    workflow_ids = {w.id for w in seed.workflows}
    for index, agent in enumerate(seed.agents):
        if agent.id in workflow_ids:
            # Workflow and agent ids share one remap space: one string replaced twice is ambiguous.
            problems.append((f"agents[{index}].id", f"{agent.id!r} is also a seed workflow id; ids must be unique"))
    if len(seed.data_tables) > MAX_SEED_TABLES:
        problems.append(
            ("dataTables", f"{len(seed.data_tables)} tables declared; at most {MAX_SEED_TABLES} are allowed")
        )
    problems += _duplicates([t.id for t in seed.data_tables], "seed data table id", "dataTables")
    problems += _folder_problems(seed)
    problems += _agent_problems(seed)
    if len(seed.projects) > MAX_PROJECTS:
        problems.append(("projects", f"{len(seed.projects)} projects declared; at most {MAX_PROJECTS} are allowed"))
    for index, project in enumerate(seed.projects):
        if project.name != project.name.strip():
            problems.append(
                (
                    f"projects[{index}].name",
                    f"{project.name!r} has surrounding whitespace; write {project.name.strip()!r}",
                )
            )
    problems += _duplicates([p.name for p in seed.projects], "seed project name", "projects")
    declared = [w.id for w in seed.workflows]
    for index, run in enumerate(seed.prior_runs):
        if run.workflow not in workflow_ids:
            problems.append(
                (
                    f"priorRuns[{index}].workflow",
                    f"{run.workflow!r} is not declared in seed.workflows ({_declared(declared)})",
                )
            )
    return problems


BUILD_RESULT_KEYS = {
    "build-workflow": ("workflowId", "workflow"),
    "build_workflow": ("workflowId", "workflow"),
    "build-agent": ("agentId", "agent"),
    "build_agent": ("agentId", "agent"),
}
"""Seeded tool results that name what they built: tool name -> (output key, what it names)."""


def build_result_problems(
    messages: Sequence[Any], workflow_ids: Sequence[str], agent_ids: Sequence[str]
) -> list[Problem]:
    """A seeded build result must name a seed workflow (``output.workflowId``) or agent (``output.agentId``).

    Otherwise the restored history would refer to something that does not exist on the instance,
    and the id remap has nothing to point it at. Paths are relative to the seed.
    """
    problems: list[Problem] = []
    declared = {"workflow": list(workflow_ids), "agent": list(agent_ids)}
    for m_index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b_index, block in enumerate(content):
            if not (isinstance(block, dict) and block.get("type") == "tool-call"):
                continue
            tool = block.get("toolName")
            output = block.get("output")
            keyed = BUILD_RESULT_KEYS.get(tool) if isinstance(tool, str) else None
            if keyed is None or not isinstance(output, dict) or keyed[0] not in output:
                continue
            key, label = keyed
            value = output[key]
            ids = declared[label]
            if value not in ids:
                listed = ", ".join(repr(i) for i in ids) or f"no {label}s are declared"
                problems.append(
                    (
                        f"messages[{m_index}].content[{b_index}].output.{key}",
                        f"{tool} result names {_q(value)}, which is not a seed {label} ({listed}); "
                        f"use the seeded {label}'s id",
                    )
                )
    return problems


# --- agent checks ----------------------------------------------------------------------------------


def _agent_check_problems(case: Case, inline: InlineSeed | None) -> list[Problem]:
    """The seeded-skill checks name skills the seed declares; no entry asks for a thing and its opposite."""
    checks = case.checks
    if checks is None:
        return []
    problems: list[Problem] = []
    declared = sorted({skill_id for agent in (inline.agents if inline else []) for skill_id in agent.skills})
    for key, values in (
        ("agentSkillsUnchanged", checks.agent_skills_unchanged),
        ("agentSkillsChanged", checks.agent_skills_changed),
    ):
        for index, skill_id in enumerate(values):
            if skill_id not in declared:
                needs = "" if declared else "; this check needs an inline seed whose agents declare skills"
                problems.append(
                    (
                        f"checks.{key}[{index}]",
                        f"{skill_id!r} is not a skill id of any seed agent ({_declared(declared)}){needs}; "
                        "list ids from seed.agents[].skills",
                    )
                )
    for key, values, other_key, other in (
        ("agentSkillsChanged", checks.agent_skills_changed, "agentSkillsUnchanged", checks.agent_skills_unchanged),
        ("agentSkillsAbsent", checks.agent_skills_absent, "agentSkillsPresent", checks.agent_skills_present),
    ):
        for index, value in enumerate(values):
            if value in other:
                problems.append(
                    (f"checks.{key}[{index}]", f"{value!r} is also in checks.{other_key}; it cannot be both")
                )
    return problems


# --- director notes --------------------------------------------------------------------------------


def _auto_setup_problems(case: Case) -> list[Problem]:
    """A note scripting automatic credential setup in a gated tier (see :data:`GATED_DATASETS`).

    The notes are read by the user proxy's own parser, so this rule fires exactly when the proxy
    would choose ``auto`` — never on a note the proxy reads differently.
    """
    gated = [d for d in case.datasets if d in GATED_DATASETS]
    if not gated:
        return []
    # Imported here, and only for gated cases: the proxy package pulls in the model SDK, which loading
    # and validating case files otherwise never needs.
    from threadcase.user_proxy.director import Script

    problems: list[Problem] = []
    tiers = ", ".join(repr(d) for d in gated)
    for index, turn in enumerate(case.conversation):
        if turn.role != "user" or "[" not in turn.text:
            continue
        auto = next((d for d in Script.from_texts([("user", turn.text)]).credential_directions() if d.auto), None)
        if auto is not None:
            problems.append(
                (
                    f"conversation[{index}].text",
                    f"a note scripts automatic credential setup ({_q(auto.note, 80)}), which stalls without a "
                    f"browser; keep this case out of gated tiers (datasets: {tiers})",
                )
            )
    return problems


# --- the case as a whole ---------------------------------------------------------------------------


def case_problems(case: Case) -> list[Problem]:
    """Every cross-field rule of a case; paths relative to the case file's root."""
    from threadcase.harness.schema import InlineSeed, ReplaySeed

    problems: list[Problem] = []
    replay = isinstance(case.seed, ReplaySeed)
    inline = case.seed if isinstance(case.seed, InlineSeed) else None
    if not case.conversation and not replay:
        problems.append(
            ("conversation", "a case needs a conversation (at least one turn) or a seed with mode 'replay'")
        )
    for index, turn in enumerate(case.conversation):
        where = f"conversation[{index}]"
        attach = turn.attach
        if attach is not None:
            if index != 0:
                problems.append(
                    (f"{where}.attach", "only conversation[0] may carry attach: an attachment is the opening hand-off")
                )
            elif turn.role != "user":
                problems.append((f"{where}.attach", "only a user turn may carry attach"))
            elif replay:
                problems.append(
                    (f"{where}.attach", "attach needs an inline seed; a replay case's opening is the trace's")
                )
            if attach.workflow is not None:
                declared = [w.id for w in inline.workflows] if inline else []
                if attach.workflow not in declared:
                    problems.append(
                        (
                            f"{where}.attach.workflow",
                            f"{attach.workflow!r} is not declared in seed.workflows ({_declared(declared)})"
                            + ("" if inline else "; attach needs an inline seed that declares it"),
                        )
                    )
            if attach.agent is not None:
                declared = [a.id for a in inline.agents] if inline else []
                if attach.agent not in declared:
                    problems.append(
                        (
                            f"{where}.attach.agent",
                            f"{attach.agent!r} is not declared in seed.agents ({_declared(declared)})"
                            + ("" if inline else "; attach needs an inline seed that declares it"),
                        )
                    )
        if turn.role == "user" and not turn.text.strip():
            opening_handoff = index == 0 and attach is not None and not replay
            if not opening_handoff:
                problems.append(
                    (
                        f"{where}.text",
                        f"{turn.text!r} is blank; a user turn needs text (only a non-replay opening turn that "
                        "carries attach may be empty)",
                    )
                )
    if inline is not None:
        # A case file's seed, not every InlineSeed: a replay rebuild may name workflows the agent
        # deleted before the live turn, which is history, not a mistake.
        problems += [
            (f"seed.{path}", message)
            for path, message in build_result_problems(
                inline.messages, [w.id for w in inline.workflows], [a.id for a in inline.agents]
            )
        ]
    problems += _duplicates([s.name for s in case.execution_scenarios], "scenario name", "executionScenarios")
    problems += _agent_check_problems(case, inline)
    problems += _auto_setup_problems(case)
    if case.unit_count == 0:
        problems.append(
            (
                "",
                "nothing to grade: add an executionScenarios entry, a processExpectations or outcomeExpectations "
                "entry, or a deterministic check under checks",
            )
        )
    if replay:
        bad = [d for d in case.datasets if d in REPLAY_FORBIDDEN_DATASETS]
        if bad:
            problems.append(
                (
                    "datasets",
                    f"a replay case cannot be in {', '.join(repr(d) for d in bad)}: it is transient (its trace "
                    "expires in ~14 days) and may hold personal data; use a 'seeded' tier, e.g. [\"seeded\"]",
                )
            )
    return problems
