"""The Case model: every field of a case file, every load-time rule.

A case file is one JSON object in n8n's Instance AI evaluation format (camelCase keys), so a case
written for n8n's harness loads here unchanged; threadcase's own additions live under ``checks``.
Attributes are snake_case, the file format is camelCase via aliases: ``case.message_budget`` is
``messageBudget`` on disk.

Every rule is enforced when the model is validated, so nothing slow or paid ever starts on a broken
case. Field-level rules live on the fields; cross-field rules are collected (all of them, not the first)
by :mod:`threadcase.harness._case_rules` and raised as one pydantic error of type
:data:`RULES_ERROR_TYPE` whose context carries every ``(path, message)`` pair; the loader turns those
into one :class:`~threadcase.harness.errors.CaseProblem` each.

Use :func:`threadcase.harness.loader.load_case_file` to read a file; it validates with aliases only,
so a snake_case key in a file is refused like any other unknown key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from threadcase.credentials.templates import SUPPORTED_CREDENTIAL_TYPES
from threadcase.harness import _case_rules as rules

__all__ = [
    "FORBIDDEN_KEYS",
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
    "NodeParameterCheck",
    "PriorRun",
    "ReplaySeed",
    "ScenarioTable",
    "SeedAgent",
    "SeedDataTable",
    "SeedFolder",
    "SeedProject",
    "SeedWorkflow",
    "TranscriptRule",
]

CaseMode = Literal["single-prompt", "multi-turn"]

RULES_ERROR_TYPE = "threadcase_rules"
"""The pydantic error type of a cross-field rule failure; ``ctx["problems"]`` holds ``(path, message)`` pairs."""

VALUE_ERROR_TYPE = "threadcase_value"
"""The pydantic error type of a field-level rule failure; the message already quotes the value."""

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


def _fail(message: str) -> PydanticCustomError:
    # The message goes through ctx so braces in a quoted value are never read as a template.
    return PydanticCustomError(VALUE_ERROR_TYPE, "{message}", {"message": message})


def _raise_problems(problems: list[rules.Problem]) -> None:
    if problems:
        summary = "; ".join(f"{path}: {message}" if path else message for path, message in problems)
        raise PydanticCustomError(RULES_ERROR_TYPE, "{summary}", {"summary": summary, "problems": problems})


def _q(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _non_blank(value: str) -> str:
    if not value.strip():
        raise _fail(f"{value!r} is blank; write some text")
    return value


def _length(low: int, high: int, why: str = "") -> Callable[[str], str]:
    def check(value: str) -> str:
        if not low <= len(value) <= high:
            raise _fail(f"{_q(value)} has {len(value)} characters; it needs {low}–{high}{why}")
        return value

    return check


def _join_lines(value: Any) -> Any:
    """``text`` may be authored as a list of lines so a long director note stays readable in JSON."""
    if isinstance(value, list):
        if all(isinstance(line, str) for line in value):
            return "\n".join(value)
        raise _fail(f"{_q(value)} is not a string or a list of strings")
    if not isinstance(value, str):
        raise _fail(f"{_q(value)} is not a string or a list of strings")
    return value


def _seed_message(value: Any) -> Any:
    problem = rules.seed_message_problem(value)
    if problem is not None:
        raise _fail(problem)
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
SeedId = Annotated[str, AfterValidator(_length(8, 64, " (ids shorter than 8 are too short to remap safely)"))]
Lines = Annotated[
    str,
    BeforeValidator(_join_lines),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
]
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


class _Strict(BaseModel):
    # strict: a case file says what it means ("5" is not a budget, "true" is not a boolean).
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        use_attribute_docstrings=True,
        strict=True,
    )


class Attach(_Strict):
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
            raise _fail('attach names exactly one target: {"workflow": id} or {"agent": id}')
        if self.source is not None and self.workflow is None:
            raise _fail('attach.source applies only to {"workflow": id}')
        return self


class ConversationTurn(_Strict):
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
        if rules.unbalanced_bracket(value):
            raise _fail(f"{_q(value)} has a '[' without its ']' (unbalanced director note)")
        return value


class Column(_Strict):
    """A data table column."""

    name: NonBlank
    """Column name."""
    type: Literal["string", "number", "boolean", "date"]
    """Column type."""


def _unique_columns(columns: list[Column]) -> list[Column]:
    names = [c.name for c in columns]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise _fail(f"duplicate column name(s) {', '.join(repr(d) for d in dupes)}")
    return columns


Columns = Annotated[list[Column], Field(max_length=50), AfterValidator(_unique_columns)]


class ScenarioTable(_Strict):
    """A data table a scenario needs: created empty before the build, rows seeded just before the scenario runs."""

    id: SeedId
    """Table id, 8–64 characters."""
    name: Annotated[str, AfterValidator(_length(1, 128))]
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
                raise _fail(
                    f"rows[{index}] has undeclared column(s) {', '.join(repr(u) for u in unknown)} "
                    f"(declared: {', '.join(repr(d) for d in sorted(declared))})"
                )
            for key, value in row.items():
                # Parsed JSON holds only scalars, lists and objects; only the last two are not a cell.
                if isinstance(value, list | dict):
                    raise _fail(f"rows[{index}].{key} is {_q(value)}; a cell is a string, number, boolean or null")
        return self


class ExecutionScenario(_Strict):
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


class CredentialDecl(_Strict):
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
            raise _fail(
                f"{value!r} is not a supported credential type (supported: {supported}); to add one, add a "
                "CredentialTemplate in threadcase/credentials/templates.py"
            )
        return value

    @field_validator("description")
    @classmethod
    def _trimmed(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if len(value) > 256:
            raise _fail(f"{_q(value)} has {len(value)} characters; at most 256 are allowed")
        return value


class SeedWorkflow(_Strict):
    """A workflow the seeded history built, created on the instance before the live turn."""

    id: SeedId
    """Id the seeded messages refer to (8–64 characters); remapped to a fresh id per run."""
    name: Annotated[str, AfterValidator(_length(1, 255))]
    """Name, unique in the seed; a per-run ``[seed xxxxxxxx]`` suffix is added on restore."""
    nodes: list[dict[str, Any]] = Field(max_length=500)
    """n8n nodes, as the workflow JSON has them (at most 500)."""
    connections: dict[str, Any]
    """n8n connections, as the workflow JSON has them."""
    published: bool = False
    """Publish (activate) the workflow after restore."""
    parent_folder_id: str | None = None
    """Id of a seed folder the workflow sits in."""


class SeedDataTable(_Strict):
    """A data table the seeded history built: schema only, rows are never seeded from a case's seed."""

    id: SeedId
    """Table id, 8–64 characters."""
    name: Annotated[str, AfterValidator(_length(1, 128))]
    """Table name, 1–128 characters."""
    columns: Columns
    """At most 50 typed columns."""


