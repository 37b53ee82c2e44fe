"""The evidence of one run: turns, tool calls, widgets, tokens, artifacts, memory.

The conversation loop (``harness.conversation``) produces a :class:`RunRecord`; grading reads it;
reports render it; the journal stores it. Rendering it as text for the judge and for people is
:mod:`threadcase.render`, which imports this module (never the reverse).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.wire import ExecutionResult, ThreadMemory, TokenUsage, Workflow

__all__ = [
    "BUILD_FAILED_TIMEOUT",
    "TIMEOUT_ENDINGS",
    "AgentArtifact",
    "Artifacts",
    "DirectiveDelivery",
    "EndReason",
    "PriorRunOutcome",
    "RunPrompt",
    "RunRecord",
    "ScriptDelivery",
    "ScriptTurnDelivery",
    "SeedOutcome",
    "SeededAgent",
    "SeededWorkflow",
    "StoredExecution",
    "ToolCallRecord",
    "Turn",
    "UserPlayer",
    "UserValue",
    "ValueSource",
    "WidgetRecord",
    "created_ids",
    "is_read_only_tool",
    "utc_now",
]


BUILD_FAILED_TIMEOUT = "BUILD FAILED: Run timed out with no scored result"
"""The warning a run records when its turn budget ran out before any scored result (n8n's wording)."""


def utc_now() -> datetime:
    """The current time, UTC, explicit (never naive)."""
    return datetime.now(UTC)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallRecord(_Record):
    """One tool call the agent made, with its result or error."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None


WidgetAnsweredBy = Literal["deterministic", "scripted", "model", "auto-approve", "repeat", "fallback"]


class WidgetRecord(_Record):
    """One confirmation-request the agent raised and the answer the simulated user gave."""

    request_id: str
    input_type: str
    request: dict[str, Any]
    """The ``confirmation-request`` payload as received."""
    answer: dict[str, Any] | None = None
    """The kind-tagged confirm body sent; None when nothing was sent."""
    answered_by: WidgetAnsweredBy | None = None
    outcome: str = "no response"
    """``answered``, ``skipped``, ``approved``, ``rejected``, ``filled``, ``deferred``, ``dismissed``,
    ``no response``: the short word reports and the transcript rendering show."""
    after_tool_calls: int | None = None
    """How many of the turn's tool calls had started when this widget appeared (its place in the turn,
    so the rendering can show "asked, then built"); None = unknown (rendered after the tool calls)."""


class Turn(_Record):
    """One user message, or everything the agent did in answer to one user message."""

    index: int
    role: Literal["user", "assistant"]
    text: str = ""
    seeded: bool = False
    """Restored from the seed, not produced live."""
    sent_by: Literal["opener", "script", "proxy", "seed", "replay"] | None = None
    """For user turns: who produced the text."""
    user_actions: list[str] = Field(default_factory=list)
    """For user turns: what the simulated user did on the instance just before sending this message,
    outside the conversation (``ran workflow 'X' (execution 7: success)``, a rename); the agent is not
    told, the judge is."""
    run_ids: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    widgets: list[WidgetRecord] = Field(default_factory=list)
    finish_status: str | None = None
    """For live assistant turns: ``completed``, ``cancelled``, ``error``, ``timeout``, ``stalled``."""
    errors: list[str] = Field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None


class AgentArtifact(_Record):
    """An agent as the conversation left it on the instance: its config and its skills by id."""

    id: str
    config: dict[str, Any] = Field(default_factory=dict)
    skills: dict[str, Any] = Field(default_factory=dict)


class Artifacts(_Record):
    """What exists on the instance at the end of the conversation, as the agent left it."""

    workflows: list[Workflow] = Field(default_factory=list)
    agents: list[AgentArtifact] = Field(default_factory=list)
    data_tables: list[dict[str, Any]] = Field(default_factory=list)


class PriorRunOutcome(_Record):
    """Whether one declared ``priorRuns`` entry of an inline seed ran (one per entry, in declared order)."""

    workflow: str
    """The seed's workflow id (not the remapped one)."""
    ran: bool
    success: bool | None = None
    error: str | None = None


