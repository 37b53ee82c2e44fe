"""The model-driven simulated user: decisions from an OpenAI-compatible chat API, structured output.

Each decision is one ``chat.completions.parse`` call with a pydantic ``response_format`` (one of the
two menus in ``user_proxy.actions``). Transient failures (connection, timeout, 429, 5xx, output that
does not parse) are retried up to ``ModelSettings.max_attempts`` times; after that, or on any other
failure, the scripted decision is used and counted (``fallback-no-decision``) — a model outage never
crashes a case. A spoken text that quotes a director note is never sent: the scripted decision is
used instead (``fallback-leak``).
"""

from __future__ import annotations

import re
from typing import TypeVar

import anyio
import openai
import pydantic
from openai.types.chat import ChatCompletionMessageParam
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from threadcase import wire
from threadcase.case.notes import Script, split_notes
from threadcase.models import ModelSettings
from threadcase.user_proxy.actions import (
    AnswerQuestions,
    ApplySetupWizard,
    ApproveOrReject,
    ConfirmationDecision,
    SendFollowUpMessage,
    UserTurnDecision,
)
from threadcase.user_proxy.base import ConversationView
from threadcase.user_proxy.prompts import confirmation_messages, user_turn_messages
from threadcase.user_proxy.scripted import ConfirmationChoice, ScriptedProxy
from threadcase.user_proxy.stats import ProxyStats

__all__ = ["ModelProxy"]

D = TypeVar("D", ConfirmationDecision, UserTurnDecision)


class _NoParse(Exception):
    """The model answered, but not with the structured output asked for."""


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code == 429
    return isinstance(exc, (_NoParse, pydantic.ValidationError, TimeoutError, openai.LengthFinishReasonError))


class ModelProxy(ScriptedProxy):
    """The simulated user, deciding with a model; the scripted proxy is its fallback."""

    def __init__(
        self,
        script: Script,
        models: ModelSettings,
        stats: ProxyStats | None = None,
        *,
        retry_wait_seconds: float = 0.5,
    ) -> None:
        super().__init__(script, stats)
        if models.proxy_model is None:
            raise ValueError("ModelProxy needs ModelSettings.proxy_model")
        self.models = models
        self.model_name: str = models.proxy_model
        self._client: openai.AsyncOpenAI | None = None
        self._retry_wait = retry_wait_seconds

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

    async def _call(self, messages: list[dict[str, str]], response_format: type[D]) -> D | None:
        if self._client is None:
            self._client = self.models.client()
        client = self._client
        sent: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": m["content"]}
            if m["role"] == "system"
            else {"role": "user", "content": m["content"]}
            for m in messages
        ]

        async def attempt() -> D:
            self.stats["model-calls"] += 1
            with anyio.fail_after(self.models.timeout_seconds):
                completion = await client.chat.completions.parse(
                    model=self.model_name, messages=sent, response_format=response_format
                )
            parsed = completion.choices[0].message.parsed if completion.choices else None
            if parsed is None:
                raise _NoParse("no parsed output")
            return parsed

        try:
            async for retry in AsyncRetrying(
                stop=stop_after_attempt(max(1, self.models.max_attempts)),
                wait=wait_exponential(multiplier=self._retry_wait, max=10 * self._retry_wait),
                retry=retry_if_exception(_transient),
                reraise=True,
            ):
                with retry:
                    return await attempt()
        except (openai.OpenAIError, pydantic.ValidationError, TimeoutError, _NoParse) as exc:
            self.log.append(f"proxy model gave no decision: {type(exc).__name__}: {str(exc)[:200]}")
        self.stats["fallback-no-decision"] += 1
        return None

    def _leaks(self, text: str | None) -> bool:
        """True when ``text`` would reveal a director note (bracketed, or a note quoted verbatim)."""
        if not text:
            return False
        if split_notes(text)[1]:
            return True
        lowered = text.lower()
        return any(len(note) >= 12 and note.lower() in lowered for note in self.script.notes)

    async def decide_confirmation(
        self, request: wire.ConfirmationRequest, view: ConversationView
    ) -> ConfirmationChoice | None:
        messages = confirmation_messages(self.script, view.turns, request.model_dump(mode="json"))
        decided = await self._call(messages, ConfirmationDecision)
        if decided is None:
            return None
        action = decided.decision
        spoken: list[str | None] = []
        if isinstance(action, AnswerQuestions):
            spoken = [a.custom_text for a in action.answers]
        elif isinstance(action, ApproveOrReject):
            spoken = [action.user_input]
        elif isinstance(action, ApplySetupWizard):
            spoken = [action.node_parameters_json]
        if any(self._leaks(s) for s in spoken):
            self.stats["fallback-leak"] += 1
            self.log.append(f"model answer to request {request.requestId} quoted a director note; scripted instead")
            return None
        if isinstance(action, AnswerQuestions):
            action = self._hold_declines(action, request)
        return action

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

    async def next_message(self, view: ConversationView) -> SendFollowUpMessage | None:
        saved = [(w.id, w.name) for w in view.saved_workflows] if view.allow_user_execution else None
        messages = user_turn_messages(
            self.script, view.turns, saved_workflows=saved, follow_ups_left=view.follow_ups_left
        )
        decided = await self._call(messages, UserTurnDecision)
        if decided is None:
            return self._fallback_next(view)
        action = decided.decision
        if not isinstance(action, SendFollowUpMessage):
            self.stats.decision("declare_done", by_model=True)
            return None
        message = action.message.strip()
        if not message or self._leaks(message):
            self.stats["fallback-leak" if message else "fallback-unencoded"] += 1
            return self._fallback_next(view)
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