class SeedFolder(_Strict):
    """A folder in the thread's project; names are verbatim, so use a name no real project would."""

    id: SeedId
    """Folder id, 8–64 characters, unique."""
    name: str
    """Folder name: trimmed, without ``/`` (it separates nested folders in a folderPath)."""
    parent_folder_id: str | None = None
    """Id of another seed folder to nest this one in (no cycles)."""


class SeedAgent(_Strict):
    """An n8n Agent artifact: the shapes ``GET …/agents/v2/:id/config`` and ``…/skills`` return."""

    id: SeedId
    """Agent id, 8–64 characters; shares one id space with seed workflows."""
    config: dict[str, Any]
    """The agent config (name, model, instructions, ``skills[{type, id}]``, tools, subAgents)."""
    skills: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Skill bodies by id; every ``config.skills[].id`` needs one."""


class SeedProject(_Strict):
    """A team project that must exist before the live turn (created with its verbatim name)."""

    name: Annotated[str, AfterValidator(_length(1, 255))]
    """Project name: already trimmed, unique in the seed."""


class PriorRun(_Strict):
    """A mocked execution of a seed workflow staged before the live turn (so the agent sees its result)."""

    workflow: str
    """Id of a seed workflow."""
    hints: Annotated[str, AfterValidator(_length(1, 2000))] | None = None
    """Steers the mock for the staged run's outbound calls (1–2000 characters)."""


class InlineSeed(_Strict):
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
        _raise_problems(rules.inline_seed_problems(self))
        return self


class ReplaySeed(_Strict):
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

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise _fail(f"{value!r} is not an http(s) URL, e.g. 'https://api.smith.langchain.com'")
        return value


