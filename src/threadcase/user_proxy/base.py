"""What every simulated user shares: the view it gets of the conversation, and what it answers."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from threadcase import wire
from threadcase.case.notes import Script
from threadcase.records import Turn, WidgetAnsweredBy
from threadcase.user_proxy.actions import CredentialProvider, SendFollowUpMessage
from threadcase.user_proxy.stats import ProxyStats

__all__ = ["ConversationView", "ProxyAnswer", "SavedWorkflow", "UserProxy"]


class SavedWorkflow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str


class ConversationView(BaseModel):
    """What the simulated user can see when it decides: the transcript so far, and what was saved."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn] = Field(default_factory=list)
    saved_workflows: list[SavedWorkflow] = Field(default_factory=list)
    allow_user_execution: bool = False
    follow_ups_left: int | None = None
    """How many more messages the user may send (the case's messageBudget); None = not limited."""


class ProxyAnswer(BaseModel):
    """The answer to one widget: the confirm body, who produced it, and its one-word outcome."""

    model_config = ConfigDict(extra="forbid")

    body: wire.ConfirmBody
    answered_by: WidgetAnsweredBy
    outcome: str


class UserProxy(Protocol):
    """The simulated user, as the conversation loop drives it."""

    script: Script
    stats: ProxyStats

    @property
    def uses_model(self) -> bool: ...

    async def answer(
        self, request: wire.ConfirmationRequest, view: ConversationView, credentials: CredentialProvider
    ) -> ProxyAnswer:
        """Answer a widget on screen (never raises for a decision problem: falls back to the script)."""

    async def next_message(self, view: ConversationView) -> SendFollowUpMessage | None:
        """After a run: what the user says next, or None when they are done."""

    def might_continue(self) -> bool:
        """Whether the user could still want something (used to word the budget warning)."""
