"""One structured model call with bounded attempts: the judge's and the verifier's transport.

A call returns the parsed answer or None with the reasons each attempt failed; it never raises for a
model failure, because a judge that produced nothing makes its units *not judged*, never a crash of
the case. Every attempt has its own deadline; retries are for transient failures (connection, 408,
409, 429, 5xx, timeouts) and for malformed answers (the model may well answer correctly next time).
A 4xx that will not change (a bad request, a wrong key) stops at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
import pydantic
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from threadcase.models import ModelSettings

if TYPE_CHECKING:
    # Imported where a call is made: loading the SDK costs ~0.4 s of CPU, which a run with no judge
    # model (and every run's start) should not pay.
    import openai

__all__ = ["CallOutcome", "structured_call"]

T = TypeVar("T")


class _Retryable(Exception):
    pass


@dataclass
class CallOutcome(Generic[T]):
    """The parsed answer (None when every attempt failed) and what happened on the way."""

    value: T | None = None
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0


def _describe(exc: BaseException) -> str:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from the model API"
    if isinstance(exc, openai.APIConnectionError | TimeoutError):
        return f"{type(exc).__name__}: no answer from the model API"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return True


async def structured_call(
    models: ModelSettings,
    *,
    system: str,
    user_parts: list[str],
    schema_name: str,
    schema: dict[str, Any],
    parse: Callable[[Any], T],
) -> CallOutcome[T]:
    """Ask the judge model for a JSON answer matching ``schema``; ``parse`` turns it into ``T`` or raises.

    ``user_parts`` become separate text parts of one user message, static context first, so providers
    that cache prompt prefixes can reuse it across a suite.
    """
    import openai

    assert models.judge_model is not None
    outcome: CallOutcome[T] = CallOutcome()
    messages: list[Any] = [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "text", "text": part} for part in user_parts]},
    ]
    response_format: Any = {
        "type": "json_schema",
        "json_schema": {"name": schema_name, "strict": True, "schema": schema},
    }

    async def _attempt(client: openai.AsyncOpenAI) -> T:
        outcome.attempts += 1
        try:
            with anyio.fail_after(models.timeout_seconds):
                completion = await client.chat.completions.create(
                    model=models.judge_model or "", messages=messages, response_format=response_format
                )
        except (openai.OpenAIError, TimeoutError) as exc:
            outcome.errors.append(_describe(exc))
            if _transient(exc):
                raise _Retryable from exc
            raise
        if completion.usage is not None:
            outcome.input_tokens += completion.usage.prompt_tokens
            outcome.output_tokens += completion.usage.completion_tokens
            details = completion.usage.prompt_tokens_details
            outcome.cached_input_tokens += (details.cached_tokens or 0) if details is not None else 0
        content = completion.choices[0].message.content if completion.choices else None
        try:
            return parse(json.loads(content or ""))
        except (ValueError, TypeError, KeyError, pydantic.ValidationError) as exc:
            outcome.errors.append(f"malformed answer: {_describe(exc)}")
            raise _Retryable from exc

    async with models.client() as client:
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(max(1, models.max_attempts)),
                wait=wait_random_exponential(multiplier=0.25, max=4),
                retry=retry_if_exception_type(_Retryable),
                reraise=True,
            ):
                with attempt:
                    outcome.value = await _attempt(client)
        except (_Retryable, openai.OpenAIError):
            outcome.value = None
    return outcome