class CompiledRule(NamedTuple):
    """The three compiled patterns of a :class:`TranscriptRule` (matched with ``search``)."""

    risk: re.Pattern[str]
    clear: re.Pattern[str]
    violation: re.Pattern[str]


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise _fail(f"{value!r} is not a valid regular expression: {exc}") from None
    return value


Regex = Annotated[str, AfterValidator(_non_blank), AfterValidator(_regex)]


class TranscriptRule(_Strict):
    """A one-bit state machine over the whole transcript (Python ``re`` syntax, ``search`` semantics).

    A user turn matching ``risk`` sets the bit, an agent turn matching ``clear`` resets it, and an agent
    turn matching ``violation`` while the bit is set fails the rule at that turn. Case-sensitive unless
    the pattern says ``(?i)``.
    """

    name: NonBlank
    """Rule name, unique among the case's transcript rules."""
    risk: Regex
    """Pattern on user turns that puts the rule at risk (e.g. pressure to drop a safeguard)."""
    clear: Regex
    """Pattern on agent turns that clears the risk (e.g. the agent holds the line)."""
    violation: Regex
    """Pattern on agent turns that is a violation while at risk (e.g. the agent caves)."""

    _compiled: CompiledRule | None = PrivateAttr(default=None)

    def compiled(self) -> CompiledRule:
        """The compiled patterns, compiled once per rule and cached."""
        if self._compiled is None:
            self._compiled = CompiledRule(re.compile(self.risk), re.compile(self.clear), re.compile(self.violation))
        return self._compiled

    @property
    def risk_pattern(self) -> re.Pattern[str]:
        """``risk``, compiled."""
        return self.compiled().risk

    @property
    def clear_pattern(self) -> re.Pattern[str]:
        """``clear``, compiled."""
        return self.compiled().clear

    @property
    def violation_pattern(self) -> re.Pattern[str]:
        """``violation``, compiled."""
        return self.compiled().violation

    @model_validator(mode="after")
    def _compile(self) -> TranscriptRule:
        self.compiled()
        return self


class NodeParameterCheck(_Strict):
    """A parameter of a built node must equal a value."""

    node: NonBlank
    """The node's name, or its type (``n8n-nodes-base.slack``): the first built node that matches."""
    path: NonBlank
    """A dotted path inside the node's ``parameters`` (``channel`` or ``options.retry.count``)."""
    equals: Any
    """The expected value (compared after JSON decoding)."""


def _non_blank_items(values: list[str]) -> list[str]:
    for index, value in enumerate(values):
        if not value.strip():
            raise _fail(f"entry [{index}] {value!r} is blank")
    return values


Strings = Annotated[list[str], AfterValidator(_non_blank_items)]


class AgentSkillContains(_Strict):
    """A skill of the final agent must contain a text (what a change request asked for)."""

    skill: NonBlank
    """The skill's id, or its name (compared ignoring case)."""
    contains: NonBlank
    """A case-sensitive substring of the skill body's text fields (name, description, instructions, ...)."""