class SeededWorkflow(_Record):
    """A workflow the seed restored, as it was restored and as the conversation left it.

    The evidence for "edited in place" and "left unchanged": both states are read back from the
    instance (never taken from the case file, which the restore may normalise), whether or not the
    agent ever saved the workflow.
    """

    seed_id: str
    """The id the seed declares (what a case's checks name)."""
    seed_name: str
    """The name the seed declares (the restored one carries a per-run suffix)."""
    id: str
    """The per-run id the instance holds it under."""
    restored: Workflow | None = None
    """Read back right after the restore; None when it could not be read (``restore_error`` says why)."""
    restore_error: str | None = None
    final: Workflow | None = None
    """Read back after the conversation; None when it is gone or could not be read (``final_error``)."""
    final_error: str | None = None
    deleted: bool = False
    """The workflow no longer exists after the conversation (the agent deleted it)."""


class SeededAgent(_Record):
    """An agent the seed restored, as the conversation left it (read back whether or not it was touched)."""

    seed_id: str
    id: str
    """The per-run id."""
    final: AgentArtifact | None = None
    final_error: str | None = None


class SeedOutcome(_Record):
    """How restoring the case's seed went: restored or why not, prior runs, and the seed -> per-run id map."""

    mode: Literal["none", "inline", "replay"] = "none"
    restored: bool = True
    error: str | None = None
    prior_runs: list[PriorRunOutcome] = Field(default_factory=list)
    id_map: dict[str, str] = Field(default_factory=dict)
    """Seed id -> per-run id, for workflows and agents."""
    warnings: list[str] = Field(default_factory=list)
    workflows: list[SeededWorkflow] = Field(default_factory=list)
    """Every workflow the seed restored, before and after the conversation."""
    agents: list[SeededAgent] = Field(default_factory=list)
    """Every agent the seed restored, after the conversation."""

    def seeded_workflow(self, ref: str) -> SeededWorkflow | None:
        """The restored workflow a case names by its seed id, else by its seed name (ignoring case)."""
        by_id = next((w for w in self.workflows if w.seed_id == ref), None)
        if by_id is not None:
            return by_id
        return next((w for w in self.workflows if w.seed_name.casefold() == ref.casefold()), None)


class StoredExecution(_Record):
    """One mocked execution an execution scenario ran, kept so the scenario can be verified again later.

    ``threadcase regrade`` answers the verifier from these instead of an instance.
    """

    workflow_id: str
    """The per-run id of the executed workflow."""
    scenario_hints: str | None = None
    """The hints the mock was given (the scenario's ``dataSetup``, capped as sent)."""
    result: ExecutionResult


class UserPlayer(_Record):
    """Who played the user in a run: the scripted user, a model, or nobody (single-prompt auto-approval)."""

    kind: Literal["scripted", "model", "auto-approve"]
    model: str | None = None
    """The proxy model's name, when a model played the user."""
    prompt_version: str | None = None
    """The user proxy's ``PROMPT_VERSION``, when a model played the user."""

    def describe(self) -> str:
        """One phrase for the console, the summary and the report header."""
        if self.kind == "model":
            return f"model {self.model} (prompt {self.prompt_version})"
        if self.kind == "scripted":
            return "scripted (no proxy model configured)"
        return "none (single-prompt: every widget auto-approved)"


class ScriptTurnDelivery(_Record):
    """Whether one scripted user turn reached the agent."""

    turn: int
    """Its index in the case's ``conversation``."""
    says: str = ""
    """What it says (the start of it); empty for a turn that is only notes."""
    delivered: bool
    message: int | None = None
    """The user message that delivered it (0 = the opening message, 1 = the first follow-up, ...); for
    a turn that is only notes, the message from which its notes governed."""
    why_not: str | None = None
    """Why it was not delivered: the message budget was spent, the conversation ended, ..."""


class DirectiveDelivery(_Record):
    """Whether one directive of a director note was carried out."""

    turn: int
    note: str
    """The note it was read from."""
    does: str
    """What the scripted user understood it to mean, in words."""
    required: bool
    """The case depends on it: its moment was expected ("when …"), or it acts when its turn is sent."""
    fired: bool
    message: int | None = None
    """It fired during the run answering this user message."""
    why_not: str | None = None
    """Why it never fired: the event never came, its turn was never reached, ..."""


