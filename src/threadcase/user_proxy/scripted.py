"""The scripted (no-model) simulated user, and the answer pipeline every proxy shares.

Scripted mode is what runs when no proxy model is configured. It is deterministic and deliberately
simple, and weaker than the model proxy: it sends the authored user turns in order (notes stripped,
a one-at-a-time change list split into one message per change), answers questions with a value from
the script or a plausible placeholder unless a note says to decline, pushes back on a plan that
leaves out a service, channel, address or URL the user already stated, approves other plans, and
defers credential cards unless a note engages them.

The pipeline (:meth:`ScriptedProxy.answer`): a repeated request id gets its cached answer; then the
deterministic rules (``user_proxy.deterministic``); then a decision (:meth:`decide_confirmation`, which
the model proxy overrides), encoded to the confirm body; a decision that cannot be encoded falls back
to the scripted decision.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from threadcase import wire
from threadcase.case.notes import Script
from threadcase.records import WidgetAnsweredBy
from threadcase.user_proxy.actions import (
    AnswerQuestions,
    ApplySetupWizard,
    ApproveOrReject,
    ChooseCredentialSetupOption,
    CredentialProvider,
    PickResourceDecision,
    QuestionAnswerItem,
    RespondToDomainAccess,
    SendFollowUpMessage,
    UnencodableAction,
    encode_confirmation,
)
from threadcase.user_proxy.base import ConversationView, ProxyAnswer
from threadcase.user_proxy.deterministic import auto_approve, deterministic_answer, widget_kind
from threadcase.user_proxy.stats import ProxyStats

__all__ = ["ConfirmationChoice", "ScriptedProxy", "placeholder_value", "plan_gaps"]

ConfirmationChoice = (
    AnswerQuestions
    | ApplySetupWizard
    | ApproveOrReject
    | RespondToDomainAccess
    | PickResourceDecision
    | ChooseCredentialSetupOption
)

_CHANNEL = re.compile(r"(?<![\w#])#[a-z0-9][\w-]*", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
_URL = re.compile(r"https?://[^\s,;)\]\"']+")
_SERVICES = {
    "slack": "Slack",
    "gmail": "Gmail",
    "notion": "Notion",
    "github": "GitHub",
    "google sheets": "Google Sheets",
    "sheets": "Google Sheets",
    "data table": "data table",
    "webhook": "webhook",
}
_DENY = re.compile(r"\b(deny|block|refuse|don'?t allow|do not allow|no (?:web|internet|external) access)\b", re.I)


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    m = pattern.search(text)
    return m.group(0).rstrip(".") if m else None


def placeholder_value(question: str, corpus: str) -> str:
    """A value for a free-text question: stated in the script if possible, else implied, else invented
    but plausible (never "you decide")."""
    q = question.lower()
    if "channel" in q:
        return _first(_CHANNEL, corpus) or "#general"
    if any(w in q for w in ("email", "e-mail", "recipient", "address", "send to", "whom")):
        return _first(_EMAIL, corpus) or "alex@example.com"
    if any(w in q for w in ("url", "endpoint", "link", "api")):
        return _first(_URL, corpus) or "https://api.example.com/v1/items"
    if "path" in q:
        return "/incoming"
    if any(w in q for w in ("when", "time", "schedule", "often", "frequency")):
        return "every weekday at 9:00"
    if any(w in q for w in ("threshold", "amount", "number", "how many", "limit")):
        return "100"
    if "name" in q or "title" in q:
        return "Daily report"
    if any(w in q for w in ("database", "page", "notion")):
        return "a3f9c2d47b8e4f0a9d1c6e5b2a7f8c90"
    if any(w in q for w in ("repo", "repository")):
        return "acme/website"
    if any(w in q for w in ("sheet", "spreadsheet", "table")):
        return "Leads"
    return "the usual one, sample value"


def _option_from(options: list[str], corpus: str) -> str | None:
    """The offered option the script mentions; the longest wins ("Slack (workspace 2)" over "Slack")."""
    lowered = corpus.lower()
    mentioned = [o for o in options if o.lower() in lowered]
    return max(mentioned, key=len) if mentioned else None


def plan_gaps(plan_text: str, said: str) -> list[str]:
    """Requirements the user stated that a plan leaves out: the quoted sentences that state them.

    Only concrete requirements count: a named service, a #channel, an e-mail address, a URL.
    """
    plan = plan_text.lower()
    gaps: list[str] = []
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", said) if s.strip()]
    wanted: list[str] = []
    for token in (*_CHANNEL.findall(said), *_EMAIL.findall(said), *_URL.findall(said)):
        wanted.append(token.rstrip("."))
    lowered = said.lower()
    for key, label in _SERVICES.items():
        if re.search(rf"\b{re.escape(key)}\b", lowered) and label not in wanted:
            wanted.append(label)
    for item in wanted:
        if item.lower() in plan:
            continue
        sentence = next((s for s in sentences if item.lower() in s.lower()), item)
        if sentence not in gaps:
            gaps.append(sentence)
    return gaps


def _plan_text(request: wire.ConfirmationRequest) -> str:
    steps = " ".join(f"{s.title} {s.detail}" for s in request.plan)
    return f"{request.message} {steps}"


class ScriptedProxy:
    """The scripted simulated user; also the base and fallback of the model proxy."""

    def __init__(self, script: Script, stats: ProxyStats | None = None) -> None:
        self.script = script
        self.stats = stats if stats is not None else ProxyStats()
        self._cache: dict[str, ProxyAnswer] = {}
        self.log: list[str] = []
        self.last_source: Literal["script", "model"] = "script"
        """Who produced the last follow-up message."""
        """Diagnostics (dropped entries, fallbacks); the conversation copies them into warnings."""

    @property
    def uses_model(self) -> bool:
        return False

    def might_continue(self) -> bool:
        return self.script.has_more

    async def aclose(self) -> None:
        """Release model clients (none here)."""

    # --- widgets -------------------------------------------------------------------------------

    async def answer(
        self, request: wire.ConfirmationRequest, view: ConversationView, credentials: CredentialProvider
    ) -> ProxyAnswer:
        cached = self._cache.get(request.requestId)
        if cached is not None:
            self.stats["repeat"] += 1
            return cached.model_copy(update={"answered_by": "repeat"})
        short = deterministic_answer(request, self.script)
        if short is not None:
            self.stats.deterministic(short.rule)
            self.stats.outcome(short.outcome)
            result = ProxyAnswer(body=short.body, answered_by="deterministic", outcome=short.outcome)
        else:
            result = await self._decide_and_encode(request, view, credentials)
        self._cache[request.requestId] = result
        return result

    async def _decide_and_encode(
        self, request: wire.ConfirmationRequest, view: ConversationView, credentials: CredentialProvider
    ) -> ProxyAnswer:
        decided = await self.decide_confirmation(request, view)
        by_model = decided is not None
        action = decided if decided is not None else self.scripted_confirmation(request)
        answered_by: WidgetAnsweredBy = "model" if by_model else "scripted"
        if not by_model and self.uses_model:
            answered_by = "fallback"
        try:
            encoded = await encode_confirmation(action, request, credentials, log=self.log.append)
        except UnencodableAction as exc:
            if not by_model:
                # The script could not fit this widget either: answer as single-prompt mode would.
                self.log.append(f"no scripted answer fits request {request.requestId} ({exc}); auto-approved")
                short = auto_approve(request)
                self.stats["fallback-unencoded"] += 1
                self.stats.outcome(short.outcome)
                return ProxyAnswer(body=short.body, answered_by="fallback", outcome=short.outcome)
            self.stats["fallback-unencoded"] += 1
            self.log.append(f"model decision for request {request.requestId} not encodable ({exc}); scripted instead")
            action = self.scripted_confirmation(request)
            answered_by, by_model = "fallback", False
            encoded = await encode_confirmation(action, request, credentials, log=self.log.append)
        self.stats.decision(action.action, by_model=by_model)
        self.stats.outcome(encoded.outcome)
        self.stats["credential-created"] += len(encoded.created_credentials)
        return ProxyAnswer(body=encoded.body, answered_by=answered_by, outcome=encoded.outcome)

    async def decide_confirmation(
        self, request: wire.ConfirmationRequest, view: ConversationView
    ) -> ConfirmationChoice | None:
        """A decision from a model; None = use the scripted decision. The scripted proxy has no model."""
        return None

    def scripted_confirmation(self, request: wire.ConfirmationRequest) -> ConfirmationChoice:
        """The scripted decision for a widget (pure; never raises)."""
        kind = widget_kind(request)
        corpus = self.script.spoken_corpus()
        if request.setupRequests:
            return self._scripted_setup(request, corpus)
        if request.credentialRequests:
            return self._scripted_credentials(request)
        if request.questions:
            answers = []
            for q in request.questions:
                if self.script.declines(q.question):
                    answers.append(
                        QuestionAnswerItem(question_id=q.id, selected_options=[], custom_text=None, skipped=True)
                    )
                    continue
                if q.options:
                    pool = corpus + "\n" + "\n".join(self.script.notes)
                    option = _option_from(q.options, pool) or q.options[0]
                    answers.append(
                        QuestionAnswerItem(question_id=q.id, selected_options=[option], custom_text=None, skipped=False)
                    )
                else:
                    value = placeholder_value(q.question, corpus)
                    answers.append(
                        QuestionAnswerItem(question_id=q.id, selected_options=[], custom_text=value, skipped=False)
                    )
            return AnswerQuestions(action="answer_questions", answers=answers)
        if kind in ("domain-access", "web-search"):
            deny = any(_DENY.search(n) for n in self.script.notes)
            return RespondToDomainAccess(action="respond_to_domain_access", decision="deny" if deny else "allow_all")
        if kind == "resource-decision":
            options = [str(o) for o in (request.resourceDecision or {}).get("options", [])]
            choice = next((o for o in options if "allow" in o.lower()), options[0] if options else "allowOnce")
            return PickResourceDecision(action="pick_resource_decision", decision=choice)
        if kind == "plan-review":
            gaps = plan_gaps(_plan_text(request), self.script.delivered_spoken())
            if gaps:
                quoted = "; ".join(f'"{g}"' for g in gaps)
                return ApproveOrReject(
                    action="approve_or_reject",
                    approved=False,
                    user_input=f"This plan leaves out something I asked for: {quoted}. Please include it.",
                )
        if kind == "text":
            if self.script.declines(request.message):
                return ApproveOrReject(action="approve_or_reject", approved=False, user_input=None)
            value = placeholder_value(request.message, corpus)
            return ApproveOrReject(action="approve_or_reject", approved=True, user_input=value)
        return ApproveOrReject(action="approve_or_reject", approved=True, user_input=None)

    def _scripted_setup(self, request: wire.ConfirmationRequest, corpus: str) -> ConfirmationChoice:
        params: dict[str, dict[str, Any]] = {}
        creds: dict[str, dict[str, str]] = {}
        working: list[str] = []
        for entry in request.setupRequests:
            for param, issue in entry.parameterIssues.items():
                if self.script.declines(f"{param} {issue}"):
                    continue
                params.setdefault(entry.node, {})[param] = placeholder_value(f"{param} {issue}", corpus)
            ctype = entry.credentialType
            if ctype is None:
                continue
            direction = self.script.credential_direction_for(ctype)
            if direction is None or not direction.engage or direction.auto:
                continue
            named = _named_credential(entry.existingCredentials, direction.names)
            creds[entry.node] = {ctype: named or "create"}
            if direction.working:
                working.append(ctype)
        if not params and not creds:
            return ApproveOrReject(action="approve_or_reject", approved=False, user_input=None)
        return ApplySetupWizard(
            action="apply_setup_wizard",
            node_parameters_json=json.dumps(params),
            node_credentials_json=json.dumps(creds) if creds else None,
            working_credential_types=sorted(set(working)),
        )

    def _scripted_credentials(self, request: wire.ConfirmationRequest) -> ConfirmationChoice:
        for entry in request.credentialRequests:
            direction = self.script.credential_direction_for(entry.credentialType)
            if direction is None or not direction.engage:
                continue
            return ChooseCredentialSetupOption(
                action="choose_credential_setup_option",
                option="auto" if direction.auto else "manual",
                credential_type=entry.credentialType,
                existing_credential_id=_named_credential(entry.existingCredentials, direction.names),
                credential_should_work=direction.working,
            )
        first = request.credentialRequests[0].credentialType
        return ChooseCredentialSetupOption(
            action="choose_credential_setup_option",
            option="skip",
            credential_type=first,
            existing_credential_id=None,
            credential_should_work=None,
        )

    # --- between runs --------------------------------------------------------------------------

    async def next_message(self, view: ConversationView) -> SendFollowUpMessage | None:
        return self.scripted_next(view)

    def scripted_next(self, view: ConversationView | None = None) -> SendFollowUpMessage | None:
        """The next scripted message; a run note on its turn ("[run the workflow yourself before
        answering]") also runs the last saved workflow first, when the case allows user execution."""
        self.last_source = "script"
        nxt = self.script.next_scripted_message()
        if nxt is None:
            self.stats.decision("declare_done", by_model=False)
            return None
        self.stats.decision("send_follow_up_message", by_model=False)
        run_id = self._workflow_to_run(view) if self.script.take_run_request() else None
        return SendFollowUpMessage(
            action="send_follow_up_message", message=nxt[0], rename_workflow_to=None, run_workflow_id=run_id
        )

    def _workflow_to_run(self, view: ConversationView | None) -> str | None:
        if view is None or not view.allow_user_execution:
            self.log.append(
                "a director note asks the user to run the workflow, but the case does not set "
                "allowUserExecution; not run"
            )
            return None
        if not view.saved_workflows:
            self.log.append("a director note asks the user to run the workflow, but none was saved yet; not run")
            return None
        return view.saved_workflows[-1].id


def _named_credential(existing: list[wire.ExistingCredential], names: tuple[str, ...]) -> str | None:
    for name in names:
        for cred in existing:
            if cred.name.lower() == name.lower() or name.lower() in cred.name.lower():
                return cred.id
    return None
