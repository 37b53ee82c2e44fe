"""The wire shapes of n8n's Instance AI REST API, as threadcase speaks them.

One module, shared by the harness's client (``threadcase.instance``) and the embedded demo instance
(``demo_instance``), so both sides of every request agree by construction; the shapes themselves
follow n8n's public API (field names are camelCase because they *are* the wire). Responses are
wrapped as ``{"data": ...}`` on the wire; these models describe what is inside ``data``.

Requests are closed (``extra="forbid"``: the demo instance answers 422 to a field it does not know,
which catches client typos); responses and events are open (``extra="allow"``), because a real
instance may send more than we read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AgentAttachment",
    "ApprovalAnswer",
    "Attachment",
    "BackgroundTask",
    "ChatRequest",
    "ChatResponse",
    "ConfirmBody",
    "ConfirmationRequest",
    "CreateThreadRequest",
    "CredentialAutoSetupAnswer",
    "CredentialDestinationAnswer",
    "CredentialRequest",
    "CredentialSelectionAnswer",
    "CredentialSummary",
    "DataTableColumn",
    "DomainAccessApproveAnswer",
    "DomainAccessDenyAnswer",
    "Event",
    "EventType",
    "ExecuteWithMockRequest",
    "ExecutionResult",
    "ExistingCredential",
    "Folder",
    "InterceptedRequest",
    "McpConnectAnswer",
    "MemoryObservation",
    "MemoryTask",
    "NodeResult",
    "Observation",
    "ObservationCursor",
    "PlanDenyAnswer",
    "PlanStep",
    "Question",
    "QuestionAnswer",
    "QuestionsAnswer",
    "ResourceDecisionAnswer",
    "RestoreThreadRequest",
    "RestoreThreadResponse",
    "RunDebug",
    "RunDebugStep",
    "RunSummary",
    "SeedDataTableRowsRequest",
    "SetupRequest",
    "SetupWorkflowApplyAnswer",
    "SetupWorkflowTestTriggerAnswer",
    "ThreadCredentialAllowlistRequest",
    "ThreadMemory",
    "ThreadMessage",
    "ThreadStatus",
    "TokenUsage",
    "Workflow",
    "WorkflowAttachment",
    "WorkflowNode",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- threads and chat -------------------------------------------------------------------------


class CreateThreadRequest(_Request):
    """``POST /rest/instance-ai/threads``."""

    threadId: str
    projectId: str | None = None
    source: str = "evals"
    origin: str | None = "internal"
    sourceContext: dict[str, Any] | None = None
    """Free-form context (≤ 2 KB); threadcase puts ``evalCase``/``evalIteration`` here, and the demo
    instance reads ``demoMisbehave`` (a list of misbehaviour names) from it."""


class WorkflowAttachment(_Request):
    """A workflow handed to the agent: one entry of ``ChatRequest.attachments`` (``POST .../chat/:threadId``)."""

    type: Literal["workflow"] = "workflow"
    id: str
    name: str


class AgentAttachment(_Request):
    """An agent handed to the agent: one entry of ``ChatRequest.attachments`` (``POST .../chat/:threadId``)."""

    type: Literal["agent"] = "agent"
    id: str
    name: str
    projectId: str | None = None


Attachment = Annotated[WorkflowAttachment | AgentAttachment, Field(discriminator="type")]


class ChatRequest(_Request):
    """``POST /rest/instance-ai/chat/:threadId`` -> :class:`ChatResponse`."""

    message: str = ""
    attachments: list[Attachment] = Field(default_factory=list)
    mode: Literal["default", "progressive"] | None = None
    promptVersion: str | None = None
    context: dict[str, Any] | None = None
    """A hand-off context, e.g. ``{"source": "setup-panel-execute", "workflowId": ...}``."""
    observerThresholdTokens: int | None = Field(default=None, ge=1000, le=1_000_000)


class ChatResponse(_Response):
    """``POST /rest/instance-ai/chat/:threadId`` answer: the id of the run the message started."""

    runId: str


class BackgroundTask(_Response):
    """A background task a run spawned, as ``GET .../threads/:threadId/status`` lists it."""

    taskId: str = ""
    status: str


class MemoryTask(_Response):
    """A queued observational-memory task, as ``GET .../threads/:threadId/status`` lists it."""

    taskId: str = ""
    taskKind: str = ""
    status: str
    """``queued`` | ``running`` | ``completed`` | ``failed``."""


class ThreadStatus(_Response):
    """``GET /rest/instance-ai/threads/:threadId/status``."""

    threadId: str = ""
    status: str = "idle"
    """``idle`` or ``running`` (a run is in progress)."""
    backgroundTasks: list[BackgroundTask] = Field(default_factory=list)
    memoryTasks: list[MemoryTask] = Field(default_factory=list)

    @property
    def settled(self) -> bool:
        """No run, background task or memory task is still pending."""
        busy = {"queued", "running", "pending"}
        return (
            self.status != "running"
            and not any(t.status in busy for t in self.backgroundTasks)
            and not any(t.status in busy for t in self.memoryTasks)
        )


class ThreadMessage(_Response):
    """One stored message, n8n-shaped: content is a list of typed blocks."""

    id: str
    role: Literal["user", "assistant", "system"] | None = None
    type: str | None = "llm"
    content: list[dict[str, Any]] = Field(default_factory=list)
    createdAt: str
    seeded: bool = False


# --- events -----------------------------------------------------------------------------------

EventType = Literal[
    "run-start",
    "text-delta",
    "tool-call",
    "tool-result",
    "tool-error",
    "confirmation-request",
    "agent-spawned",
    "agent-completed",
    "run-finish",
    "error",
]


class Event(_Response):
    """One Server-Sent Event of ``GET /rest/instance-ai/events/:threadId``.

    The SSE ``id:`` line is mirrored in ``id`` (a per-thread, increasing sequence number as a string)
    so a client can resume with ``Last-Event-ID``. Payload shapes by type:

    - ``run-start``: ``{runId}``; ``run-finish``: ``{runId, status: completed|cancelled|error, reason?}``
    - ``text-delta``: ``{text}``
    - ``tool-call``: ``{toolCallId, toolName, args}``; ``tool-result``: ``{toolCallId, toolName, result}``;
      ``tool-error``: ``{toolCallId, toolName, error}``
    - ``confirmation-request``: a :class:`ConfirmationRequest`
    - ``agent-spawned``: ``{agentId, role?, targetResource?: {type, id}}``; ``agent-completed``: ``{agentId}``
    - ``error``: ``{message, status?}`` (a provider or server error inside the run)
    """

    id: str | None = None
    type: str
    runId: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    threadStatus: ThreadStatus | None = None
    """threadcase extension, on ``run-finish`` only: the thread's status at that moment (what
    ``GET .../threads/:threadId/status`` would answer), so a client need not ask. The demo instance sends
    it; n8n does not, and a client then asks."""
    runSteps: list[RunDebugStep] | None = None
    """threadcase extension, on ``run-finish`` only: the finished run's steps as
    ``GET .../debug/runs/:runId`` lists them. An instance that sends it sends it for every run of the
    thread, so a client that saw each of its runs finish need not list them; n8n does not send it."""


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


class SetupRequest(_Response):
    """One entry of a workflow setup-wizard card: a node that needs a credential and/or parameters."""

    node: str
    nodeType: str = ""
    credentialType: str | None = None
    parameterIssues: dict[str, str] = Field(default_factory=dict)
    existingCredentials: list[ExistingCredential] = Field(default_factory=list)

    @property
    def credential_only(self) -> bool:
        return self.credentialType is not None and not self.parameterIssues


class CredentialRequest(_Response):
    """One entry of a standalone credential card."""

    credentialType: str
    reason: str = ""
    existingCredentials: list[ExistingCredential] = Field(default_factory=list)


class ConfirmationRequest(_Response):
    """The payload of a ``confirmation-request`` event: a widget waiting for the user.

    ``inputType`` says what kind of widget it is: ``questions`` (clarifying questions),
    ``plan-review`` (a plan to approve or reject), ``approval`` (a yes/no), ``text`` (free text),
    ``setup`` (a setup-wizard card: ``setupRequests``), ``credentials`` (a standalone credential card:
    ``credentialRequests``), ``domain-access``, ``web-search``, ``resource-decision``,
    ``credential-destination``.
    """

    requestId: str
    inputType: str = "approval"
    message: str = ""
    toolCallId: str | None = None
    questions: list[Question] = Field(default_factory=list)
    plan: list[PlanStep] = Field(default_factory=list)
    setupRequests: list[SetupRequest] = Field(default_factory=list)
    credentialRequests: list[CredentialRequest] = Field(default_factory=list)
    domainAccess: dict[str, Any] | None = None
    webSearch: dict[str, Any] | None = None
    resourceDecision: dict[str, Any] | None = None
    """``{"resource": ..., "options": ["allowOnce", "allowAlways", "deny"]}``."""
    credentialDestination: dict[str, Any] | None = None


# --- confirm bodies (POST /rest/instance-ai/confirm/:requestId), tagged by ``kind`` -------------


class ApprovalAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``approval``: approve or reject (with input)."""

    kind: Literal["approval"] = "approval"
    approved: bool
    userInput: str | None = None


