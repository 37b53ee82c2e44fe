"""The eval routes (``/rest/instance-ai/eval/...``): restore a seeded thread, pin credentials, seed
table rows, mocked execution, and the observational-memory read the demo offers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field, model_validator

from threadcase.wire._base import _Request, _Response


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
    """threadcase extension (the demo reads it); n8n drops unknown keys of this body."""


class InterceptedRequest(_Response):
    """One outbound HTTP call a mocked execution intercepted, with the mock's answer."""

    url: str
    method: str = "GET"
    nodeType: str = ""
    requestBody: Any = None
    mockResponse: Any = None


class NodeResult(_Response):
    """What one node did in an execution (``execute-with-llm-mock``'s ``nodeResults``).

    n8n: ``{outputs: {main: [[{json, pairedItem}, ...], ...]}, outputCount, iterationCount,
    interceptedRequests, executionMode, startTime (epoch ms)}``; a node's failure is in the result's
    ``errors`` (``Node "X": message``), not here.
    """

    outputs: dict[str, list[list[dict[str, Any]] | None]] = Field(default_factory=dict)
    """Connection type (``main``, ``ai_tool``, ...) -> output branches -> n8n items (``{json, ...}``)."""
    outputCount: int = 0
    iterationCount: int = 0
    executionMode: str = "real"
    """``real``, ``mocked`` or ``pinned``."""
    interceptedRequests: list[InterceptedRequest] = Field(default_factory=list)
    startTime: int | None = None
    """Epoch milliseconds of the node's last run."""

    @model_validator(mode="before")
    @classmethod
    def _older_records(cls, data: Any) -> Any:
        # Journals written before threadcase followed n8n 2.41 hold outputs as bare branches of plain
        # items and an ISO startTime; they are read as n8n's shape so old runs still compare and regrade.
        if not isinstance(data, dict):
            return data
        outputs, started = data.get("outputs"), data.get("startTime")
        if isinstance(outputs, list):
            branches = [branch if isinstance(branch, list) else [branch] for branch in outputs]
            data = {**data, "outputs": {"main": [[{"json": item} for item in branch] for branch in branches]}}
        if isinstance(started, str):
            try:
                moment = datetime.fromisoformat(started.replace("Z", "+00:00"))
            except ValueError:
                moment = None
            data = {**data, "startTime": int(moment.timestamp() * 1000) if moment is not None else None}
        return data

    @property
    def items(self) -> list[Any]:
        """The ``json`` of every item on the node's ``main`` outputs, branch after branch."""
        out: list[Any] = []
        for branch in self.outputs.get("main") or []:
            for item in branch or []:
                out.append(item.get("json", item) if isinstance(item, dict) else item)
        return out


FRAMEWORK_ISSUE_PREFIX = "FRAMEWORK ISSUE:"
"""How n8n starts an error of the mocked execution's own machinery (its mock model failed, ...)."""


class MockedCredential(_Response):
    """One ``mockedCredentials`` entry of n8n 2.41's mocked execution: a credential it synthesized."""

    nodeName: str = "unknown"
    credentialType: str = ""
    credentialId: str | None = None

    def describe(self) -> str:
        """``Slack (slackApi, id 7)`` or ``Slack (slackApi, none attached)``."""
        which = f"id {self.credentialId}" if self.credentialId else "none attached"
        return f"{self.nodeName} ({self.credentialType}, {which})"


class ExecutionResult(_Response):
    """``POST /rest/instance-ai/eval/execute-with-llm-mock/:workflowId`` answer: the execution trace."""

    executionId: str
    success: bool
    nodeResults: dict[str, NodeResult] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    hints: dict[str, Any] = Field(default_factory=dict)
    mockedCredentials: list[MockedCredential] = Field(default_factory=list)
    """Credentials n8n stood in for (a node's reference had no id, or pointed at none that exists)."""

    @property
    def framework_issue(self) -> str | None:
        """The first error of the mock machinery itself (``FRAMEWORK ISSUE: ...``): the workflow never ran."""
        return next((e for e in self.errors if e.startswith(FRAMEWORK_ISSUE_PREFIX)), None)


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
