"""The event stream (``GET /rest/instance-ai/events/:threadId``): events, error payloads, and the
confirmation-request widgets the agent raises."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from threadcase.wire._base import _Response
from threadcase.wire.runs import RunDebugStep
from threadcase.wire.threads import ThreadStatus

EventType = Literal[
    "run-start",
    "run-finish",
    "agent-spawned",
    "agent-completed",
    "text-delta",
    "text-block",
    "reasoning-delta",
    "reasoning-block",
    "tool-input-start",
    "tool-call",
    "tool-result",
    "tool-error",
    "tool-interrupted",
    "confirmation-request",
    "tasks-update",
    "setup-items",
    "preferences-applied",
    "filesystem-request",
    "thread-title-updated",
    "status",
    "error",
]
"""n8n 2.41's event types. ``text-delta``, ``reasoning-delta``, ``status`` and ``filesystem-request``
are ephemeral: sent live without an SSE ``id:`` and never replayed; a replay sends the durable
``text-block`` (one per response) instead of the deltas it was made of."""

EPHEMERAL_EVENT_TYPES = frozenset({"text-delta", "reasoning-delta", "status", "filesystem-request"})
"""Event types sent live only, without an id (n8n's ``INSTANCE_AI_EPHEMERAL_EVENT_TYPES``)."""


class Event(_Response):
    """One Server-Sent Event of ``GET /rest/instance-ai/events/:threadId``.

    n8n's event JSON is ``{type, runId, agentId, userId?, responseId?, payload, ts}``; the SSE ``id:``
    line (a per-thread increasing number, absent on ephemeral events) is mirrored in ``id`` so a
    client can resume with ``Last-Event-ID``. Payload shapes by type:

    - ``run-start``: ``{messageId, messageGroupId?}``; ``run-finish``: ``{status: completed|cancelled|error|
      interrupted, reason?}``
    - ``text-delta`` / ``text-block``: ``{text}`` (a block is one whole response, keyed by ``responseId``)
    - ``tool-call``: ``{toolCallId, toolName, args}``; ``tool-result``: ``{toolCallId, result}``;
      ``tool-error``: ``{toolCallId, error}``
    - ``confirmation-request``: a :class:`ConfirmationRequest`
    - ``agent-spawned``: ``{parentId, role, tools, targetResource?}``, ``agent-completed``: ``{role, result,
      error?}`` — the sub-agent's id is the event's top-level ``agentId``
    - ``error``: an :class:`ErrorPayload` (``{content, statusCode?, ...}``)
    """

    id: str | None = None
    type: str
    runId: str | None = None
    agentId: str | None = None
    """Which agent emitted it: the orchestrator, or (``agent-spawned``/``-completed``) the sub-agent."""
    responseId: str | None = None
    """The model response a text or reasoning delta/block belongs to."""
    payload: dict[str, Any] = Field(default_factory=dict)
    threadStatus: ThreadStatus | None = None
    """threadcase extension, on ``run-finish`` only: the thread's status at that moment (what
    ``GET .../threads/:threadId/status`` would answer), so a client need not ask. The demo instance sends
    it; n8n does not, and a client then asks."""
    runSteps: list[RunDebugStep] | None = None
    """threadcase extension, on ``run-finish`` only: the finished run's steps as
    ``GET .../debug/runs/:runId`` lists them. An instance that sends it sends it for every run of the
    thread, so a client that saw each of its runs finish need not list them; n8n does not send it."""


class ErrorPayload(_Response):
    """The payload of an ``error`` event: what went wrong inside a run (n8n's ``errorPayloadSchema``).

    A provider error n8n did not retry (e.g. HTTP 401) carries ``statusCode`` and the raw response in
    ``technicalDetails``; retried ones end as ``"Failed after 3 attempts. Last error: AI_APICallError:
    ..."`` without a status.
    """

    content: str = ""
    """The message as n8n shows it to the user."""
    statusCode: int | None = None
    """The provider's HTTP status, when n8n passed it on."""
    code: str | None = None
    """A known error code (``quota_exhausted``)."""
    provider: str | None = None
    technicalDetails: str | None = None

    @property
    def text(self) -> str:
        """The message: ``content`` (n8n), else an older instance's ``message``, else a placeholder."""
        extra = self.model_extra or {}
        return self.content or str(extra.get("message") or "") or "error event without a message"

    @property
    def status(self) -> int | None:
        """``statusCode``, or an older instance's ``status``."""
        if self.statusCode is not None:
            return self.statusCode
        legacy = (self.model_extra or {}).get("status")
        return legacy if isinstance(legacy, int) and not isinstance(legacy, bool) else None

    @property
    def from_model_provider(self) -> bool:
        """The error names the model provider's failure (its HTTP status, or the AI SDK's call error)."""
        return self.status is not None or "AI_APICallError" in self.content or self.code == "quota_exhausted"


class Question(_Response):
    """One question of a ``questions`` confirmation-request (the ``confirmation-request`` event payload)."""

    id: str
    question: str
    type: Literal["single", "multi", "text"] = "text"
    options: list[str] = Field(default_factory=list)


class PlanStep(_Response):
    """One step of the plan a plan-review confirmation-request shows for approval."""

    title: str
    detail: str = ""


class ExistingCredential(_Response):
    """A credential the user already has, offered on a setup card of a confirmation-request."""

    id: str
    name: str


class SetupNode(_Response):
    """The node a setup card is about (n8n's ``workflowSetupNodeSchema.node``)."""

    name: str
    type: str = ""
    typeVersion: float = 1
    parameters: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, Any] | None = None
    position: list[float] = Field(default_factory=lambda: [0.0, 0.0])
    id: str = ""