class QuestionAnswer(_Request):
    """The answer to one :class:`Question`, inside a :class:`QuestionsAnswer`."""

    questionId: str
    selectedOptions: list[str] = Field(default_factory=list)
    customText: str | None = None
    skipped: bool = False


class QuestionsAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``questions``: one answer per question."""

    kind: Literal["questions"] = "questions"
    answers: list[QuestionAnswer]


class CredentialSelectionAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``credentialSelection``."""

    kind: Literal["credentialSelection"] = "credentialSelection"
    credentials: dict[str, str] = Field(default_factory=dict)
    """credential type -> credential id; empty = the user deferred setup."""


class CredentialAutoSetupAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``credentialAutoSetup`` (browser OAuth)."""

    kind: Literal["credentialAutoSetup"] = "credentialAutoSetup"
    credentialType: str
    attemptId: str | None = None


class SetupWorkflowApplyAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``setupWorkflowApply`` (a setup wizard)."""

    kind: Literal["setupWorkflowApply"] = "setupWorkflowApply"
    nodeCredentials: dict[str, dict[str, str]] | None = None
    """node name -> {credential type: credential id}."""
    nodeParameters: dict[str, dict[str, Any]] | None = None
    """node name -> {parameter: value}."""
    skippedNodes: list[str] | None = None


class DomainAccessApproveAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``domainAccessApprove``."""

    kind: Literal["domainAccessApprove"] = "domainAccessApprove"
    domainAccessAction: Literal["allow_once", "allow_all"] = "allow_once"


class DomainAccessDenyAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``domainAccessDeny``."""

    kind: Literal["domainAccessDeny"] = "domainAccessDeny"


class ResourceDecisionAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``resourceDecision``: the option picked."""

    kind: Literal["resourceDecision"] = "resourceDecision"
    resourceDecision: str


class CredentialDestinationAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``credentialDestination``."""

    kind: Literal["credentialDestination"] = "credentialDestination"
    approved: bool = True
    origin: str | None = None


class PlanDenyAnswer(_Request):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``planDeny``: the plan is rejected."""

    kind: Literal["planDeny"] = "planDeny"
    userInput: str | None = None
    """Optional feedback on what to change (as on a rejected ``approval``)."""


class SetupWorkflowTestTriggerAnswer(BaseModel):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``setupWorkflowTestTrigger``.

    n8n's further fields are not pinned down here, so they are accepted (not our shape to close).
    """

    model_config = ConfigDict(extra="allow")
    kind: Literal["setupWorkflowTestTrigger"] = "setupWorkflowTestTrigger"


class McpConnectAnswer(BaseModel):
    """``POST /rest/instance-ai/confirm/:requestId`` body of kind ``mcpConnect`` (extra fields accepted)."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["mcpConnect"] = "mcpConnect"


ConfirmBody = Annotated[
    ApprovalAnswer
    | QuestionsAnswer
    | CredentialSelectionAnswer
    | CredentialAutoSetupAnswer
    | SetupWorkflowApplyAnswer
    | DomainAccessApproveAnswer
    | DomainAccessDenyAnswer
    | ResourceDecisionAnswer
    | CredentialDestinationAnswer
    | PlanDenyAnswer
    | SetupWorkflowTestTriggerAnswer
    | McpConnectAnswer,
    Field(discriminator="kind"),
]


# --- run debug (token numbers) ----------------------------------------------------------------


class TokenUsage(_Response):
    """Token numbers of one LLM step, inside a run-debug step (``GET .../debug/runs/:runId``)."""

    inputTokens: int = 0
    outputTokens: int = 0
    cachedInputTokens: int = 0
    cacheWriteTokens: int = 0


class RunDebugStep(_Response):
    """One LLM step of a run, as ``GET /rest/instance-ai/debug/runs/:runId`` lists it."""

    output: dict[str, Any] = Field(default_factory=dict)
    """AI-SDK shaped: ``{"usage": TokenUsage, "text": ..., "providerMetadata": ...}``."""

    @property
    def usage(self) -> TokenUsage:
        return TokenUsage.model_validate(self.output.get("usage") or {})


class RunSummary(_Response):
    """One run of a thread, as ``GET /rest/instance-ai/debug/threads/:threadId/runs`` lists it."""

    runId: str
    label: str | None = None
    startedAt: str | None = None
    steps: list[RunDebugStep] | None = None
    """threadcase extension: the run's steps as ``GET .../debug/runs/:runId`` lists them, so a client
    need not fetch each run. The demo instance sends them; n8n does not (None), and a client then asks."""


class RunDebug(_Response):
    """``GET /rest/instance-ai/debug/runs/:runId``."""

    runId: str
    startedAt: str | None = None
    steps: list[RunDebugStep] = Field(default_factory=list)


# --- resources --------------------------------------------------------------------------------


class WorkflowNode(_Response):
    """One node of a :class:`Workflow` (``/rest/workflows``), n8n-shaped."""

    id: str | None = None
    name: str
    type: str
    typeVersion: float = 1
    position: list[float] = Field(default_factory=lambda: [0.0, 0.0])
    parameters: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, dict[str, Any]] | None = None
    """credential type -> ``{"id": ..., "name": ...}``."""
    onError: str | None = None


class Workflow(_Response):
    """A workflow as ``/rest/workflows`` reads and writes it: nodes, connections, folder."""

    id: str
    name: str
    nodes: list[WorkflowNode] = Field(default_factory=list)
    connections: dict[str, Any] = Field(default_factory=dict)
    active: bool = False
    versionId: str | None = None
    parentFolderId: str | None = None
    projectId: str | None = None


class CredentialSummary(_Response):
    """A credential as ``GET /rest/credentials`` lists it (``data`` only with ``includeData=true``)."""

    id: str
    name: str
    type: str
    data: dict[str, Any] | None = None
    """Only present with ``includeData=true``; never logged by threadcase."""


class Folder(_Response):
    """A project folder, as ``/rest/projects/:projectId/folders`` lists and creates it."""

    id: str
    name: str
    parentFolderId: str | None = None
    projectId: str | None = None


class DataTableColumn(_Response):
    """One column of a data table (``/rest/projects/:projectId/data-tables``, and seeds)."""

    name: str
    type: Literal["string", "number", "boolean", "date"] = "string"


# --- eval routes ------------------------------------------------------------------------------


class RestoreThreadRequest(_Request):
    """``POST /rest/instance-ai/eval/restore-thread``: all or nothing on the server."""

    threadId: str
    messages: list[dict[str, Any]] = Field(default_factory=list, max_length=1000)
    workflows: list[dict[str, Any]] = Field(default_factory=list, max_length=50)
    dataTables: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    agents: list[dict[str, Any]] = Field(default_factory=list, max_length=5)
    folders: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    uniquifyNames: bool = True


class RestoreThreadResponse(_Response):
    """Created ids, positional with the request's lists."""

    ok: bool = True
    threadId: str
    restored: int = 0
    workflowIds: list[str] = Field(default_factory=list)
    dataTableIds: list[str] = Field(default_factory=list)
    agentIds: list[str] = Field(default_factory=list)
    folderIds: list[str] = Field(default_factory=list)


