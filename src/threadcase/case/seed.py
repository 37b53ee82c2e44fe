"""The seed of a case: an inline, sanitised prior conversation and what it built, or a replay.

The models of ``seed`` and their cross-field rules (ids unique, folders acyclic, agents' skills and
sub-agents declared, prior runs naming seed workflows, seeded build results naming seed artifacts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from threadcase.case.base import (
    NonBlank,
    Problem,
    SeedId,
    Strict,
    declared_ids,
    duplicates,
    fail,
    length,
    quote,
    raise_problems,
    slugify,
)

__all__ = [
    "AGENT_MODEL",
    "BUILD_RESULT_KEYS",
    "ENVELOPE_FORM",
    "RESERVED_COLUMNS",
    "SHORTHAND_FORM",
    "Column",
    "Columns",
    "InlineSeed",
    "PriorRun",
    "ReplaySeed",
    "SeedAgent",
    "SeedDataTable",
    "SeedFolder",
    "SeedProject",
    "SeedWorkflow",
    "build_result_problems",
    "inline_seed_problems",
    "seed_message_problem",
]

SHORTHAND_FORM = '{"role": "user" | "assistant", "text": "..." or ["line", ...]}'
ENVELOPE_FORM = (
    '{"id": "...", "role": "user" | "assistant", "type": "llm", "createdAt": "2020-01-01T00:00:00.000Z", '
    '"content": [{"type": "text", "text": "..."}]}'
)
_BOTH_FORMS = f"a seed message is either the exact shorthand {SHORTHAND_FORM} or a full envelope {ENVELOPE_FORM}"

MAX_FOLDERS = 20
MAX_AGENTS = 5
MAX_PROJECTS = 5
MAX_SEED_TABLES = 20


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
        return f"{quote(entry)} is not a message object; {_BOTH_FORMS}"
    if set(entry) == {"role", "text"}:
        issues = []
        if entry["role"] not in ("user", "assistant"):
            issues.append(f"role {quote(entry['role'])} is not 'user' or 'assistant'")
        if not _is_lines(entry["text"]):
            issues.append(f"text {quote(entry['text'])} is not a string or a list of strings")
        return None if not issues else "shorthand near miss: " + "; ".join(issues) + f"; {_BOTH_FORMS}"

    issues = []
    custom = entry.get("type") == "custom"
    if "id" not in entry:
        issues.append("missing 'id'" + (" (looks like shorthand with extra keys)" if "text" in entry else ""))
    elif not isinstance(entry["id"], str) or not entry["id"].strip():
        issues.append(f"id {quote(entry['id'])} is not a non-empty string")
    if "type" in entry and (not isinstance(entry["type"], str) or not entry["type"].strip()):
        issues.append(f"type {quote(entry['type'])} is not a non-empty string")
    if "role" in entry:
        if entry["role"] not in ("user", "assistant"):
            issues.append(f"role {quote(entry['role'])} is not 'user' or 'assistant'")
    elif not custom:
        issues.append("missing 'role' (only a message of type 'custom' may omit it)")
    if "createdAt" in entry and not _parseable_timestamp(entry["createdAt"]):
        issues.append(
            f"createdAt {quote(entry['createdAt'])} is not a parseable timestamp (ISO 8601, or finite epoch ms "
            "within years 1–9999)"
        )
    if "content" in entry:
        issues.extend(_content_issues(entry["content"]))
    elif not custom:
        issues.append("missing 'content' (a non-empty list of blocks, each with a 'type')")
    return None if not issues else "; ".join(issues) + f"; {_BOTH_FORMS}"


def _content_issues(content: Any) -> list[str]:
    if not isinstance(content, list) or not content:
        return [f"content {quote(content)} is not a non-empty list of blocks"]
    issues = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            issues.append(f"content[{index}] {quote(block)} is not an object")
        elif not isinstance(block.get("type"), str) or not block["type"].strip():
            issues.append(f"content[{index}] needs a non-empty 'type' (got {quote(block.get('type'))})")
    return issues


def _seed_message(value: Any) -> Any:
    problem = seed_message_problem(value)
    if problem is not None:
        raise fail(problem)
    return value


SeedMessage = Annotated[
    dict[str, Any],
    BeforeValidator(_seed_message),
    WithJsonSchema(
        {
            "anyOf": [
                {
                    "type": "object",
                    "title": "Shorthand",
                    "properties": {
                        "role": {"enum": ["user", "assistant"]},
                        "text": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                    },
                    "required": ["role", "text"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "title": "Envelope",
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "role": {"enum": ["user", "assistant"]},
                        "type": {"type": "string", "minLength": 1},
                        "createdAt": {"type": ["string", "number"]},
                        "content": {
                            "type": "array",
                            "minItems": 1,
                            "items": {"type": "object", "properties": {"type": {"type": "string", "minLength": 1}}},
                        },
                    },
                    "required": ["id"],
                },
            ]
        }
    ),
]


# --- models --------------------------------------------------------------------------------------


RESERVED_COLUMNS = ("id", "createdAt", "updatedAt", "dryRunState")
"""Column names every n8n data table has already (matched without case): n8n refuses to create them."""
_COLUMN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,62}")


def _column_name(value: str) -> str:
    if value.lower() in {r.lower() for r in RESERVED_COLUMNS}:
        raise fail(
            f"{value!r} is reserved: every n8n data table already has the system columns "
            f"{', '.join(RESERVED_COLUMNS)}; rename it (e.g. 'record_{value}')"
        )
    if not _COLUMN_NAME.fullmatch(value):
        raise fail(
            f"{value!r} is not a column name n8n accepts: a letter first, then letters, digits or underscores, "
            "at most 63 characters"
        )
    return value


class Column(Strict):
    """A data table column."""

    name: Annotated[NonBlank, AfterValidator(_column_name)]
    """Column name: n8n's rule (a letter, then letters, digits and underscores, ≤63 characters), never one
    of the system columns ``id``, ``createdAt``, ``updatedAt``, ``dryRunState``."""
    type: Literal["string", "number", "boolean", "date"]
    """Column type."""


def _unique_columns(columns: list[Column]) -> list[Column]:
    names = [c.name for c in columns]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise fail(f"duplicate column name(s) {', '.join(repr(d) for d in dupes)}")
    return columns


Columns = Annotated[list[Column], Field(max_length=50), AfterValidator(_unique_columns)]


class SeedWorkflow(Strict):
    """A workflow the seeded history built, created on the instance before the live turn."""

    id: SeedId
    """Id the seeded messages refer to (8–64 characters); remapped to a fresh id per run."""
    name: Annotated[str, AfterValidator(length(1, 255))]
    """Name, unique in the seed; a per-run ``[seed xxxxxxxx]`` suffix is added on restore."""
    nodes: list[dict[str, Any]] = Field(max_length=500)
    """n8n nodes, as the workflow JSON has them (at most 500)."""
    connections: dict[str, Any]
    """n8n connections, as the workflow JSON has them."""
    published: bool = False
    """Publish (activate) the workflow after restore."""
    parent_folder_id: str | None = None
    """Id of a seed folder the workflow sits in."""


class SeedDataTable(Strict):
    """A data table the seeded history built: schema only, rows are never seeded from a case's seed."""

    id: SeedId
    """Table id, 8–64 characters."""
    name: Annotated[str, AfterValidator(length(1, 128))]
    """Table name, 1–128 characters."""
    columns: Columns
    """At most 50 typed columns."""


