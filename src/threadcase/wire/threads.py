"""Threads and chat: creating a thread, sending a message, the thread's status and stored messages."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from threadcase.wire._base import _Request, _Response


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
    """A background task a run spawned, as ``GET .../threads/:threadId/status`` lists it.

    n8n: ``{taskId, role, agentId, status, startedAt (epoch ms), runId, messageGroupId}``.
    """

    taskId: str = ""
    status: str
    """``running``, ``completed``, ``failed`` or ``cancelled``."""
    agentId: str | None = None
    """The sub-agent doing the work."""
    startedAt: int | None = None
    """Epoch milliseconds."""


class MemoryTask(_Response):
    """An observational-memory task, as ``GET .../threads/:threadId/status`` lists it.

    n8n lists a task only while it is ``queued`` or ``running`` and drops it once it ended.
    """

    taskId: str = ""
    taskKind: str = ""
    """``observer`` or ``reflector``."""
    status: str
    """``queued`` | ``running`` (and, on older demo journals, ``completed`` | ``failed``)."""
    startedAt: int | None = None
    """Epoch milliseconds, once running."""


_BUSY = frozenset({"queued", "running", "pending"})


class ThreadStatus(_Response):
    """``GET /rest/instance-ai/threads/:threadId/status`` (n8n 2.41: there is no ``status`` field)."""

    hasActiveRun: bool = False
    """A run of the thread is executing now."""
    isSuspended: bool = False
    """A run is paused on a confirmation-request (a widget waits for its answer; no run-finish yet)."""
    runId: str | None = None
    """The active or suspended run, while there is one."""
    backgroundTasks: list[BackgroundTask] = Field(default_factory=list)
    """Background tasks of the thread (sub-agents that outlive the run that spawned them)."""
    memoryTasks: list[MemoryTask] = Field(default_factory=list)
    """Observational-memory tasks queued or running for the thread."""
    promptConfiguration: dict[str, Any] | None = None
    """The prompt the thread runs with (``{version, systemPromptVersion, ...}``), once it has run."""

    @property
    def settled(self) -> bool:
        """No run (active or suspended), background task or memory task is still pending."""
        return (
            not self.hasActiveRun
            and not self.isSuspended
            and not any(t.status in _BUSY for t in self.backgroundTasks)
            and not any(t.status in _BUSY for t in self.memoryTasks)
        )


class ThreadMessage(_Response):
    """One stored message of ``GET .../threads/:threadId/messages``.

    n8n answers two shapes: by default ("rich") ``content`` is the message's text as one string
    (assistant messages add ``runId``, ``agentTree``, ...); with ``?raw=true`` it is the stored list
    of typed blocks (``{type: "text", text}``, ``{type: "tool-call", toolCallId, toolName, input,
    state, output}``, ...). :attr:`blocks` and :attr:`text` read either.
    """

    id: str
    role: Literal["user", "assistant", "system", "tool", "custom"] | None = None
    type: str | None = "llm"
    content: str | list[dict[str, Any]] = Field(default_factory=list)
    """A string (rich) or a list of typed blocks (raw)."""
    createdAt: str
    seeded: bool = False
    """threadcase extension (the demo marks restored messages); n8n does not say, so False there."""

    @property
    def blocks(self) -> list[dict[str, Any]]:
        """The typed content blocks (a rich message's string as one text block)."""
        if isinstance(self.content, str):
            return [{"type": "text", "text": self.content}] if self.content else []
        return self.content

    @property
    def text(self) -> str:
        """The message's text: the rich string, or the raw text blocks joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")
