"""Speaking and reading widget answers: the small helpers every capability shares."""

from __future__ import annotations

import re
from typing import Any

from threadcase.demo_instance.agent.protocol import AgentContext

__all__ = ["answer_values", "speak"]


async def speak(ctx: AgentContext, text: str) -> None:
    """Stream ``text`` as a few deltas (sentence-sized), the way a model would stream a reply."""
    text = text.strip()
    if not text:
        return
    # Split after sentence ends but keep each separator (newlines included), so the deltas join back
    # into exactly ``text``.
    tokens = re.split(r"((?<=[.!?:\n])\s+)", text)
    pieces = [tokens[i] + (tokens[i + 1] if i + 1 < len(tokens) else "") for i in range(0, len(tokens), 2)]
    # At most four deltas: enough to exercise streaming, few enough to keep event streams short.
    size = max(1, -(-len(pieces) // 4))
    for i in range(0, len(pieces), size):
        await ctx.say("".join(pieces[i : i + size]))


def answer_values(body: dict[str, Any]) -> dict[str, str | None]:
    """``questions`` confirm body -> {questionId: value}; None = skipped or left empty.

    A custom text wins over a selected option (the user typed something more specific).
    """
    values: dict[str, str | None] = {}
    if body.get("kind") != "questions":
        return values
    for answer in body.get("answers", []):
        question_id = str(answer.get("questionId", ""))
        custom = (answer.get("customText") or "").strip()
        selected = [str(s) for s in answer.get("selectedOptions") or [] if str(s).strip()]
        if answer.get("skipped") or not (custom or selected):
            values[question_id] = None
        else:
            values[question_id] = custom or ", ".join(selected)
    return values
