"""The seam between the demo instance's platform and its rule-based builder agent.

The platform (server, storage, event stream, tools, memory, token accounting) runs one agent turn per
chat message by calling a :data:`BuilderAgent` with a :class:`TurnInput` and an
:class:`AgentContext`. The agent never touches storage or HTTP: it reads what it may see from the
turn input, and acts only through the context — speaking, calling tools, asking the user through a
widget. That keeps the agent a deterministic function of what it was shown, like a model would be.

Tools the platform implements (``call_tool(name, args)``; results are plain JSON dicts; a failure
raises :class:`ToolFailed` after the platform emitted ``tool-error``). Everything is scoped to the
thread's project and, for credentials, to the thread's allowlist:

- ``list-workflows`` ``{query?, folderPath?, folderId?}`` -> ``{workflows: [{id, name, parentFolderId, folderPath}]}``
- ``get-workflow`` ``{workflowId}`` -> ``{workflow}`` (the wire ``Workflow`` shape)
- ``build-workflow`` ``{workflowId?, workflow: {name, nodes, connections}}`` -> ``{workflowId, workflow}``;
  with ``workflowId`` it edits that workflow in place
- ``rename-workflow`` ``{workflowId, name}`` -> ``{workflowId, name}``
- ``move-workflow`` ``{workflowId, folderId? | folderPath?}`` -> ``{workflowId, parentFolderId}``
- ``delete-workflow`` ``{workflowId}`` -> ``{deleted: true}``
- ``list-folders`` ``{}`` -> ``{folders: [{id, name, parentFolderId, path}]}``
- ``list-credentials`` ``{type?}`` -> ``{credentials: [{id, name, type}]}``
- ``test-credential`` ``{credentialId}`` -> ``{success, message}``
- ``list-data-tables`` ``{}`` -> ``{dataTables: [{id, name, columns}]}``
- ``create-data-table`` ``{name, columns: [{name, type}]}`` -> ``{table: {id, name, columns}}``
- ``build-agent`` ``{agentId?, config, skills}`` -> ``{agentId, config, skills}``
- ``get-agent`` ``{agentId}`` -> ``{agentId, config, skills}``

Widgets: ``ask(request)`` emits a ``confirmation-request`` whose payload is ``request`` plus a fresh
``requestId`` (see ``threadcase.wire.ConfirmationRequest`` for the fields), suspends the turn until
``POST /rest/instance-ai/confirm/:requestId`` arrives, and returns the validated confirm body as a
dict (``{"kind": "questions", "answers": [...]}``). Cancelling the run while it waits cancels the
agent (an anyio cancellation), as it would a model call.

Token numbers: the platform records one LLM step per ``call_tool`` and ``ask``, and one final step
when the turn ends, estimating input from the instructions, tool schemas, observations and the visible
history plus this run so far, and output from what the agent wrote. The agent does nothing for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from threadcase.wire import Observation

__all__ = ["READ_LIMIT_CHARS", "AgentContext", "BuilderAgent", "HistoryMessage", "ToolFailed", "TurnInput"]

READ_LIMIT_CHARS = 131_072
"""The most the demo reads of one message (128 Ki characters), as a model reads at most its context.

Its parsers are linear, but each runs as one regular-expression call that holds the interpreter for
its whole text: at 1 MiB a single call held the server's health checks 2-3 s even from a worker
thread. A longer message is refused in one reply; a longer past message is read up to the limit."""


class HistoryMessage(BaseModel):
    """One message the agent can still see (after compaction, only those past the cursor)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    role: Literal["user", "assistant"]
    text: str
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    """``[{toolName, args, result}]`` in call order."""
    seeded: bool = False
    created_at: str = ""


class TurnInput(BaseModel):
    """What the agent is shown for one turn."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    thread_id: str
    project_id: str
    run_id: str
    message: str
    attachments: list[dict[str, Any]] = Field(default_factory=list)
    """Resolved hand-offs: ``[{type: workflow|agent, id, name}]``."""
    context: dict[str, Any] | None = None
    """The chat request's hand-off context (``{source: setup-panel-execute, workflowId}``)."""
    mode: Literal["default", "progressive"] = "progressive"
    history: list[HistoryMessage] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    """Observational memory that replaced the masked early messages."""
    misbehaviours: frozenset[str] = frozenset()
    state: dict[str, Any] = Field(default_factory=dict)
    """The agent's own per-thread scratch state: mutate it in place; the platform persists it when the
    turn ends (and it survives compaction, so keep only what a real agent's working memory would)."""


class ToolFailed(Exception):
    """A tool call failed; the platform has already emitted ``tool-error``."""


class AgentContext(Protocol):
    """What the agent can do during a turn. Implemented by the platform."""

    async def say(self, text: str) -> None:
        """Stream text to the user (one or more ``text-delta`` events)."""

    async def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Emit ``tool-call``, run the tool, emit ``tool-result`` (or ``tool-error`` and raise ToolFailed)."""

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Show a widget (``confirmation-request``) and wait for the user's confirm body."""

    async def spawn(self, role: str, target: dict[str, Any] | None = None) -> str:
        """Emit ``agent-spawned`` for a sub-agent (e.g. the agent builder); returns its id."""

    async def complete(self, agent_id: str) -> None:
        """Emit ``agent-completed`` for a sub-agent spawned in this turn."""


BuilderAgent = Callable[[TurnInput, AgentContext], Awaitable[None]]
