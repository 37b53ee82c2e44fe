"""The model-driven simulated user: decisions from an OpenAI-compatible chat API, structured output.

Each decision is one structured call (:func:`threadcase.llm.structured_call`, role ``proxy``) for one
of the two menus in ``user_proxy.actions``, with the proxy role's settings (timeout, attempts,
temperature, seed, max_tokens) and its token usage added to the statistics. After its attempts, or on
any other failure, the scripted decision is used and counted (``fallback-no-decision``) — a model
outage never crashes a case; only a replay miss (``--replay-models`` with no recorded answer) ends it.

What the model wants to say is checked before anything is sent (``user_proxy.faults``): a message that
re-sends a delivered scripted turn, repeats the previous message, quotes a director note or the
proxy's instructions, speaks as the assistant, or is empty — and a widget answer whose text quotes a
note or the instructions or speaks as the assistant — is counted by kind (``fault:<kind>``), the
decision is re-asked once with the reason (``reasked``), and a second faulty decision falls back to the
script (``fallback-fault``). A director note is therefore never sent.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import openai

from threadcase import wire
from threadcase.case.notes import Script
from threadcase.llm import structured_call
from threadcase.models import ModelSettings
from threadcase.records import Turn
from threadcase.user_proxy.actions import (
    AnswerQuestions,
    ApplySetupWizard,
    ApproveOrReject,
    ConfirmationDecision,
    SendFollowUpMessage,
    UserTurnDecision,
)
from threadcase.user_proxy.base import ConversationView
from threadcase.user_proxy.faults import Fault, answer_fault, message_fault
from threadcase.user_proxy.prompts import (
    CONFIRMATION_INSTRUCTIONS,
    REASK,
    SYSTEM_PROMPT,
    USER_TURN_INSTRUCTIONS,
    confirmation_messages,
    user_turn_messages,
)
from threadcase.user_proxy.scripted import ConfirmationChoice, ScriptedProxy
from threadcase.user_proxy.stats import ProxyStats

__all__ = ["ModelProxy"]

D = TypeVar("D", ConfirmationDecision, UserTurnDecision)

_INSTRUCTIONS = (SYSTEM_PROMPT, CONFIRMATION_INSTRUCTIONS, USER_TURN_INSTRUCTIONS)
"""What the proxy is told, which the user must never recite."""


class ModelProxy(ScriptedProxy):
    """The simulated user, deciding with a model; the scripted proxy is its fallback."""

    def __init__(
        self,
        script: Script,
        models: ModelSettings,
        stats: ProxyStats | None = None,
        *,
        case: str = "the case",
    ) -> None:
        super().__init__(script, stats)
        role = models.role("proxy")
        if role is None:
            raise ValueError("ModelProxy needs ModelSettings.proxy_model")
        self.models = models
        self.model_name: str = role.model
        self.case = case
        """What the calls are for, as a replay miss names it (``case 'slug' iteration 0``)."""
        self._timeout = role.timeout_seconds
        self._client: openai.AsyncOpenAI | None = None

    @property
    def uses_model(self) -> bool:
        return True

    def might_continue(self) -> bool:
        # Only the model knows whether the user still wants something; assume they might.
        return True

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def _call(self, messages: list[dict[str, Any]], response_format: type[D]) -> D | None:
        if self._client is None:
            self._client = self.models.client(self._timeout)
        outcome = await structured_call(
            self.models,
            "proxy",
            case=self.case,
            messages=messages,
            shape=response_format,
            parse=response_format.model_validate_json,
            client=self._client,
        )
        self.stats["model-calls"] += outcome.attempts
        self.stats.add_usage(outcome.usage)
        if outcome.value is None:
            self.log.append("proxy model gave no decision: " + "; ".join(outcome.errors[-2:]))
            self.stats["fallback-no-decision"] += 1
        return outcome.value

    def _reasked(self, messages: list[dict[str, Any]], decided: Any, fault: Fault) -> list[dict[str, Any]]:
        """The same decision's messages, the rejected answer and why it was rejected appended."""
        self.stats["reasked"] += 1
        answer = json.dumps(decided.model_dump(mode="json", by_alias=True), ensure_ascii=False)
        return [
            *messages,
            {"role": "assistant", "content": answer},
            {"role": "user", "content": REASK.format(reason=fault.reason)},
        ]

    def _caught(self, fault: Fault, what: str, text: str) -> None:
        self.stats.fault(fault.kind)
        self.log.append(f"{what} not sent ({fault.kind}: {fault.reason}): {text[:160]!r}")

    # --- widgets -------------------------------------------------------------------------------

    def _answer_fault(self, action: ConfirmationChoice, view: ConversationView) -> Fault | None:
        spoken: list[str | None] = []
        if isinstance(action, AnswerQuestions):
            spoken = [a.custom_text for a in action.answers]
        elif isinstance(action, ApproveOrReject):
            spoken = [action.user_input]
        elif isinstance(action, ApplySetupWizard):
            spoken = [action.node_parameters_json]
        last_assistant = _last_text(view.turns, "assistant")
        for text in spoken:
            fault = answer_fault(
                text, notes=self.script.notes, instructions=_INSTRUCTIONS, last_assistant=last_assistant
            )
            if fault is not None:
                return fault
        return None

    async def decide_confirmation(
        self, request: wire.ConfirmationRequest, view: ConversationView
    ) -> ConfirmationChoice | None:
        messages: list[dict[str, Any]] = list(
            confirmation_messages(self.script, view.turns, request.model_dump(mode="json"))
        )
        for attempt in range(2):
            decided = await self._call(messages, ConfirmationDecision)
            if decided is None:
                return None
            action = decided.decision
            fault = self._answer_fault(action, view)
            if fault is None:
                if isinstance(action, AnswerQuestions):
                    action = self._hold_declines(action, request)
                return action
            self._caught(fault, f"model answer to request {request.requestId}", json.dumps(decided.model_dump()))
            if attempt == 0:
                messages = self._reasked(messages, decided, fault)
        self.stats["fallback-fault"] += 1
        return None

    def _hold_declines(self, action: AnswerQuestions, request: wire.ConfirmationRequest) -> AnswerQuestions:
        """A value the directions say to withhold is never sent, whatever the model answered."""
        texts = {q.id: q.question for q in request.questions}
        answers = []
        for item in action.answers:
            gave_value = bool(item.custom_text or item.selected_options)
            if gave_value and not item.skipped and self.script.declines(texts.get(item.question_id, "")):
                self.stats["declined-held"] += 1
                self.log.append(f"model answered declined question {item.question_id!r}; sent as skipped")
                item = item.model_copy(update={"selected_options": [], "custom_text": None, "skipped": True})
            answers.append(item)
        return action.model_copy(update={"answers": answers})

    # --- between runs --------------------------------------------------------------------------

    def message_fault(self, message: str, view: ConversationView) -> Fault | None:
        """What is wrong with sending ``message`` now, if anything (see ``user_proxy.faults``)."""
        unsent = {t.index for t in self.script.unsent_user_turns()}
        user_turns = [t for t in self.script.turns if t.role == "user"]
        return message_fault(
            message,
            notes=self.script.notes,
            previous_user=_last_text(view.turns, "user"),
            delivered=[t.spoken for t in user_turns if t.index not in unsent],
            pending=[*self.script.remaining_spoken(), *(t.spoken for t in user_turns if t.index in unsent)],
            instructions=_INSTRUCTIONS,
            last_assistant=_last_text(view.turns, "assistant"),
        )

    async def next_message(self, view: ConversationView) -> SendFollowUpMessage | None:
        saved = [(w.id, w.name) for w in view.saved_workflows] if view.allow_user_execution else None
        messages: list[dict[str, Any]] = list(
            user_turn_messages(self.script, view.turns, saved_workflows=saved, follow_ups_left=view.follow_ups_left)
        )
        for attempt in range(2):
            decided = await self._call(messages, UserTurnDecision)
            if decided is None:
                return self._fallback_next(view)
            action = decided.decision
            if not isinstance(action, SendFollowUpMessage):
                self.stats.decision("declare_done", by_model=True)
                return None
            message = action.message.strip()
            fault = self.message_fault(message, view)
            if fault is None:
                return self._send(action, message, view)
            self._caught(fault, "model message", message)
            if attempt == 0:
                messages = self._reasked(messages, decided, fault)
        self.stats["fallback-fault"] += 1
        return self._fallback_next(view)

    def _send(self, action: SendFollowUpMessage, message: str, view: ConversationView) -> SendFollowUpMessage:
        run_id = action.run_workflow_id
        if run_id is not None and (not view.allow_user_execution or run_id not in {w.id for w in view.saved_workflows}):
            self.log.append(f"dropped runWorkflowId {run_id!r}: not a saved workflow or user execution not allowed")
            run_id = None
        self.stats.decision("send_follow_up_message", by_model=True)
        self.last_source = "model"
        self._mark_delivered(message)
        return action.model_copy(update={"message": message, "run_workflow_id": run_id})

    def _fallback_next(self, view: ConversationView) -> SendFollowUpMessage | None:
        """No model decision between runs: the next plain scripted turn if it carries no direction."""
        nxt = next(iter(self.script.unsent_user_turns()), None)
        if nxt is None or nxt.has_notes or not nxt.spoken:
            self.stats.decision("declare_done", by_model=False)
            return None
        return self.scripted_next(view)

    def _mark_delivered(self, message: str) -> None:
        """When the model delivers a scripted turn (verbatim or nearly), it is no longer pending."""
        words = set(re.findall(r"\w+", message.lower()))
        for turn in self.script.unsent_user_turns():
            turn_words = set(re.findall(r"\w+", turn.spoken.lower()))
            if turn_words and len(turn_words & words) / len(turn_words) >= 0.8:
                self.script.mark_sent(turn.index)
                break


def _last_text(turns: list[Turn], role: str) -> str | None:
    return next((t.text for t in reversed(turns) if t.role == role and t.text), None)
