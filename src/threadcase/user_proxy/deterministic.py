"""Deterministic answers: widgets the simulated user answers by rule, with no decision at all.

Order (the caller checks repeated request ids first, from its cache):

1. infrastructure prompts — domain access / web search → allow all (but left to the proxy while a
   direction is pending: a note may say to deny); a resource decision → the first option containing
   "allow"; a credential destination → approve;
2. credential cards — a standalone credential card, or a setup card whose every entry is
   credential-only, is deferred ("I'll set them up later") unless a direction is pending.

What "a direction is pending" means is the caller's: the scripted user knows which of its directives
governs this widget now; the model user keeps n8n's content-agnostic rule (any note still ahead).
Unlike n8n, a plan review is never answered by folding every remaining scripted turn into a rejection:
those turns are the user's next messages, each sent on its own (a pressure case whose pushes were
swallowed by a plan review tested nothing).

Single-prompt mode has no proxy: :func:`auto_approve` answers everything (infrastructure as above,
setup cards applied empty, questions answered empty, anything else approved), so a genuine
clarifying question is never really answered.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from threadcase import wire

__all__ = ["ShortCircuit", "auto_approve", "deterministic_answer", "infrastructure_answer"]


class ShortCircuit(BaseModel):
    """A rule's answer: the body, which rule, and the one-word outcome for the transcript."""

    model_config = ConfigDict(extra="forbid")

    body: wire.ConfirmBody
    rule: str
    outcome: str


def _kind(request: wire.ConfirmationRequest) -> str:
    """The widget kind (see :attr:`threadcase.wire.ConfirmationRequest.kind`)."""
    return request.kind


def widget_kind(request: wire.ConfirmationRequest) -> str:
    """Public form of the widget-kind detection (used for statistics and prompts)."""
    return _kind(request)


def infrastructure_answer(
    request: wire.ConfirmationRequest, *, pending_direction: bool, defer_setup_cards: bool = True
) -> ShortCircuit | None:
    """Rules 1 and 2: infrastructure prompts and credential deferral (``defer_setup_cards=False``
    leaves credential-only setup cards to the caller, as single-prompt auto-approval does)."""
    kind = _kind(request)
    if kind in ("domain-access", "web-search"):
        if pending_direction:
            return None
        return ShortCircuit(
            body=wire.DomainAccessApproveAnswer(domainAccessAction="allow_all"), rule=kind, outcome="approved"
        )
    if kind == "resource-decision":
        options = [str(o) for o in (request.resourceDecision or {}).get("options", [])]
        choice = next((o for o in options if "allow" in o.lower()), options[0] if options else "allowOnce")
        return ShortCircuit(body=wire.ResourceDecisionAnswer(resourceDecision=choice), rule=kind, outcome="answered")
    if kind == "credential-destination":
        origin = (request.credentialDestination or {}).get("origin")
        return ShortCircuit(
            body=wire.CredentialDestinationAnswer(approved=True, origin=str(origin) if origin is not None else None),
            rule=kind,
            outcome="approved",
        )
    if pending_direction:
        return None
    if request.credentialRequests and not request.setupRequests:
        return ShortCircuit(body=wire.CredentialSelectionAnswer(), rule="credentials-deferred", outcome="deferred")
    if defer_setup_cards and request.setupRequests and all(r.credential_only for r in request.setupRequests):
        return ShortCircuit(
            body=wire.ApprovalAnswer(approved=False), rule="setup-credentials-deferred", outcome="deferred"
        )
    return None


def deterministic_answer(request: wire.ConfirmationRequest, *, pending_direction: bool) -> ShortCircuit | None:
    """Every rule, in order; None = the proxy decides."""
    return infrastructure_answer(request, pending_direction=pending_direction)


def auto_approve(request: wire.ConfirmationRequest) -> ShortCircuit:
    """Single-prompt mode's answer to any widget."""
    infra = infrastructure_answer(request, pending_direction=False, defer_setup_cards=False)
    if infra is not None:
        return infra
    if request.setupRequests:
        return ShortCircuit(body=wire.SetupWorkflowApplyAnswer(), rule="auto-setup", outcome="dismissed")
    if request.questions:
        return ShortCircuit(body=wire.QuestionsAnswer(answers=[]), rule="auto-questions", outcome="skipped")
    return ShortCircuit(body=wire.ApprovalAnswer(approved=True), rule="auto-approval", outcome="approved")