class SeedFolder(Strict):
    """A folder in the thread's project; names are verbatim, so use a name no real project would."""

    id: SeedId
    """Folder id, 8–64 characters, unique."""
    name: str
    """Folder name: trimmed, without ``/`` (it separates nested folders in a folderPath)."""
    parent_folder_id: str | None = None
    """Id of another seed folder to nest this one in (no cycles)."""


class SeedAgent(Strict):
    """An n8n Agent artifact: the shapes ``GET …/agents/v2/:id/config`` and ``…/skills`` return."""

    id: SeedId
    """Agent id, 8–64 characters; shares one id space with seed workflows."""
    config: dict[str, Any]
    """The agent config as n8n 2.41 takes it: ``name``, ``model`` (``provider/model`` or ``""``), ``instructions``,
    ``skills[{type, id}]``, ``tools``, ``subAgents: {agents: [{agentId}]}``."""
    skills: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Skill bodies by id; every ``config.skills[].id`` needs one."""


class SeedProject(Strict):
    """A team project that must exist before the live turn (created with its verbatim name)."""

    name: Annotated[str, AfterValidator(length(1, 255))]
    """Project name: already trimmed, unique in the seed."""


class PriorRun(Strict):
    """A mocked execution of a seed workflow staged before the live turn (so the agent sees its result)."""

    workflow: str
    """Id of a seed workflow."""
    hints: Annotated[str, AfterValidator(length(1, 2000))] | None = None
    """Steers the mock for the staged run's outbound calls (1–2000 characters)."""


