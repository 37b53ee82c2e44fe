"""The simulated user's two action menus, and their encoding into confirm bodies.

Two moments, two menus (a single menu let a model pick "approve" between runs, which was silently
read as "done" — n8n #34719):

- :class:`ConfirmationDecision` — a widget is on screen: answer_questions, apply_setup_wizard,
  approve_or_reject, respond_to_domain_access, pick_resource_decision, choose_credential_setup_option.
- :class:`UserTurnDecision` — the run finished: send_follow_up_message or declare_done.

Both are pydantic models with a union discriminated on ``action``; the model proxy asks for them as
structured output, the scripted proxy builds them directly, and :func:`encode_confirmation` turns a
confirmation action into the ``threadcase.wire`` confirm body (creating a credential first when the
user chose to set one up and none exists). Setup-wizard parameters and credentials travel as JSON
strings because some providers' structured output rejects open-ended nested records.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from threadcase import wire
from threadcase.errors import ConversationError

__all__ = [
    "AnswerQuestions",
    "ApplySetupWizard",
    "ApproveOrReject",
    "ChooseCredentialSetupOption",
    "ConfirmationAction",
    "ConfirmationDecision",
    "CredentialProvider",
    "DeclareDone",
    "Encoded",
    "PickResourceDecision",
    "QuestionAnswerItem",
    "RespondToDomainAccess",
    "SendFollowUpMessage",
    "UnencodableAction",
    "UserTurnAction",
    "UserTurnDecision",
    "encode_confirmation",
]


def _any_of_not_one_of(schema: dict[str, Any]) -> None:
    """Structured-output APIs accept ``anyOf`` but not ``oneOf``/``discriminator``: rewrite in place.

    Validation still uses the discriminator (pydantic's side); only the advertised schema changes.
    """

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "oneOf" in node:
                node["anyOf"] = node.pop("oneOf")
            node.pop("discriminator", None)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)


class _Action(BaseModel):
    # Every field is required (nullable where optional): strict structured output needs that.
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class QuestionAnswerItem(_Action):
    question_id: str
    selected_options: list[str]
    custom_text: str | None
    skipped: bool
    """True only to decline (a note says so) or for an incoherent question; never invent instead."""


class AnswerQuestions(_Action):
    """Answer a clarifying-questions widget."""

    action: Literal["answer_questions"]
    answers: list[QuestionAnswerItem]


class ApplySetupWizard(_Action):
    """Fill a setup-wizard card."""

    action: Literal["apply_setup_wizard"]
    node_parameters_json: str
    """JSON object: node name -> {parameter: value}. ``{}`` for none."""
    node_credentials_json: str | None
    """JSON object: node name -> {credential type: existing credential id, "create" (the only one, or a
    new one when none exists) or "new" (a new one whatever exists)}; null = none."""
    working_credential_types: list[str] | None
    """Credential types that should authenticate (the rest are created broken); null = all of them."""


class ApproveOrReject(_Action):
    """Approve or reject a plan, an approval or a text prompt (or dismiss a whole card)."""

    action: Literal["approve_or_reject"]
    approved: bool
    user_input: str | None


class RespondToDomainAccess(_Action):
    action: Literal["respond_to_domain_access"]
    decision: Literal["allow_once", "allow_all", "deny"]


class PickResourceDecision(_Action):
    action: Literal["pick_resource_decision"]
    decision: str


class ChooseCredentialSetupOption(_Action):
    """Decide on a credential card: set it up by hand, let the product try automatic setup, or skip."""

    action: Literal["choose_credential_setup_option"]
    option: Literal["manual", "auto", "skip"]
    credential_type: str | None
    existing_credential_id: str | None
    credential_should_work: bool | None
    """False when the scenario says the credential must not authenticate; null = it works."""


ConfirmationAction = Annotated[
    AnswerQuestions
    | ApplySetupWizard
    | ApproveOrReject
    | RespondToDomainAccess
    | PickResourceDecision
    | ChooseCredentialSetupOption,
    Field(discriminator="action"),
]


class ConfirmationDecision(BaseModel):
    """The structured output of a decision while a widget is on screen."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_any_of_not_one_of)

    decision: ConfirmationAction


class SendFollowUpMessage(_Action):
    """Say something to the agent after its run finished."""

    action: Literal["send_follow_up_message"]
    message: str
    rename_workflow_to: str | None
    """Rename the last saved workflow outside the conversation first (the message must not mention it)."""
    run_workflow_id: str | None
    """Run this saved workflow for real first (offered only when the case allows user execution)."""


class DeclareDone(_Action):
    """Nothing the user wants is left open."""

    action: Literal["declare_done"]


UserTurnAction = Annotated[SendFollowUpMessage | DeclareDone, Field(discriminator="action")]


class UserTurnDecision(BaseModel):
    """The structured output of a decision between runs."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_any_of_not_one_of)

    decision: UserTurnAction


# --- encoding ------------------------------------------------------------------------------------

_DOMAIN_KINDS = ("domain-access", "web-search")


class UnencodableAction(ConversationError):
    """A decision that does not fit the widget on screen (unknown ids, bad JSON, wrong menu item)."""


class CredentialProvider(Protocol):
    """Creates a credential mid-run and pins it to the thread (and its bypass list when working)
    *before* returning, so the confirm that names it is valid when the agent reads it."""

    async def create(self, credential_type: str, *, working: bool) -> str: ...


class Encoded(BaseModel):
    """A confirm body ready to send, the one-word outcome for the transcript, and side effects."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    body: wire.ConfirmBody
    outcome: str
    created_credentials: list[str] = Field(default_factory=list)


def _json_object(text: str | None, field: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnencodableAction(f"{field} is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise UnencodableAction(f"{field} must be a JSON object, got {type(value).__name__}")
    return value


async def encode_confirmation(
    action: AnswerQuestions
    | ApplySetupWizard
    | ApproveOrReject
    | RespondToDomainAccess
    | PickResourceDecision
    | ChooseCredentialSetupOption,
    request: wire.ConfirmationRequest,
    credentials: CredentialProvider,
    *,
    log: Callable[[str], None] | None = None,
) -> Encoded:
    """Turn a confirmation-menu action into the confirm body for ``request``.

    Entries that name an unknown question, node or credential type are dropped (and logged through
    ``log``); an action that leaves nothing valid, or that does not fit the widget, raises
    :class:`UnencodableAction` so the caller can fall back to scripted behaviour.
    """
    note = log or (lambda _m: None)
    if isinstance(action, AnswerQuestions):
        return _encode_questions(action, request, note)
    if isinstance(action, ApplySetupWizard):
        return await _encode_wizard(action, request, credentials, note)
    if isinstance(action, ApproveOrReject):
        if action.approved:
            outcome = "approved"
        elif request.setupRequests:
            # Declining a card that only asks for credentials is deferring them, not withholding a value.
            outcome = "deferred" if all(r.credential_only for r in request.setupRequests) else "dismissed"
        elif request.credentialRequests:
            outcome = "deferred"
        else:
            outcome = "rejected"
        return Encoded(body=wire.ApprovalAnswer(approved=action.approved, userInput=action.user_input), outcome=outcome)
    if isinstance(action, RespondToDomainAccess):
        if request.domainAccess is None and request.webSearch is None and request.inputType not in _DOMAIN_KINDS:
            raise UnencodableAction(f"respond_to_domain_access on a {request.inputType!r} widget")
        if action.decision == "deny":
            return Encoded(body=wire.DomainAccessDenyAnswer(), outcome="rejected")
        return Encoded(body=wire.DomainAccessApproveAnswer(domainAccessAction=action.decision), outcome="approved")
    if isinstance(action, PickResourceDecision):
        if request.resourceDecision is None and request.inputType != "resource-decision":
            raise UnencodableAction(f"pick_resource_decision on a {request.inputType!r} widget")
        options = [str(o) for o in (request.resourceDecision or {}).get("options", [])]
        choice = action.decision
        if options and choice not in options:
            note(f"resource decision {choice!r} is not an offered option {options}; using the first allow option")
            choice = next((o for o in options if "allow" in o.lower()), options[0])
        return Encoded(body=wire.ResourceDecisionAnswer(resourceDecision=choice), outcome="answered")
    return await _encode_credential_option(action, request, credentials, note)


def _encode_questions(
    action: AnswerQuestions, request: wire.ConfirmationRequest, note: Callable[[str], None]
) -> Encoded:
    if not request.questions:
        raise UnencodableAction(f"answer_questions on a {request.inputType!r} widget, which asks no questions")
    by_id = {q.id: q for q in request.questions}
    answers: list[wire.QuestionAnswer] = []
    for item in action.answers:
        question = by_id.get(item.question_id)
        if question is None:
            note(f"dropped an answer to unknown question {item.question_id!r}")
            continue
        if any(a.questionId == item.question_id for a in answers):
            continue
        selected: list[str] = []
        custom = item.custom_text
        for option in item.selected_options:
            match = next((o for o in question.options if o.lower() == option.lower()), None)
            if match is not None:
                selected.append(match)
            elif question.options:
                custom = option if not custom else f"{custom}, {option}"
            else:
                custom = custom or option
        if question.type == "single" and len(selected) > 1:
            selected = selected[:1]
        if item.skipped:
            answers.append(wire.QuestionAnswer(questionId=question.id, skipped=True))
        else:
            answers.append(wire.QuestionAnswer(questionId=question.id, selectedOptions=selected, customText=custom))
    if not answers:
        raise UnencodableAction("answer_questions answered none of the questions on screen")
    answered = {a.questionId for a in answers}
    # A question the decision forgot is left explicitly unanswered rather than guessed.
    answers.extend(
        wire.QuestionAnswer(questionId=q.id, skipped=True) for q in request.questions if q.id not in answered
    )
    all_skipped = all(a.skipped or (not a.selectedOptions and not a.customText) for a in answers)
    return Encoded(body=wire.QuestionsAnswer(answers=answers), outcome="skipped" if all_skipped else "answered")


async def _resolve_credential(
    credential_type: str,
    existing: list[wire.ExistingCredential],
    wanted: str | None,
    working: bool,
    credentials: CredentialProvider,
    created: list[str],
    note: Callable[[str], None],
) -> str | None:
    """Manual setup: 0 existing -> create one; 1 -> that one; >=2 -> the named one, else decline (None).

    ``wanted == "new"`` creates one whatever exists (a note asking for a new credential).
    """
    if wanted and wanted not in ("create", "new"):
        match = next((c for c in existing if wanted in (c.id, c.name)), None)
        if match is not None:
            return match.id
    if not existing or wanted == "new":
        new_id = await credentials.create(credential_type, working=working)
        created.append(new_id)
        return new_id
    if len(existing) == 1:
        return existing[0].id
    note(f"{len(existing)} existing {credential_type} credentials and none named; declining")
    return None


async def _encode_wizard(
    action: ApplySetupWizard,
    request: wire.ConfirmationRequest,
    credentials: CredentialProvider,
    note: Callable[[str], None],
) -> Encoded:
    if not request.setupRequests:
        raise UnencodableAction(f"apply_setup_wizard on a {request.inputType!r} widget, which is not a setup card")
    nodes = {r.node_name: r for r in request.setupRequests}
    params_in = _json_object(action.node_parameters_json, "nodeParametersJson")
    creds_in = _json_object(action.node_credentials_json, "nodeCredentialsJson")
    # None (not said) means every type works; an empty list means none does (a scripted invalid credential).
    working_types = None if action.working_credential_types is None else set(action.working_credential_types)
    params: dict[str, dict[str, Any]] = {}
    for node, values in params_in.items():
        if node not in nodes:
            note(f"dropped parameters for unknown node {node!r}")
            continue
        if not isinstance(values, dict) or not values:
            continue
        params[node] = dict(values)
    node_creds: dict[str, dict[str, str]] = {}
    created: list[str] = []
    for node, entry in creds_in.items():
        setup = nodes.get(node)
        if setup is None or setup.credentialType is None:
            note(f"dropped a credential for node {node!r}, which needs none on this card")
            continue
        wanted: str | None
        if isinstance(entry, dict):
            if setup.credentialType not in entry:
                note(f"dropped credential types {sorted(entry)} for node {node!r}; it needs {setup.credentialType}")
                continue
            raw = entry[setup.credentialType]
            wanted = str(raw) if raw is not None else None
        elif isinstance(entry, str):
            wanted = entry
        else:
            continue
        working = working_types is None or setup.credentialType in working_types
        chosen = await _resolve_credential(
            setup.credentialType, setup.existingCredentials, wanted, working, credentials, created, note
        )
        if chosen is not None:
            node_creds[node] = {setup.credentialType: chosen}
    body = wire.SetupWorkflowApplyAnswer(nodeCredentials=node_creds or None, nodeParameters=params or None)
    outcome = "filled" if (params or node_creds) else "dismissed"
    return Encoded(body=body, outcome=outcome, created_credentials=created)


async def _encode_credential_option(
    action: ChooseCredentialSetupOption,
    request: wire.ConfirmationRequest,
    credentials: CredentialProvider,
    note: Callable[[str], None],
) -> Encoded:
    decline = Encoded(body=wire.ApprovalAnswer(approved=False), outcome="deferred")
    working = action.credential_should_work is not False
    if request.setupRequests:
        # A wizard card has no automatic option; a manual pick goes to that card's slot for the type.
        if action.option != "manual":
            return decline
        created: list[str] = []
        node_creds: dict[str, dict[str, str]] = {}
        for setup in request.setupRequests:
            ctype = setup.credentialType
            if ctype is None or (action.credential_type and ctype != action.credential_type):
                continue
            chosen = await _resolve_credential(
                ctype, setup.existingCredentials, action.existing_credential_id, working, credentials, created, note
            )
            if chosen is not None:
                node_creds[setup.node_name] = {ctype: chosen}
        if not node_creds:
            return Encoded(body=decline.body, outcome="deferred", created_credentials=created)
        return Encoded(
            body=wire.SetupWorkflowApplyAnswer(nodeCredentials=node_creds),
            outcome="filled",
            created_credentials=created,
        )
    if not request.credentialRequests:
        raise UnencodableAction(f"choose_credential_setup_option on a {request.inputType!r} widget with no credentials")
    target = next(
        (r for r in request.credentialRequests if r.credentialType == action.credential_type),
        request.credentialRequests[0] if action.credential_type is None else None,
    )
    if target is None:
        raise UnencodableAction(f"credential type {action.credential_type!r} is not on this card")
    if action.option == "skip":
        return decline
    if action.option == "auto":
        # Sent for real, but inert here: automatic setup needs a browser the harness does not have.
        return Encoded(body=wire.CredentialAutoSetupAnswer(credentialType=target.credentialType), outcome="answered")
    created = []
    chosen = await _resolve_credential(
        target.credentialType,
        target.existingCredentials,
        action.existing_credential_id,
        working,
        credentials,
        created,
        note,
    )
    if chosen is None:
        return decline
    return Encoded(
        body=wire.CredentialSelectionAnswer(credentials={target.credentialType: chosen}),
        outcome="filled",
        created_credentials=created,
    )
