"""One structured model call for any role, with its settings, bounded attempts, usage and recorded answers.

Every model call threadcase makes (the user proxy's decisions, the judge's verdicts, the scenario
verifier's, the calibration's) goes through :func:`structured_call`:

- the role's settings (:meth:`ModelSettings.role`): model, ``temperature``, ``seed`` and
  ``max_tokens`` are sent with the request; each attempt has the role's timeout; a timeout says which
  role, which model, after how long and which setting raises it;
- retries are for transient failures (connection, timeouts, 408, 409, 429, 5xx) and malformed
  answers (the model may well answer correctly next time); a 4xx that will not change stops at once;
- the token usage of every answer is added up per call (input, cached input, output);
- ``--record-models`` stores the answer (or the failure) under the request's hash, ``--replay-models``
  answers from the store and raises :class:`~threadcase.llm.store.RecordedAnswerMissing` (naming role
  and case) for a request it has no answer for, never calling the live model.

A call returns the parsed answer, or None with the reasons each attempt failed: a model failure is
never an exception (a judge that produced nothing makes its units *not judged*, a proxy that decided
nothing falls back to its script). Only a replay miss raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
import pydantic
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from threadcase.llm.store import AnswerStore, RecordedAnswer, request_key
from threadcase.models import ModelRole, ModelSettings, ModelUsage, Role

if TYPE_CHECKING:
    # Imported where a call is made: loading the SDK costs ~0.4 s of CPU, which a run with no model
    # (and every run's start) should not pay.
    import openai

__all__ = ["CallOutcome", "JsonSchema", "structured_call"]

T = TypeVar("T")


@dataclass(frozen=True)
class JsonSchema:
    """An answer shape given as a JSON schema (strict structured output)."""

    name: str
    schema: dict[str, Any]


class _Retryable(Exception):
    pass


@dataclass
class CallOutcome(Generic[T]):
    """The parsed answer (None when every attempt failed) and what happened on the way."""

    value: T | None = None
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage)
    replayed: bool = False


def _describe(exc: BaseException, role: ModelRole) -> str:
    import openai

    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return (
            f"{role.label} model {role.model!r} gave no answer within {role.timeout_seconds:g} s; "
            f"raise it with {role.timeout_hint()}"
        )
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from the {role.label} model API ({role.model!r})"
    if isinstance(exc, openai.APIConnectionError):
        return f"{type(exc).__name__}: no answer from the {role.label} model API ({role.model!r})"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return True


def _response_format(shape: JsonSchema | type[pydantic.BaseModel]) -> dict[str, Any]:
    """The shape as the request describes it (what the request hash covers)."""
    if isinstance(shape, JsonSchema):
        return {"type": "json_schema", "json_schema": {"name": shape.name, "strict": True, "schema": shape.schema}}
    return {"type": "json_schema", "json_schema": {"name": shape.__name__, "schema": shape.model_json_schema()}}


def _usage_of(completion: Any) -> ModelUsage:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return ModelUsage(calls=1)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return ModelUsage(
        calls=1,
        input_tokens=usage.prompt_tokens or 0,
        cached_input_tokens=cached or 0,
        output_tokens=usage.completion_tokens or 0,
    )


async def structured_call(
    models: ModelSettings,
    role_name: Role,
    *,
    case: str,
    messages: list[dict[str, Any]],
    shape: JsonSchema | type[pydantic.BaseModel],
    parse: Callable[[str], T],
    client: openai.AsyncOpenAI | None = None,
) -> CallOutcome[T]:
    """Ask ``role_name``'s model for an answer of ``shape``; ``parse`` turns its text into ``T`` or raises.

    ``case`` names what the call is for (in a replay miss, in recorded answers). ``client``: an SDK
    client the caller keeps open across calls; None opens one for this call.
    """
    role = models.role(role_name)
    if role is None:
        raise ValueError(f"no model configured for the {role_name} role")
    request: dict[str, Any] = {"model": role.model, "messages": messages, "response_format": _response_format(shape)}
    if role.temperature is not None:
        request["temperature"] = role.temperature
    if role.seed is not None:
        request["seed"] = role.seed
    if role.max_tokens is not None:
        request["max_tokens"] = role.max_tokens
    outcome: CallOutcome[T] = CallOutcome()
    store = AnswerStore.of(models)
    key = request_key(role_name, request) if store is not None else ""

    if store is not None and store.replay:
        recorded = store.load(key, role=role_name, case=case)
        outcome.replayed = True
        outcome.attempts = 1
        outcome.usage.add(recorded.usage)
        if recorded.content is None:
            outcome.errors = [*recorded.errors, "(replayed: the recorded call failed too)"]
            return outcome
        try:
            outcome.value = parse(recorded.content)
        except (ValueError, TypeError, KeyError, pydantic.ValidationError) as exc:
            outcome.errors.append(f"recorded answer does not parse: {_describe(exc, role)}")
        return outcome

    import openai

    content: str | None = None

    async def _attempt(sdk: openai.AsyncOpenAI) -> T:
        nonlocal content
        outcome.attempts += 1
        try:
            with anyio.fail_after(role.timeout_seconds):
                if isinstance(shape, JsonSchema):
                    completion: Any = await sdk.chat.completions.create(**request)
                else:
                    # The SDK turns the pydantic model into its strict schema (the hash covers the model's own).
                    completion = await sdk.chat.completions.parse(**{**request, "response_format": shape})
        except (openai.OpenAIError, TimeoutError) as exc:
            outcome.errors.append(_describe(exc, role))
            if _transient(exc):
                raise _Retryable from exc
            raise
        except pydantic.ValidationError as exc:  # parse() validates the content itself
            outcome.usage.add(ModelUsage(calls=1))
            outcome.errors.append(f"malformed answer: {_describe(exc, role)}")
            raise _Retryable from exc
        outcome.usage.add(_usage_of(completion))
        text = completion.choices[0].message.content if completion.choices else None
        try:
            value = parse(text or "")
        except (ValueError, TypeError, KeyError, pydantic.ValidationError) as exc:
            outcome.errors.append(f"malformed answer: {_describe(exc, role)}")
            raise _Retryable from exc
        content = text
        return value

    async def _run(sdk: openai.AsyncOpenAI) -> None:
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(role.attempts),
                wait=wait_random_exponential(multiplier=0.25, max=4),
                retry=retry_if_exception_type(_Retryable),
                reraise=True,
            ):
                with attempt:
                    outcome.value = await _attempt(sdk)
        except (_Retryable, openai.OpenAIError):
            outcome.value = None

    if client is not None:
        await _run(client)
    else:
        async with models.client(role.timeout_seconds) as sdk:
            await _run(sdk)
    if store is not None:
        store.save(
            RecordedAnswer(
                key=key,
                role=role_name,
                case=case,
                model=role.model,
                content=content if outcome.value is not None else None,
                errors=[] if outcome.value is not None else outcome.errors,
                usage=outcome.usage,
                request=request,
            )
        )
    return outcome


def parse_json(parse: Callable[[Any], T]) -> Callable[[str], T]:
    """``parse`` applied to the answer text decoded as JSON (for answers given as a :class:`JsonSchema`)."""

    def _parse(text: str) -> T:
        return parse(json.loads(text))

    return _parse