ValueSource = Literal["note", "stated", "option", "invented", "declined"]


class UserValue(_Record):
    """A value the simulated user gave (or declined) for a question or a setup-card parameter."""

    message: int
    """During the run answering this user message."""
    request_id: str
    asked: str
    """The question, or ``<node>.<parameter>`` of a setup card."""
    value: str | None = None
    """None: declined (skipped)."""
    source: ValueSource
    """Where it came from: a note's answer, the script's own words, an offered option the script
    mentions, a plainly placeholder value the script does not state (recorded as invented), or a decline."""


class ScriptDelivery(_Record):
    """How the script was played: turns delivered, directives fired, values given, and what went wrong."""

    tracked: bool = True
    """Directives were followed and tracked (the scripted user); False when a model played the user,
    which reads the notes as text (its directives are then not listed)."""
    turns: list[ScriptTurnDelivery] = Field(default_factory=list)
    directives: list[DirectiveDelivery] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list)
    """``conversation[i]: note "…": <part> (<why>)`` for every part of a note the scripted user cannot follow."""
    values: list[UserValue] = Field(default_factory=list)
    faults: list[str] = Field(default_factory=list)
    """What the user could not do as the script says, or did against it (each makes the case not judged)."""

    @property
    def undelivered(self) -> list[ScriptTurnDelivery]:
        return [t for t in self.turns if not t.delivered]

    @property
    def unfired(self) -> list[DirectiveDelivery]:
        """Directives the case depends on that never fired."""
        return [d for d in self.directives if d.required and not d.fired]


EndReason = Literal[
    "done",
    "script-exhausted",
    "budget",
    "turn-timeout",
    "conversation-timeout",
    "stalled",
    "single-prompt",
    "error",
    "cancelled",
]


TIMEOUT_ENDINGS: frozenset[EndReason] = frozenset({"turn-timeout", "conversation-timeout", "stalled"})
"""Endings meaning a time budget ended the conversation, not the agent or the user."""


class RunPrompt(_Record):
    """What one live run's first model request carried, as run debug recorded it.

    n8n 2.41 has no memory route, so this is how a compaction shows there: once the observer ran, a
    run sends only the messages after its cursor and the observations ride in the system prompt.
    """

    run_id: str
    turn: int
    """The live user turn (1-based, as ``mustContain``'s ``turn`` counts) whose message started the run."""
    messages_sent: int
    """Messages the request carried, the new user message included (the system prompt not counted)."""
    thread_messages: int
    """Messages the thread held before that user message, as the record counts them (seeded and live turns)."""
    observations: int | None = None
    """Observations in the system prompt's ``<observations>`` block; None when it had no such block."""

    @property
    def compacted(self) -> bool:
        """The request read the thread through observations: a block of them, and fewer earlier messages
        than the thread held."""
        return self.observations is not None and self.messages_sent - 1 < self.thread_messages