class InlineSeed(Strict):
    """A durable, sanitised prior conversation and the artifacts it built, authored in the case body."""

    mode: Literal["inline"]
    """The seed mode."""
    source: dict[str, Any] | None = None
    """Provenance, informational only."""
    messages: list[SeedMessage] = Field(default_factory=list, max_length=1000)
    """Prior messages as authored: shorthand ``{role, text}`` or full envelopes (expanded at run time)."""
    workflows: list[SeedWorkflow] = Field(default_factory=list, max_length=50)
    """Workflows to create; ids and names unique."""
    data_tables: list[SeedDataTable] = Field(default_factory=list)
    """Data tables to create, schema only (at most 20)."""
    folders: list[SeedFolder] = Field(default_factory=list)
    """Folders to create (at most 20), parents before children."""
    agents: list[SeedAgent] = Field(default_factory=list)
    """Agents to create (at most 5); the thread is bound to the last one built."""
    projects: list[SeedProject] = Field(default_factory=list)
    """Team projects to create (at most 5)."""
    prior_runs: list[PriorRun] = Field(default_factory=list)
    """Mocked executions of seed workflows to stage before the live turn, in order."""

    @model_validator(mode="after")
    def _rules(self) -> InlineSeed:
        raise_problems(inline_seed_problems(self))
        return self


SAFE_THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")
"""What a replay thread id may be (``fullmatch``): it names the file ``<replay_dir>/<threadId>.json``, so
no path separator, no ``..`` at the start, no control character."""


class ReplaySeed(Strict):
    """Rebuild a production thread from its LangSmith trace; transient, never committed."""

    mode: Literal["replay"]
    """The seed mode."""
    thread_id: NonBlank
    """The LangSmith thread id to replay."""
    project: NonBlank | None = None
    """LangSmith project holding the thread (default ``instance-ai``)."""
    endpoint: str | None = None
    """LangSmith API URL to read from (pins a tenant), e.g. ``https://api.smith.langchain.com``."""
    live_turn_run_id: NonBlank | None = None
    """Run id of the user turn to send live (default: the last user turn)."""

    @field_validator("thread_id")
    @classmethod
    def _thread_id(cls, value: str) -> str:
        if not SAFE_THREAD_ID.fullmatch(value):
            shown = repr(value) if len(value) <= 60 else repr(value[:57]) + "..."
            raise fail(
                f"{shown} cannot be a thread id: it names the replay file <threadId>.json, so only letters, "
                "digits, '.', '_', ':' and '-' (starting with a letter or digit, at most 200)"
            )
        return value

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise fail(f"{value!r} is not an http(s) URL, e.g. 'https://api.smith.langchain.com'")
        return value


# --- cross-field rules ---------------------------------------------------------------------------


