"""The scripted (no-model) simulated user, and the answer pipeline every proxy shares.

Scripted mode is what runs when no proxy model is configured. It is deterministic and follows the
directives its notes were read into (``threadcase.case.directives``), each at its moment
(:class:`~threadcase.user_proxy.follow.Director`):

- it sends the authored user turns in order, each as its own message (notes stripped; a
  one-at-a-time list one item per message; a note-only turn's "say …");
- it answers a question with, in order: the value a note gives for it, a value the script's words
  state, an offered option the script mentions, else a value that is plainly a placeholder
  (``#placeholder-channel``), recorded as invented — and skips it when a note declines it, then and
  whenever it comes up again (a setup card's parameter included);
- it pushes back on a plan as a note says (with its feedback, until its condition holds), approves or
  rejects as a note says, and otherwise rejects a plan that leaves out a service, channel, address or
  URL the user stated, and approves the rest;
- it engages, defers or picks credentials per service as a note says, and defers them otherwise;
- what it cannot do as a note says is recorded as a fault (the case is then not judged).

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
from threadcase.case.details import stated_values
from threadcase.case.directives import Credential, WebAccess
from threadcase.case.notes import Script
from threadcase.records import ScriptDelivery, WidgetAnsweredBy
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
from threadcase.user_proxy.follow import Bound, Director, ValueChoice
from threadcase.user_proxy.stats import ProxyStats

__all__ = ["ConfirmationChoice", "ScriptedProxy", "plan_gaps"]

ConfirmationChoice = (
    AnswerQuestions
    | ApplySetupWizard
    | ApproveOrReject
    | RespondToDomainAccess
    | PickResourceDecision
    | ChooseCredentialSetupOption
)

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
_CREDENTIAL_QUESTION = re.compile(r"\bcredential\b", re.IGNORECASE)


def plan_gaps(plan_text: str, said: str) -> list[str]:
    """Requirements the user stated that a plan leaves out: the quoted sentences that state them.

    Only concrete requirements count: a named service, a #channel, an e-mail address, a URL.
    """
    plan = plan_text.lower()
    gaps: list[str] = []
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", said) if s.strip()]
    wanted = [value for kind in ("channel", "email", "url") for value in stated_values(kind, said)]
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


def _plan_steps(request: wire.ConfirmationRequest) -> str:
    """What the plan would build: its steps (see :func:`~threadcase.user_proxy.follow.plan_condition_met`)."""
    steps = " ".join(f"{s.title} {s.detail}" for s in request.plan)
    return steps or request.message


def _credential_type_of(question: wire.Question) -> str | None:
    """The credential type a "which credential should I use?" question is about, if it is one."""
    if question.id.startswith("credential:"):
        return question.id.split(":", 1)[1]
    if question.options and _CREDENTIAL_QUESTION.search(question.question):
        return question.question
    return None


class ScriptedProxy:
    """The scripted simulated user; also the base and fallback of the model proxy."""

    def __init__(self, script: Script, stats: ProxyStats | None = None) -> None:
        self.script = script
        self.director = Director(script)
        self.stats = stats if stats is not None else ProxyStats()
        self._cache: dict[str, ProxyAnswer] = {}
        self.log: list[str] = []
        """Diagnostics (dropped entries, fallbacks); the conversation copies them into warnings."""
        self.last_source: Literal["script", "model"] = "script"
        """Who produced the last follow-up message."""

    @property
    def uses_model(self) -> bool:
        return False

    def might_continue(self) -> bool:
        return self.script.has_more

    async def aclose(self) -> None:
        """Release model clients (none here)."""

    def delivery(self, *, ended_by: str, follow_ups: int, budget: int | None) -> ScriptDelivery:
        """How the script went (turns delivered, directives fired, values given), once it is over.

        A model user reads the notes as text: its directives are not tracked (nor are notes it could
        not follow: it reads every note), only which turns it delivered."""
        delivered = self.director.delivery(ended_by=ended_by, follow_ups=follow_ups, budget=budget)
        if not self.uses_model:
            return delivered
        return delivered.model_copy(update={"tracked": False, "directives": [], "not_understood": []})

    # --- widgets -------------------------------------------------------------------------------

    def _direction_pending(self, request: wire.ConfirmationRequest) -> bool:
        """Whether a note may govern this widget, so the deterministic rules must step aside.

        The scripted user knows which directive governs now; the model user keeps n8n's
        content-agnostic rule (any note still ahead).
        """
        if self.uses_model:
            return self.script.pending_direction
        kind = widget_kind(request)
        if kind in ("domain-access", "web-search"):
            return any(isinstance(b.directive, WebAccess) for b in self.director.active())
        types = [r.credentialType for r in request.credentialRequests]
        types += [r.credentialType for r in request.setupRequests if r.credentialType]
        return self.director.engages_any(types)

    async def answer(
        self, request: wire.ConfirmationRequest, view: ConversationView, credentials: CredentialProvider
    ) -> ProxyAnswer:
        cached = self._cache.get(request.requestId)
        if cached is not None:
            self.stats["repeat"] += 1
            return cached.model_copy(update={"answered_by": "repeat"})
        short = deterministic_answer(request, pending_direction=self._direction_pending(request))
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
        """The scripted decision for a widget (never raises); fires the directives it follows."""
        kind = widget_kind(request)
        if request.setupRequests:
            return self._scripted_setup(request)
        if request.credentialRequests:
            return self._scripted_credentials(request)
        if request.questions:
            return self._scripted_questions(request)
        if kind in ("domain-access", "web-search"):
            web = self.director.web_access()
            allow = web is None or web[0]
            return RespondToDomainAccess(action="respond_to_domain_access", decision="allow_all" if allow else "deny")
        if kind == "resource-decision":
            options = [str(o) for o in (request.resourceDecision or {}).get("options", [])]
            choice = next((o for o in options if "allow" in o.lower()), options[0] if options else "allowOnce")
            return PickResourceDecision(action="pick_resource_decision", decision=choice)
        if kind in ("plan-review", "approval") or request.plan:
            return self._scripted_plan(request, kind)
        if kind == "text":
            said = self._value(request.requestId, request.message, [])
            if said.value is None:
                return ApproveOrReject(action="approve_or_reject", approved=False, user_input=None)
            return ApproveOrReject(action="approve_or_reject", approved=True, user_input=said.value)
        return ApproveOrReject(action="approve_or_reject", approved=True, user_input=None)

    def _value(self, request_id: str, asked: str, options: list[str], siblings: list[str] | None = None) -> ValueChoice:
        choice = self.director.value_for(request_id, asked, options, siblings or [])
        if choice.source == "invented":
            self.stats["value-invented"] += 1
        return choice

    def _scripted_plan(self, request: wire.ConfirmationRequest, kind: str) -> ApproveOrReject:
        plan_text = _plan_text(request)
        decided = self.director.plan_review(_plan_steps(request), request.message)
        audit = kind == "plan-review" or bool(request.plan)
        if decided is not None:
            approve, feedback, bound = decided
            plan = bound.directive
            # A note's push-back speaks for the user; a plain "approve" still never waves through a
            # plan that drops what the user asked for.
            if not (approve and audit and getattr(plan, "feedback", None) is None):
                return ApproveOrReject(action="approve_or_reject", approved=approve, user_input=feedback)
        if audit:
            gaps = plan_gaps(plan_text, self.script.delivered_spoken())
            if gaps:
                quoted = "; ".join(f'"{g}"' for g in gaps)
                return ApproveOrReject(
                    action="approve_or_reject",
                    approved=False,
                    user_input=f"This plan leaves out something I asked for: {quoted}. Please include it.",
                )
        return ApproveOrReject(action="approve_or_reject", approved=True, user_input=None)

    def _scripted_questions(self, request: wire.ConfirmationRequest) -> AnswerQuestions:
        answers = []
        asked = [q.question for q in request.questions if _credential_type_of(q) is None]
        for q in request.questions:
            credential_type = _credential_type_of(q)
            if credential_type is not None:
                answers.append(self._credential_question(request, q, credential_type))
                continue
            choice = self._value(request.requestId, q.question, list(q.options), asked)
            if choice.value is None:
                answers.append(
                    QuestionAnswerItem(question_id=q.id, selected_options=[], custom_text=None, skipped=True)
                )
            elif choice.option is not None:
                answers.append(
                    QuestionAnswerItem(
                        question_id=q.id, selected_options=[choice.option], custom_text=None, skipped=False
                    )
                )
            else:
                answers.append(
                    QuestionAnswerItem(question_id=q.id, selected_options=[], custom_text=choice.value, skipped=False)
                )
        return AnswerQuestions(action="answer_questions", answers=answers)

    def _credential_question(
        self, request: wire.ConfirmationRequest, question: wire.Question, credential_type: str
    ) -> QuestionAnswerItem:
        """ "Which Slack credential should I use?": the note's pick, else deferred (skipped)."""
        skipped = QuestionAnswerItem(question_id=question.id, selected_options=[], custom_text=None, skipped=True)
        bound = self.director.credential_for(credential_type)
        if bound is None:
            return skipped
        self.director.fire(bound)
        direction = bound.directive
        assert isinstance(direction, Credential)
        if direction.action == "defer":
            return skipped
        pick = self._pick_named(bound, [(o, o) for o in question.options])
        if pick is None and not direction.names and len(question.options) == 1:
            pick = question.options[0]
        if pick is None:
            if not direction.names:
                self.director.fault(
                    bound,
                    f"{len(question.options)} credentials offered ({', '.join(question.options)}) and the note "
                    "names none to pick",
                )
            return skipped
        return QuestionAnswerItem(question_id=question.id, selected_options=[pick], custom_text=None, skipped=False)

    def _pick_named(self, bound: Bound, offered: list[tuple[str, str]]) -> str | None:
        """The id of the offered ``(id, name)`` the note names; a fault when it names one not offered."""
        direction = bound.directive
        assert isinstance(direction, Credential)
        for name in direction.names:
            for ident, label in offered:
                if label.lower() == name.lower() or name.lower() in label.lower():
                    return ident
        if direction.names:
            names = ", ".join(label for _, label in offered) or "none"
            wanted = ", ".join(repr(n) for n in direction.names)
            self.director.fault(bound, f"the note names {wanted}, which is not among the credentials offered ({names})")
        return None

    def _scripted_setup(self, request: wire.ConfirmationRequest) -> ConfirmationChoice:
        params: dict[str, dict[str, Any]] = {}
        creds: dict[str, dict[str, str]] = {}
        working: list[str] = []
        asked = [
            f"{entry.node_name}.{param}: {entry.issue_text(param)}"
            for entry in request.setupRequests
            for param in entry.parameterIssues
        ]
        for entry in request.setupRequests:
            for param in entry.parameterIssues:
                issue = entry.issue_text(param)
                choice = self._value(request.requestId, f"{entry.node_name}.{param}: {issue}", [], asked)
                if choice.value is not None:
                    params.setdefault(entry.node_name, {})[param] = choice.value
            ctype = entry.credentialType
            if ctype is None:
                continue
            bound = self.director.credential_for(ctype, entry.node_type)
            if bound is None:
                continue
            self.director.fire(bound)
            direction = bound.directive
            assert isinstance(direction, Credential)
            if direction.action == "defer" or direction.option == "auto":
                continue  # a setup card has no automatic option: asking for it is deferring here
            existing = [(c.id, c.name) for c in entry.existingCredentials]
            named = self._pick_named(bound, existing)
            if named is None and direction.names:
                continue
            if named is None and not direction.new and len(existing) >= 2:
                self.director.fault(
                    bound,
                    f"{len(existing)} existing {ctype} credentials on the card and the note names none to pick",
                )
                continue
            creds[entry.node_name] = {ctype: named or ("new" if direction.new else "create")}
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
            bound = self.director.credential_for(entry.credentialType)
            if bound is None:
                continue
            self.director.fire(bound)
            direction = bound.directive
            assert isinstance(direction, Credential)
            if direction.action == "defer":
                continue
            existing = [(c.id, c.name) for c in entry.existingCredentials]
            named = self._pick_named(bound, existing)
            if named is None and direction.names:
                continue
            if named is None and not direction.new and len(existing) >= 2 and direction.option == "manual":
                self.director.fault(
                    bound,
                    f"{len(existing)} existing {entry.credentialType} credentials on the card and the note names "
                    "none to pick",
                )
                continue
            return ChooseCredentialSetupOption(
                action="choose_credential_setup_option",
                option=direction.option,
                credential_type=entry.credentialType,
                existing_credential_id=named or ("new" if direction.new else None),
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
        message, turn = nxt
        if turn is not None:
            self.director.turn_delivered(turn)
        self.stats.decision("send_follow_up_message", by_model=False)
        run_id = None
        for asking in self.script.take_run_request():
            run_id, why = self._workflow_to_run(view)
            self.director.run_requested(asking, ran=run_id is not None, why_not=why)
        return SendFollowUpMessage(
            action="send_follow_up_message", message=message, rename_workflow_to=None, run_workflow_id=run_id
        )

    def _workflow_to_run(self, view: ConversationView | None) -> tuple[str | None, str | None]:
        if view is None or not view.allow_user_execution:
            why = "the case does not set allowUserExecution"
            self.log.append(f"a director note asks the user to run the workflow, but {why}; not run")
            return None, why
        if not view.saved_workflows:
            why = "no workflow was saved yet"
            self.log.append(f"a director note asks the user to run the workflow, but {why}; not run")
            return None, why
        return view.saved_workflows[-1].id, None