class ThreadCredentialAllowlistRequest(_Request):
    """Pin a thread's credential view; replaces both lists on every call."""

    threadId: str
    credentialIds: list[str] = Field(default_factory=list, max_length=50)
    bypassCredentialTest: list[str] | None = Field(default=None, max_length=50)


class SeedDataTableRowsRequest(_Request):
    """``POST /rest/instance-ai/eval/seed-data-table-rows``: replace a scenario table's rows."""

    threadId: str
    tableId: str = Field(min_length=8, max_length=64)
    rows: list[dict[str, str | int | float | bool | None]] = Field(default_factory=list, max_length=1000)


class ExecuteWithMockRequest(_Request):
    """``POST /rest/instance-ai/eval/execute-with-llm-mock/:workflowId``."""

    scenarioHints: str | None = Field(default=None, max_length=2000)
    pinNodes: list[str] | None = Field(default=None, max_length=50)
    timeoutMs: int = Field(default=120_000, ge=30_000, le=3_600_000)
    seededDataTableIds: list[str] | None = None


class InterceptedRequest(_Response):
    """One outbound HTTP call a mocked execution intercepted, with the mock's answer."""

    url: str
    method: str = "GET"
    nodeType: str = ""
    requestBody: Any = None
    mockResponse: Any = None