def _folder_problems(seed: InlineSeed) -> list[Problem]:
    problems: list[Problem] = []
    if len(seed.folders) > MAX_FOLDERS:
        problems.append(("folders", f"{len(seed.folders)} folders declared; at most {MAX_FOLDERS} are allowed"))
    ids = [folder.id for folder in seed.folders]
    problems += duplicates(ids, "seed folder id", "folders")
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
                (f"folders[{index}].parentFolderId", f"{parent!r} is not a declared seed folder ({declared_ids(ids)})")
            )
        elif parent == folder.id:
            problems.append((f"folders[{index}].parentFolderId", f"{parent!r} is the folder itself"))
    for index, workflow in enumerate(seed.workflows):
        parent = workflow.parent_folder_id
        if parent is not None and parent not in declared:
            problems.append(
                (
                    f"workflows[{index}].parentFolderId",
                    f"{parent!r} is not a declared seed folder ({declared_ids(ids)})",
                )
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


AGENT_MODEL = re.compile(r"[a-z0-9-]+/(?:[a-z0-9._:-]+/)*[a-z0-9._:-]+", re.IGNORECASE)
"""n8n's ``provider/model`` rule for an agent's ``config.model`` (``""`` is allowed too: no model yet)."""


def _agent_config_problems(where: str, config: dict[str, Any]) -> list[Problem]:
    """The fields n8n 2.41's agent config schema requires: restore-thread refuses the seed without them."""
    problems: list[Problem] = []
    name = config.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 128:
        problems.append((f"{where}.config.name", f"{quote(name)} is not a name of 1-128 characters"))
    if not isinstance(config.get("instructions"), str):
        problems.append((f"{where}.config.instructions", f"{quote(config.get('instructions'))} is not a string"))
    model = config.get("model")
    if not isinstance(model, str) or (model and not AGENT_MODEL.fullmatch(model)):
        problems.append(
            (
                f"{where}.config.model",
                f"{quote(model)} is not a model n8n accepts: write 'provider/model-name' "
                "(e.g. 'anthropic/claude-sonnet-4-5') or '' for none",
            )
        )
    return problems


def _agent_problems(seed: InlineSeed) -> list[Problem]:
    problems: list[Problem] = []
    if len(seed.agents) > MAX_AGENTS:
        problems.append(("agents", f"{len(seed.agents)} agents declared; at most {MAX_AGENTS} are allowed"))
    ids = [agent.id for agent in seed.agents]
    problems += duplicates(ids, "seed agent id", "agents")
    slugs: dict[str, tuple[int, str]] = {}
    for index, agent in enumerate(seed.agents):
        where = f"agents[{index}]"
        config = agent.config
        skills = config.get("skills", [])
        if isinstance(skills, list):
            for k, skill in enumerate(skills):
                skill_id = skill.get("id") if isinstance(skill, dict) else None
                if not isinstance(skill_id, str):
                    problems.append((f"{where}.config.skills[{k}]", f"{quote(skill)} needs a string 'id'"))
                elif skill_id not in agent.skills:
                    problems.append(
                        (
                            f"{where}.config.skills[{k}].id",
                            f"{skill_id!r} has no body in {where}.skills ({declared_ids(agent.skills)}); "
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
        for key in ("skills", "tools"):
            if key in config and not isinstance(config[key], list):
                # The restore iterates these; anything else would crash it mid-run instead of here.
                problems.append((f"{where}.config.{key}", f"{quote(config[key])} is not a list; write a JSON array"))
        if "tasks" in config:
            problems.append((f"{where}.config.tasks", "agent seeds cannot carry tasks; remove the key"))
        problems += _agent_config_problems(where, config)
        sub_agents = config.get("subAgents", {})
        if not isinstance(sub_agents, dict) or not isinstance(sub_agents.get("agents", []), list):
            # n8n 2.41's shape: {"agents": [{"agentId": ...}], "maxChildren"?: n}; anything else is refused.
            problems.append(
                (
                    f"{where}.config.subAgents",
                    f"{quote(sub_agents)} is not n8n's sub-agent config; write "
                    '{"agents": [{"agentId": "<seed agent id>"}]}',
                )
            )
        else:
            for k, entry in enumerate(sub_agents.get("agents", [])):
                at = f"{where}.config.subAgents.agents[{k}]"
                ref = _agent_ref(entry)
                if ref is None:
                    problems.append((at, f"{quote(entry)} does not name an agent id"))
                elif ref == agent.id:
                    problems.append((at, f"{ref!r} is the agent itself"))
                elif ref not in ids:
                    problems.append((at, f"{ref!r} is not a seed agent ({declared_ids(ids)})"))
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
    problems += duplicates([w.id for w in seed.workflows], "seed workflow id", "workflows")
    problems += duplicates([w.name for w in seed.workflows], "seed workflow name", "workflows")
    workflow_ids = {w.id for w in seed.workflows}
    for index, agent in enumerate(seed.agents):
        if agent.id in workflow_ids:
            # Workflow and agent ids share one remap space: one string replaced twice is ambiguous.
            problems.append((f"agents[{index}].id", f"{agent.id!r} is also a seed workflow id; ids must be unique"))
    if len(seed.data_tables) > MAX_SEED_TABLES:
        problems.append(
            ("dataTables", f"{len(seed.data_tables)} tables declared; at most {MAX_SEED_TABLES} are allowed")
        )
    problems += duplicates([t.id for t in seed.data_tables], "seed data table id", "dataTables")
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
    problems += duplicates([p.name for p in seed.projects], "seed project name", "projects")
    declared = [w.id for w in seed.workflows]
    for index, run in enumerate(seed.prior_runs):
        if run.workflow not in workflow_ids:
            problems.append(
                (
                    f"priorRuns[{index}].workflow",
                    f"{run.workflow!r} is not declared in seed.workflows ({declared_ids(declared)})",
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
                        f"{tool} result names {quote(value)}, which is not a seed {label} ({listed}); "
                        f"use the seeded {label}'s id",
                    )
                )
    return problems
