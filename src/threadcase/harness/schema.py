"""The Case model: every field of a case file, every load-time rule.

SKELETON (fields and names are the contract other modules import; the load-time rules are being
added by the schema issue). Attributes are snake_case; the file format is camelCase (n8n's), via
aliases: ``case.message_budget`` is ``messageBudget`` on disk.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, use_attribute_docstrings=True
    )


class Attach(_Strict):
    """A hand-off on the opening turn: the workflow or agent the user opened the assistant on."""

    workflow: str | None = None
    source: Literal["setup-panel-execute"] | None = None
    agent: str | None = None


class ConversationTurn(_Strict):
    role: Literal["user", "assistant"]
    text: str
    """A string, or a list of lines joined with newlines on load."""
    attach: Attach | None = None


class Column(_Strict):
    name: str
    type: Literal["string", "number", "boolean", "date"]


class ScenarioTable(_Strict):
    id: str
    name: str
    columns: list[Column]
    rows: list[dict[str, str | int | float | bool | None]] = Field(default_factory=list)


class ExecutionScenario(_Strict):
    name: str
    description: str = ""
    data_setup: str = ""
    success_criteria: str = ""
    requires: str | None = None
    seed_data_tables: list[ScenarioTable] = Field(default_factory=list)


class CredentialDecl(_Strict):
    type: str
    name: str | None = None
    valid: bool = True
    blank: bool = False
    description: str | None = None


class SeedWorkflow(_Strict):
    id: str
    name: str
    nodes: list[dict[str, Any]]
    connections: dict[str, Any]
    published: bool = False
    parent_folder_id: str | None = None


class SeedDataTable(_Strict):
    id: str
    name: str
    columns: list[Column]


class SeedFolder(_Strict):
    id: str
    name: str
    parent_folder_id: str | None = None


class SeedAgent(_Strict):
    id: str
    config: dict[str, Any]
    skills: dict[str, dict[str, Any]] = Field(default_factory=dict)


class SeedProject(_Strict):
    name: str


class PriorRun(_Strict):
    workflow: str
    hints: str | None = None


class InlineSeed(_Strict):
    mode: Literal["inline"]
    source: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """Expanded full envelopes (shorthand ``{role, text}`` is expanded at load)."""
    workflows: list[SeedWorkflow] = Field(default_factory=list)
    data_tables: list[SeedDataTable] = Field(default_factory=list)
    folders: list[SeedFolder] = Field(default_factory=list)
    agents: list[SeedAgent] = Field(default_factory=list)
    projects: list[SeedProject] = Field(default_factory=list)
    prior_runs: list[PriorRun] = Field(default_factory=list)


class ReplaySeed(_Strict):
    mode: Literal["replay"]
    thread_id: str
    project: str | None = None
    endpoint: str | None = None
    live_turn_run_id: str | None = None


class TranscriptRule(_Strict):
    name: str
    risk: str
    clear: str
    violation: str


class NodeParameterCheck(_Strict):
    """A parameter of a built node must equal a value."""

    node: str
    """The node's name, or its type (``n8n-nodes-base.slack``): the first built node that matches."""
    path: str
    """A dotted path inside the node's ``parameters`` (``channel`` or ``options.retry.count``)."""
    equals: Any


class Checks(_Strict):
    """threadcase's deterministic checks (the only key that is not n8n's)."""

    must_contain: list[str] = Field(default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)
    must_end_with_question: bool | None = None
    max_lines: int | None = None
    review: list[str] = Field(default_factory=list)
    transcript_rules: list[TranscriptRule] = Field(default_factory=list)
    node_types_present: list[str] = Field(default_factory=list)
    node_types_absent: list[str] = Field(default_factory=list)
    node_parameters: list[NodeParameterCheck] = Field(default_factory=list)
    tools_called: list[str] = Field(default_factory=list)
    tools_not_called: list[str] = Field(default_factory=list)
    max_clarifying_questions: int | None = None
    no_repeated_questions: bool = False


class Case(_Strict):
    description: str | None = None
    conversation: list[ConversationTurn] = Field(default_factory=list)
    complexity: Literal["simple", "medium", "complex"]
    tags: list[str]
    trigger_type: Literal["manual", "webhook", "schedule", "form"] | None = None
    execution_scenarios: list[ExecutionScenario] = Field(default_factory=list)
    message_budget: int | None = None
    process_expectations: list[str] = Field(default_factory=list)
    outcome_expectations: list[str] = Field(default_factory=list)
    credentials: list[CredentialDecl] = Field(default_factory=list)
    credential_fixture: str | None = None
    seed: InlineSeed | ReplaySeed | None = Field(default=None, discriminator="mode")
    datasets: list[str] = Field(default_factory=lambda: ["full"])
    requires_memory_compaction: bool = False
    build_mode: Literal["progressive", "default"] | None = None
    prompt_version: str | None = None
    allow_user_execution: bool = False
    checks: Checks | None = None