class SetupRequest(_Response):
    """One entry of a workflow setup-wizard card: a node that needs a credential and/or parameters."""

    node: SetupNode
    """The node itself, as n8n sends it (an object, not its name)."""
    credentialType: str | None = None
    existingCredentials: list[ExistingCredential] = Field(default_factory=list)
    isTrigger: bool = False
    parameterIssues: dict[str, list[str]] = Field(default_factory=dict)
    """parameter name -> the problems with it (n8n: a list of messages per parameter)."""

    @property
    def node_name(self) -> str:
        """The node's name: the key of ``setupWorkflowApply``'s ``nodeCredentials``/``nodeParameters``."""
        return self.node.name

    @property
    def node_type(self) -> str:
        return self.node.type

    @property
    def credential_only(self) -> bool:
        return self.credentialType is not None and not self.parameterIssues

    def issue_text(self, parameter: str) -> str:
        """The problems with one parameter, as one line."""
        return "; ".join(self.parameterIssues.get(parameter, []))


class CredentialRequest(_Response):
    """One entry of a standalone credential card."""

    credentialType: str
    reason: str = ""
    existingCredentials: list[ExistingCredential] = Field(default_factory=list)


class ConfirmationRequest(_Response):
    """The payload of a ``confirmation-request`` event: a widget waiting for the user.

    n8n's ``inputType`` is optional and names only the plain widgets (``approval`` — its default —,
    ``text``, ``questions``, ``plan-review``, ``resource-decision``, ``continue``); a setup-wizard card
    (``setupRequests``), a standalone credential card (``credentialRequests``), a domain-access or
    web-search approval and a credential-destination approval are told by which field is present.
    :attr:`kind` says which widget it is, either way.
    """

    requestId: str
    inputType: str | None = None
    message: str = ""
    toolCallId: str | None = None
    toolName: str | None = None
    questions: list[Question] = Field(default_factory=list)
    plan: list[PlanStep] = Field(default_factory=list)
    """threadcase's plan steps (the demo's plan-review); n8n sends ``planItems`` / ``args.tasks``."""
    setupRequests: list[SetupRequest] = Field(default_factory=list)
    credentialRequests: list[CredentialRequest] = Field(default_factory=list)
    domainAccess: dict[str, Any] | None = None
    webSearch: dict[str, Any] | None = None
    resourceDecision: dict[str, Any] | None = None
    """``{"resource": ..., "options": ["allowOnce", "allowAlways", "deny"]}``."""
    credentialDestination: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        """The widget kind: a card told by its payload (``setup``, ``credentials``, ``domain-access``,
        ``web-search``, ``resource-decision``, ``credential-destination``), else ``inputType``, else
        ``questions`` / ``plan-review`` when they are present, else ``approval`` (n8n's default)."""
        if self.setupRequests:
            return "setup"
        if self.credentialRequests:
            return "credentials"
        if self.domainAccess is not None:
            return "domain-access"
        if self.webSearch is not None:
            return "web-search"
        if self.resourceDecision is not None:
            return "resource-decision"
        if self.credentialDestination is not None:
            return "credential-destination"
        if self.inputType:
            return self.inputType
        if self.questions:
            return "questions"
        if self.plan:
            return "plan-review"
        return "approval"
