"""The judge's and the verifier's request shape: a system prompt, then one user message in parts.

``user_parts`` become separate text parts of one user message, static context first, so providers
that cache prompt prefixes can reuse it across a suite. The call itself (settings, attempts, usage,
recorded answers) is :func:`threadcase.llm.structured_call`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from threadcase.llm import CallOutcome, JsonSchema, parse_json, structured_call
from threadcase.models import ModelSettings, Role

__all__ = ["CallOutcome", "grading_call"]

T = TypeVar("T")


async def grading_call(
    models: ModelSettings,
    role: Role,
    *,
    case: str,
    system: str,
    user_parts: list[str],
    schema_name: str,
    schema: dict[str, Any],
    parse: Callable[[Any], T],
) -> CallOutcome[T]:
    """Ask ``role``'s model for a JSON answer matching ``schema``; ``parse`` turns it into ``T`` or raises."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "text", "text": part} for part in user_parts]},
    ]
    return await structured_call(
        models,
        role,
        case=case,
        messages=messages,
        shape=JsonSchema(schema_name, schema),
        parse=parse_json(parse),
    )
