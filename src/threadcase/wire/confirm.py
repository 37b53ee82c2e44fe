"""Confirm bodies (``POST /rest/instance-ai/confirm/:requestId``), tagged by ``kind``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.wire._base import _Request


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
