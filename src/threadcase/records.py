"""The evidence of one run: turns, tool calls, widgets, tokens, artifacts, memory.

The conversation loop (``harness.conversation``) produces a :class:`RunRecord`; grading reads it;
reports render it; the journal stores it. Rendering it as text for the judge and for people is
:mod:`threadcase.render`, which imports this module (never the reverse).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.wire import ExecutionResult, ThreadMemory, TokenUsage, Workflow

__all__ = [
    "BUILD_FAILED_TIMEOUT",
    "AgentArtifact",
    "Artifacts",
    "EndReason",
    "PriorRunOutcome",
    "RunRecord",
    "SeedOutcome",
    "StoredExecution",
    "ToolCallRecord",
    "Turn",
    "WidgetRecord",
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


class SeedOutcome(_Record):
    """How restoring the case's seed went: restored or why not, prior runs, and the seed -> per-run id map."""

    mode: Literal["none", "inline", "replay"] = "none"
    restored: bool = True
    error: str | None = None
    prior_runs: list[PriorRunOutcome] = Field(default_factory=list)
    id_map: dict[str, str] = Field(default_factory=dict)
    """Seed id -> per-run id, for workflows and agents."""
    warnings: list[str] = Field(default_factory=list)


class StoredExecution(_Record):
    """One mocked execution an execution scenario ran, kept so the scenario can be verified again later.

    ``threadcase regrade`` answers the verifier from these instead of an instance.
    """

    workflow_id: str
    """The per-run id of the executed workflow."""
    scenario_hints: str | None = None
    """The hints the mock was given (the scenario's ``dataSetup``, capped as sent)."""
    result: ExecutionResult


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
    follow_ups_sent: int = 0
    instance_failures: list[str] = Field(default_factory=list)
    """Instance failures the conversation survived (a confirm that never arrived, a built workflow that
    could not be read, ...): evidence the run did not test what the case says, so the premise
    ``instance-undisturbed`` fails and nothing is judged."""
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