class NodeResult(_Response):
    """What one node did in an execution (``execute-with-llm-mock``'s ``nodeResults``)."""

    outputs: list[Any] = Field(default_factory=list)
    outputCount: int = 0
    executionMode: Literal["mocked", "pinned", "real"] = "real"
    interceptedRequests: list[InterceptedRequest] = Field(default_factory=list)
    error: str | None = None
    startTime: str | None = None


class ExecutionResult(_Response):
    """``POST /rest/instance-ai/eval/execute-with-llm-mock/:workflowId`` answer: the execution trace."""

    executionId: str
    success: bool
    nodeResults: dict[str, NodeResult] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    hints: dict[str, Any] = Field(default_factory=dict)
    mockedCredentials: list[str] = Field(default_factory=list)


class Observation(_Response):
    """One observational-memory row (``GET /rest/instance-ai/eval/threads/:threadId/memory``)."""

    marker: str
    """The observer's priority label: ``CRITICAL``, ``IMPORTANT`` or ``INFO``."""
    text: str
    tokenCount: int = 0


MemoryObservation = Observation


class ObservationCursor(_Response):
    """Where observational memory stopped reading the thread (``.../eval/threads/:threadId/memory``)."""

    lastObservedMessageId: str
    lastObservedAt: str | None = None


class ThreadMemory(_Response):
    """``GET /rest/instance-ai/eval/threads/:threadId/memory``."""

    observations: list[Observation] = Field(default_factory=list)
    cursor: ObservationCursor | None = None

    @property
    def compacted(self) -> bool:
        """The observer ran and kept something: a cursor and at least one observation row."""
        return self.cursor is not None and bool(self.observations)
