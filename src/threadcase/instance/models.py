"""Small models the instance client hands back or takes, beyond the shared wire shapes."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ClientTimeouts", "InstanceFeatures", "Project"]


@dataclass
class InstanceFeatures:
    """What an instance was found to offer, learnt once and shared by every client of one lane.

    Not a wire shape: the client's own memory of what it saw, so the second case on a lane does not
    ask again what the first one found out.
    """

    memory_route: bool | None = None
    """``GET .../eval/threads/:threadId/memory`` exists (True), does not (False: n8n 2.41), not yet known."""


class Project(BaseModel):
    """A project on the instance (n8n: ``personal`` or ``team``)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    name: str = ""
    type: str = "team"


class ClientTimeouts(BaseModel):
    """Per call-kind timeouts, in seconds.

    A restore writes a whole seeded thread in one transaction, so it gets far longer than a plain
    call. The event stream's read timeout only has to outlast the server's heartbeat (10 s on the
    demo instance): when it expires the subscription reconnects with ``Last-Event-ID``, so it bounds
    how long a silently dead connection can go unnoticed, not how long a run may be quiet.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: float = Field(default=120.0, gt=0)
    """Every call not listed below."""
    restore: float = Field(default=300.0, gt=0)
    """``POST /rest/instance-ai/eval/restore-thread``."""
    connect: float = Field(default=10.0, gt=0)
    """Establishing a TCP connection, for every call."""
    stream_read: float = Field(default=45.0, gt=0)
    """Longest silence (not even a heartbeat) on the event stream before reconnecting."""
    execution_margin: float = Field(default=30.0, ge=0)
    """Added to a mocked execution's own ``timeoutMs`` budget for the HTTP call around it."""