class RunRecord(_Record):
    """Everything one case-iteration produced, before grading."""

    case_slug: str
    iteration: int = 0
    thread_id: str
    base_url: str = ""
    mode: Literal["single-prompt", "multi-turn"]
    turns: list[Turn] = Field(default_factory=list)
    usage: dict[str, list[TokenUsage]] = Field(default_factory=dict)
    """run id -> per-step token usage from run debug (empty when the instance has none)."""
    artifacts: Artifacts = Field(default_factory=Artifacts)
    memory: ThreadMemory | None = None
    seed: SeedOutcome = Field(default_factory=SeedOutcome)
    proxy_stats: dict[str, int] = Field(default_factory=dict)
    user: UserPlayer | None = None
    """Who played the user (None: a journal written before this was recorded)."""
    script: ScriptDelivery | None = None
    """How the script was delivered; None for a single-prompt case (no simulated user)."""
    follow_ups_sent: int = 0
    instance_failures: list[str] = Field(default_factory=list)
    """Instance failures the conversation survived (a confirm that never arrived, a built workflow that
    could not be read, ...): evidence the run did not test what the case says, so the premise
    ``instance-undisturbed`` fails and nothing is judged."""
    model_failure: str | None = None
    """The builder's model could not answer (the instance has no model configured, or its provider failed
    the call): the instance's own message. The simulated user sends nothing more to such a thread, and
    the premise ``model-provider`` fails, so nothing of the case is judged."""
    memory_unavailable: str | None = None
    """Why the thread's observational memory could not be read at all (``this instance exposes no memory
    route``): the compaction premise then rests on ``run_prompts``, and is not judged without them."""
    run_prompts: list[RunPrompt] = Field(default_factory=list)
    """Per live run, in order, what its first model request carried (from run debug; empty when run debug
    recorded no messages, as on the demo, or in a journal written before this was recorded)."""
    ended_by: EndReason = "done"
    warnings: list[str] = Field(default_factory=list)
    scenario_executions: list[StoredExecution] = Field(default_factory=list)
    """The mocked executions grading ran for the case's execution scenarios, in the order they ran."""
    started_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None

    def note_instance_failure(self, message: str, turn: Turn | None = None) -> None:
        """Record an instance failure the conversation survived, where a reader will look for it."""
        self.instance_failures.append(message)
        (turn.errors if turn is not None else self.warnings).append(message)

    @property
    def live_turns(self) -> list[Turn]:
        return [t for t in self.turns if not t.seeded]

    @property
    def agent_messages(self) -> list[str]:
        """The live assistant texts, in order (what ``mustContain`` and friends look at)."""
        return [t.text for t in self.live_turns if t.role == "assistant" and t.text]

    @property
    def produced_output(self) -> bool:
        """The agent said or did anything live at all."""
        return any(t.role == "assistant" and (t.text or t.tool_calls or t.widgets) for t in self.live_turns)


# --- what the agent created --------------------------------------------------------------------

_ID_KEYS = {
    "workflowId": "workflow",
    "dataTableId": "table",
    "tableId": "table",
    "agentId": "agent",
    "folderId": "folder",
    "parentFolderId": "folder",
}
_NESTED_KINDS = {"workflow": "workflow", "table": "table", "dataTable": "table", "agent": "agent", "folder": "folder"}
"""Keys whose object value is the resource itself (``create-data-table`` answers ``{table: {id, ...}}``)."""
_READ_ONLY_TOOL = re.compile(r"(?:^|[-_.])(?:get|list|read|search|find|describe|test)(?:[-_.]|$)", re.IGNORECASE)


def is_read_only_tool(name: str) -> bool:
    """A tool that only reads (``get-workflow``, ``list-credentials``, ``test-credential``, ...)."""
    return _READ_ONLY_TOOL.search(name) is not None


def _ids_in(value: Any, found: dict[str, set[str]]) -> None:
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                kind = _ID_KEYS.get(key)
                if kind is not None and isinstance(inner, str) and inner:
                    found[kind].add(inner)
                elif isinstance(inner, dict | list):
                    nested = _NESTED_KINDS.get(key)
                    if nested is not None and isinstance(inner, dict) and isinstance(inner.get("id"), str):
                        found[nested].add(inner["id"])
                    stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)


def created_ids(calls: Iterable[tuple[str, Any, Any]]) -> dict[str, set[str]]:
    """Ids of workflows, data tables, agents and folders the agent's tool calls *created*.

    ``calls`` are ``(tool name, arguments, result)``. An id counts as created when it appears in the
    result of a tool that is not a read (``get``/``list``/``read``/...) and nowhere in that call's
    arguments: ``build-workflow`` without a ``workflowId`` creates one, with it edits one. Ids the
    agent merely looked at (a listing of someone else's workflows) are never counted. Cleanup deletes
    these; the ``maxNewWorkflows`` check counts them.
    """
    found: dict[str, set[str]] = {kind: set() for kind in ("workflow", "table", "agent", "folder")}
    for name, args, result in calls:
        if is_read_only_tool(name) or result is None:
            continue
        in_result: dict[str, set[str]] = {kind: set() for kind in found}
        _ids_in(result, in_result)
        argument_text = json.dumps(args, default=str)
        for kind, ids in in_result.items():
            found[kind] |= {i for i in ids if i not in argument_text}
    return found