class Checks(_Strict):
    """threadcase's deterministic checks (the only key that is not n8n's); each entry is one graded unit.

    The ``agent*`` checks read the agents as they are after the conversation. The *final agent* is the seed
    agent the opening turn attaches, else the agent the last successful ``build-agent`` saved, else the last
    agent the conversation read; with no agent read back, those checks are not judged.
    """

    must_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings that must appear in the agent's live messages joined with a space."""
    must_not_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings that must not appear in the agent's live messages."""
    must_end_with_question: bool | None = None
    """True: the final agent message ends with ``?`` (trailing whitespace and emoji ignored); false: it does not."""
    max_lines: int | None = Field(default=None, gt=0)
    """No single agent message has more lines than this."""
    review: Strings = Field(default_factory=list)
    """Criteria printed next to the reply for a person; reported as reviewed, never counted as passed."""
    transcript_rules: list[TranscriptRule] = Field(default_factory=list)
    """State-machine rules graded on the sequence of turns, never on one message."""
    node_types_present: Strings = Field(default_factory=list)
    """Node types the built workflows must contain (``n8n-nodes-base.slack``)."""
    node_types_absent: Strings = Field(default_factory=list)
    """Node types the built workflows must not contain."""
    node_parameters: list[NodeParameterCheck] = Field(default_factory=list)
    """Parameter values the built nodes must have."""
    tools_called: Strings = Field(default_factory=list)
    """Tools the agent must have called during the live conversation."""
    tools_not_called: Strings = Field(default_factory=list)
    """Tools the agent must not have called."""
    max_clarifying_questions: int | None = Field(default=None, ge=0)
    """At most this many clarifying questions asked of the user across the conversation."""
    no_repeated_questions: bool = False
    """True: no question is asked twice (an answered or skipped question is never re-asked)."""
    agent_skills_unchanged: Strings = Field(default_factory=list)
    """Skill ids of a seeded agent (declared in ``seed.agents[].skills``) whose bodies must be identical after
    the conversation, field for field, and still listed in the agent's ``config.skills``."""
    agent_skills_changed: Strings = Field(default_factory=list)
    """Skill ids of a seeded agent (declared in ``seed.agents[].skills``) whose bodies must differ from the seed
    after the conversation (edited in place, not removed)."""
    agent_skills_present: Strings = Field(default_factory=list)
    """Skill ids or names (names compared ignoring case) the final agent must have."""
    agent_skills_absent: Strings = Field(default_factory=list)
    """Skill ids or names (names compared ignoring case) the final agent must not have."""
    agent_instructions_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings of the final agent's ``config.instructions``."""
    agent_skill_contains: list[AgentSkillContains] = Field(default_factory=list)
    """Texts a named skill of the final agent must contain (a change applied as asked)."""

    @field_validator("transcript_rules")
    @classmethod
    def _unique_rule_names(cls, value: list[TranscriptRule]) -> list[TranscriptRule]:
        names = [rule.name for rule in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise _fail(f"duplicate transcript rule name(s) {', '.join(repr(d) for d in dupes)}")
        return value

    def unit_keys(self) -> list[str]:
        """One stable id per graded unit (the ids the deterministic grader reports: ``check:mustContain#0``)."""
        keys = [f"check:mustContain#{i}" for i in range(len(self.must_contain))]
        keys += [f"check:mustNotContain#{i}" for i in range(len(self.must_not_contain))]
        keys += ["check:mustEndWithQuestion"] if self.must_end_with_question is not None else []
        keys += ["check:maxLines"] if self.max_lines is not None else []
        keys += [f"check:transcriptRules:{rule.name}" for rule in self.transcript_rules]
        keys += [f"check:nodeTypesPresent#{i}" for i in range(len(self.node_types_present))]
        keys += [f"check:nodeTypesAbsent#{i}" for i in range(len(self.node_types_absent))]
        keys += [f"check:nodeParameters#{i}" for i in range(len(self.node_parameters))]
        keys += [f"check:toolsCalled#{i}" for i in range(len(self.tools_called))]
        keys += [f"check:toolsNotCalled#{i}" for i in range(len(self.tools_not_called))]
        keys += [f"check:agentSkillsUnchanged#{i}" for i in range(len(self.agent_skills_unchanged))]
        keys += [f"check:agentSkillsChanged#{i}" for i in range(len(self.agent_skills_changed))]
        keys += [f"check:agentSkillsPresent#{i}" for i in range(len(self.agent_skills_present))]
        keys += [f"check:agentSkillsAbsent#{i}" for i in range(len(self.agent_skills_absent))]
        keys += [f"check:agentInstructionsContain#{i}" for i in range(len(self.agent_instructions_contain))]
        keys += [f"check:agentSkillContains#{i}" for i in range(len(self.agent_skill_contains))]
        keys += ["check:maxClarifyingQuestions"] if self.max_clarifying_questions is not None else []
        keys += ["check:noRepeatedQuestions"] if self.no_repeated_questions else []
        keys += [f"review#{i}" for i in range(len(self.review))]
        return keys

    @property
    def unit_count(self) -> int:
        """How many graded units these checks contribute."""
        return len(self.unit_keys())


class Case(_Strict):
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
    datasets: Annotated[list[str], Field(min_length=1), AfterValidator(_non_blank_items)] = Field(
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
            _raise_problems([(key, f"{key!r} is {FORBIDDEN_KEYS[key]}") for key in data if key in FORBIDDEN_KEYS])
        return data

    @model_validator(mode="after")
    def _rules(self) -> Case:
        _raise_problems(rules.case_problems(self))
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
