"""The Case model: every field of a case file, every load-time rule.

A case file is one JSON object in n8n's Instance AI evaluation format (camelCase keys), so a case
written for n8n's harness loads here unchanged; threadcase's own additions live under ``checks``.
Attributes are snake_case, the file format is camelCase via aliases: ``case.message_budget`` is
``messageBudget`` on disk.

Every rule is enforced when the model is validated, so nothing slow or paid ever starts on a broken
case. Field-level rules live on the fields; cross-field rules are collected (all of them, not the first)
beside the model they belong to (this module for the case as a whole, :mod:`threadcase.case.seed` for
the seed) and raised together (:mod:`threadcase.case.base`); the loader turns them into one
:class:`~threadcase.errors.CaseProblem` each. The seed and check models are re-exported here.

Use :func:`threadcase.case.loader.load_case_file` to read a file; it validates with aliases only,
so a snake_case key in a file is refused like any other unknown key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from threadcase.case.base import (
    RULES_ERROR_TYPE,
    Lines,
    NonBlank,
    Problem,
    SeedId,
    Strict,
    Strings,
    declared_ids,
    duplicates,
    fail,
    length,
    non_blank_items,
    quote,
    raise_problems,
    unbalanced_bracket,
)
from threadcase.case.checks import (
    AgentSkillContains,
    Checks,
    CompiledRule,
    NodeCredentialCheck,
    NodeParameterCheck,
    ScopedText,
    ToolArgumentCheck,
    TranscriptRule,
    seed_reference_problems,
)
from threadcase.case.credential_templates import SUPPORTED_CREDENTIAL_TYPES
from threadcase.case.directives import UNDERSTOOD_SUMMARY, Credential, RunWorkflow
from threadcase.case.notes import script_turn
from threadcase.case.seed import (
    Column,
    Columns,
    InlineSeed,
    PriorRun,
    ReplaySeed,
    SeedAgent,
    SeedDataTable,
    SeedFolder,
    SeedProject,
    SeedWorkflow,
    build_result_problems,
)

__all__ = [
    "FORBIDDEN_KEYS",
    "GATED_DATASETS",
    "REPLAY_FORBIDDEN_DATASETS",
    "RULES_ERROR_TYPE",
    "AgentSkillContains",
    "Attach",
    "Case",
    "CaseMode",
    "Checks",
    "Column",
    "CompiledRule",
    "ConversationTurn",
    "CredentialDecl",
    "ExecutionScenario",
    "InlineSeed",
    "NodeCredentialCheck",
    "NodeParameterCheck",
    "PriorRun",
    "ReplaySeed",
    "ScenarioTable",
    "ScopedText",
    "SeedAgent",
    "SeedDataTable",
    "SeedFolder",
    "SeedProject",
    "SeedWorkflow",
    "ToolArgumentCheck",
    "TranscriptRule",
    "case_problems",
    "case_warnings",
]

CaseMode = Literal["single-prompt", "multi-turn"]

_SEEDING_MIGRATION = "no longer supported — use the single `seed` slot with `mode` ('inline' or 'replay')"
FORBIDDEN_KEYS: dict[str, str] = {
    "buildExpectations": (
        "no longer supported — split it into processExpectations (how the agent converses) and "
        "outcomeExpectations (what it built)"
    ),
    "seedFile": _SEEDING_MIGRATION,
    "conversationSeed": _SEEDING_MIGRATION,
    "priorConversation": _SEEDING_MIGRATION,
    "seedThread": _SEEDING_MIGRATION,
    "expectedArtifacts": _SEEDING_MIGRATION,
    "artifactExpectations": _SEEDING_MIGRATION,
}
"""Retired top-level keys of older case formats and the migration each one needs."""


# A replay case depends on a trace that expires (~14 days) and may hold personal data, so it must
# never sit in the tiers CI and nightly runs select.
REPLAY_FORBIDDEN_DATASETS = ("full", "pr")

GATED_DATASETS = ("pr", "agents", "mcp-gate")
"""Tiers that gate a merge or a release, as n8n's CI lanes select them (the PR gate, the agents suite,
the MCP gate). A case in one of them must finish on its own: nothing may wait on a browser, so a
director note that scripts automatic credential setup (sent, but inert without a browser: the run
stalls until a budget ends it) is a load error there, and allowed in any other tier."""


class Attach(Strict):
    """A hand-off on the opening turn: the workflow or agent the user opened the assistant on."""

    workflow: str | None = None
    """Id of a workflow the inline seed declares; the harness swaps in the per-run id."""
    source: Literal["setup-panel-execute"] | None = None
    """How the workflow was handed over: ``setup-panel-execute`` = the user clicked Execute in the setup panel."""
    agent: str | None = None
    """Id of an agent the inline seed declares (instead of ``workflow``)."""

    @model_validator(mode="after")
    def _one_target(self) -> Attach:
        if (self.workflow is None) == (self.agent is None):
            raise fail('attach names exactly one target: {"workflow": id} or {"agent": id}')
        if self.source is not None and self.workflow is None:
            raise fail('attach.source applies only to {"workflow": id}')
        return self


class ConversationTurn(Strict):
    """One authored turn: user turns drive the conversation; assistant turns are reference for the proxy."""

    role: Literal["user", "assistant"]
    """Who speaks. Assistant turns are never sent to the agent; they tell the simulated user the expected flow."""
    text: Lines
    """A string, or a list of lines joined with newlines on load. ``[bracketed]`` text is a director note."""
    attach: Attach | None = None
    """Only on ``conversation[0]`` of a user turn: the workflow or agent the user opened the assistant on."""

    @field_validator("text")
    @classmethod
    def _balanced(cls, value: str) -> str:
        if unbalanced_bracket(value):
            raise fail(f"{quote(value)} has a '[' without its ']' (unbalanced director note)")
        return value


class ScenarioTable(Strict):
    """A data table a scenario needs: created empty before the build, rows seeded just before the scenario runs."""

    id: SeedId
    """Table id, 8–64 characters."""
    name: Annotated[str, AfterValidator(length(1, 128))]
    """Table name, 1–128 characters (the harness makes it unique per run)."""
    columns: Columns
    """At most 50 typed columns."""
    rows: list[dict[str, Any]] = Field(default_factory=list, max_length=1000)
    """At most 1000 rows; each key a declared column, each value a string, number, boolean or null."""

    @model_validator(mode="after")
    def _rows_match_columns(self) -> ScenarioTable:
        declared = {c.name for c in self.columns}
        for index, row in enumerate(self.rows):
            if not declared.issuperset(row):
                unknown = sorted(set(row) - declared)
                raise fail(
                    f"rows[{index}] has undeclared column(s) {', '.join(repr(u) for u in unknown)} "
                    f"(declared: {', '.join(repr(d) for d in sorted(declared))})"
                )
            for key, value in row.items():
                # Parsed JSON holds only scalars, lists and objects; only the last two are not a cell.
                if isinstance(value, list | dict):
                    raise fail(f"rows[{index}].{key} is {quote(value)}; a cell is a string, number, boolean or null")
        return self


class ExecutionScenario(Strict):
    """A mocked execution of the built workflow, graded by a verifier against ``successCriteria``."""

    name: NonBlank
    """Scenario name, unique in the case (it keys the unit across runs)."""
    description: str
    """What the scenario exercises, for people."""
    data_setup: str
    """Hints for the mock: what the outbound calls should return (sent as ``scenarioHints``)."""
    success_criteria: NonBlank
    """The one criterion the verifier checks against the execution trace."""
    requires: str | None = None
    """A precondition, free text (e.g. a credential or a prior build) the verifier is told about."""
    seed_data_tables: list[ScenarioTable] = Field(default_factory=list, max_length=20)
    """At most 20 tables created empty before the build and seeded with ``rows`` before this scenario."""


class CredentialDecl(Strict):
    """A credential created for real before the run; the thread's credential view is pinned to the declared set."""

    type: str
    """One of the supported credential types (``threadcase.credentials.SUPPORTED_CREDENTIAL_TYPES``)."""
    name: NonBlank | None = None
    """Display name; defaults to the template's name (duplicates get ``#2``, ``#3``)."""
    valid: bool = True
    """False = pre-broken: left off the bypass list so its connection test fails for real."""
    blank: bool = False
    """True = created with empty data (and off the bypass list)."""
    description: str | None = None
    """Metadata outside the secret data; trimmed, blank means absent, at most 256 characters."""

    @field_validator("type")
    @classmethod
    def _supported(cls, value: str) -> str:
        if value not in SUPPORTED_CREDENTIAL_TYPES:
            supported = ", ".join(sorted(SUPPORTED_CREDENTIAL_TYPES))
            raise fail(
                f"{value!r} is not a supported credential type (supported: {supported}); to add one, add a "
                "CredentialTemplate in threadcase/case/credential_templates.py"
            )
        return value

    @field_validator("description")
    @classmethod
    def _trimmed(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if len(value) > 256:
            raise fail(f"{quote(value)} has {len(value)} characters; at most 256 are allowed")
        return value


class Case(Strict):
    """One case file: an opening message (and director script), optional seed, and what to grade."""

    description: str | None = None
    """What the case tests, for people."""
    conversation: list[ConversationTurn] = Field(default_factory=list)
    """The authored turns; ``conversation[0]`` is sent raw. Required unless the seed is a replay."""
    complexity: Literal["simple", "medium", "complex"]
    """How hard the build is: 'simple', 'medium' or 'complex' (complex gets 1.5x the per-turn budget)."""
    tags: list[str]
    """Free-form labels; ``--tag`` selects on them."""
    trigger_type: Literal["manual", "webhook", "schedule", "form"] | None = None
    """The trigger the built workflow should start from: 'manual', 'webhook', 'schedule' or 'form'."""
    execution_scenarios: list[ExecutionScenario] = Field(default_factory=list)
    """Mocked executions of the built workflow, each one graded unit."""
    message_budget: int | None = Field(default=None, gt=0)
    """Cap on follow-up messages the simulated user sends (the opening is not counted; default 5)."""
    process_expectations: Strings = Field(default_factory=list)
    """Statements about how the agent conversed, judged on the transcript; each one graded unit."""
    outcome_expectations: Strings = Field(default_factory=list)
    """Statements about what the agent built, judged on the artifacts; each one graded unit."""
    credentials: list[CredentialDecl] = Field(default_factory=list)
    """Credentials to create and pin as the thread's whole credential view ([] = the agent sees none)."""
    credential_fixture: NonBlank | None = None
    """Opt into a credential-setup browser lane by fixture id (e.g. 'anthropic', 'local')."""
    seed: InlineSeed | ReplaySeed | None = Field(default=None, discriminator="mode")
    """Prior history to stand up before the live turn: ``mode`` 'inline' (authored) or 'replay' (a trace)."""
    datasets: Annotated[list[str], Field(min_length=1), AfterValidator(non_blank_items)] = Field(
        default_factory=lambda: ["full"]
    )
    """Tiers the case belongs to (default ["full"]); ``--tier`` selects on them."""
    requires_memory_compaction: bool = False
    """Send a low observer threshold so the thread compacts; expectations are not judged if it did not."""
    build_mode: Literal["progressive", "default"] | None = None
    """The agent's build mode: 'progressive' (the product default when absent) or 'default'."""
    prompt_version: NonBlank | None = None
    """Pin the agent's prompt version."""
    allow_user_execution: bool = False
    """Let the simulated user run a saved workflow for real (credential-free manual or schedule only)."""
    checks: Checks | None = None
    """threadcase's deterministic checks."""

    @model_validator(mode="before")
    @classmethod
    def _retired_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            raise_problems([(key, f"{key!r} is {FORBIDDEN_KEYS[key]}") for key in data if key in FORBIDDEN_KEYS])
        return data

    @model_validator(mode="after")
    def _rules(self) -> Case:
        raise_problems(case_problems(self))
        return self

    @property
    def inline_seed(self) -> InlineSeed | None:
        """The seed when it is inline, else None."""
        return self.seed if isinstance(self.seed, InlineSeed) else None

    @property
    def replay(self) -> ReplaySeed | None:
        """The seed when it is a replay, else None."""
        return self.seed if isinstance(self.seed, ReplaySeed) else None

    @property
    def mode(self) -> CaseMode:
        """``single-prompt`` (exactly one user turn, no assistant turn: auto-approve) or ``multi-turn`` (proxy).

        A replay's live user message counts as one user turn ahead of the authored ones.
        """
        users = sum(turn.role == "user" for turn in self.conversation) + (1 if self.replay else 0)
        assistants = sum(turn.role == "assistant" for turn in self.conversation)
        return "single-prompt" if users == 1 and assistants == 0 else "multi-turn"

    @property
    def seed_mode(self) -> Literal["inline", "replay"] | None:
        """The seed's mode, or None without a seed."""
        return None if self.seed is None else self.seed.mode

    @property
    def unit_count(self) -> int:
        """Graded units: execution scenarios + process and outcome expectations + deterministic checks."""
        checks = self.checks.unit_count if self.checks else 0
        return len(self.execution_scenarios) + len(self.process_expectations) + len(self.outcome_expectations) + checks


# --- cross-field rules ---------------------------------------------------------------------------


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
                        f"{skill_id!r} is not a skill id of any seed agent ({declared_ids(declared)}){needs}; "
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


def _auto_setup_problems(case: Case) -> list[Problem]:
    """A note scripting automatic credential setup in a gated tier (see :data:`GATED_DATASETS`).

    The notes are read by the scripted user's own grammar, so this rule fires exactly when it would
    choose ``auto`` — never on a note it reads differently.
    """
    gated = [d for d in case.datasets if d in GATED_DATASETS]
    if not gated:
        return []
    problems: list[Problem] = []
    tiers = ", ".join(repr(d) for d in gated)
    for index, turn in enumerate(case.conversation):
        if turn.role != "user" or "[" not in turn.text:
            continue
        read = script_turn(index, "user", turn.text)
        auto = next(
            (
                d.clause
                for d in read.directives
                if isinstance(d, Credential) and d.action == "engage" and d.option == "auto"
            ),
            None,
        )
        if auto is not None:
            problems.append(
                (
                    f"conversation[{index}].text",
                    f"a note scripts automatic credential setup ({quote(auto, 80)}), which stalls without a "
                    f"browser; keep this case out of gated tiers (datasets: {tiers})",
                )
            )
    return problems


def case_problems(case: Case) -> list[Problem]:
    """Every cross-field rule of a case; paths relative to the case file's root."""
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
                            f"{attach.workflow!r} is not declared in seed.workflows ({declared_ids(declared)})"
                            + ("" if inline else "; attach needs an inline seed that declares it"),
                        )
                    )
            if attach.agent is not None:
                declared = [a.id for a in inline.agents] if inline else []
                if attach.agent not in declared:
                    problems.append(
                        (
                            f"{where}.attach.agent",
                            f"{attach.agent!r} is not declared in seed.agents ({declared_ids(declared)})"
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
    problems += duplicates([s.name for s in case.execution_scenarios], "scenario name", "executionScenarios")
    problems += _agent_check_problems(case, inline)
    if case.checks is not None:
        problems += seed_reference_problems(case.checks, [(w.id, w.name) for w in inline.workflows] if inline else [])
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


# --- warnings: a case that loads, but may not test what its author meant ----------------------------


def _noted(note: str, limit: int = 100) -> str:
    one_line = " ".join(note.split())
    return f'"{one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"}"'


def case_warnings(case: Case) -> list[Problem]:
    """Director-note warnings (``threadcase validate`` prints them; they never stop a run).

    - a note in ``conversation[0]``: n8n sends the opening turn to the builder as written, and so does
      threadcase, so the note reaches the agent;
    - a note (or part of one) the scripted user cannot follow: in a run with the scripted user the
      case is then *not judged*;
    - a note asking the user to run the workflow in a case without ``allowUserExecution``.
    """
    warnings: list[Problem] = []
    opening_is_live = not isinstance(case.seed, ReplaySeed)
    for index, turn in enumerate(case.conversation):
        if turn.role != "user" or "[" not in turn.text:
            continue
        read = script_turn(index, "user", turn.text)
        where = f"conversation[{index}].text"
        if index == 0 and opening_is_live and read.notes:
            for note in read.notes:
                warnings.append(
                    (
                        where,
                        f"note {_noted(note)} is in the opening turn, which is sent to the builder as written "
                        "(as n8n does): the agent reads it; move it to conversation[1]",
                    )
                )
        for note, part in read.not_understood:
            reading = next((r for r in read.readings if r.note == note), None)
            understood = "; ".join(d.describe() for d in reading.directives) if reading is not None else ""
            also = f"; of this note it follows: {understood}" if understood else ""
            warnings.append(
                (
                    where,
                    f"the scripted user cannot follow note {_noted(note)}: {part}{also} — a scripted run "
                    f"reports this case not judged. It understands: {UNDERSTOOD_SUMMARY}",
                )
            )
        if not case.allow_user_execution and any(isinstance(d, RunWorkflow) for d in read.directives):
            warnings.append(
                (
                    where,
                    "a note asks the user to run the workflow, but the case does not set allowUserExecution: "
                    'the run never happens (set "allowUserExecution": true)',
                )
            )
    return warnings
