"""What every deterministic check shares: verdict constructors, quoting evidence, digging into JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from threadcase.records import RunRecord, Turn
from threadcase.verdicts import Attribution, UnitVerdict

__all__ = [
    "MISSING",
    "around",
    "canonical",
    "dig",
    "leaves",
    "live_agent_turns",
    "not_judged",
    "nothing_there",
    "quote",
    "text_of",
    "value_matches",
    "verdict",
]

QUOTE_LIMIT = 120

MISSING: Any = object()
"""What :func:`dig` returns for a path that leads nowhere (distinct from a JSON null)."""


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` on one line, in double quotes, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return f'"{flat[:limit]}…"' if len(flat) > limit else f'"{flat}"'


def around(text: str, start: int, end: int) -> str:
    """The quoted neighbourhood of ``text[start:end]``."""
    lo, hi = max(0, start - 40), min(len(text), end + 40)
    return quote(("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else ""), 160)


def verdict(unit: str, label: str, ok: bool, reason: str, *, turn_index: int | None = None) -> UnitVerdict:
    """A judged check: pass, or a failure charged to the builder."""
    return UnitVerdict(
        unit=unit,
        kind="check",
        label=label,
        status="pass" if ok else "fail",
        reason=reason,
        attribution=None if ok else "builder_issue",
        turn_index=turn_index,
    )


def not_judged(unit: str, label: str, reason: str, attribution: Attribution = "verification_gap") -> UnitVerdict:
    """A check this run could not have failed (or could not see), with the reason."""
    return UnitVerdict(
        unit=unit, kind="check", label=label, status="not_judged", reason=reason, attribution=attribution
    )


def nothing_there(unit: str, label: str, why: str, *, absent: bool, so: str) -> UnitVerdict:
    """What a check finds when what it inspects is not there: a failure, or — for an ``absent`` entry,
    which could not have failed — not judged (``so`` says why it could not)."""
    if absent:
        return not_judged(unit, label, f"{why}, {so}")
    return verdict(unit, label, False, why)


def live_agent_turns(record: RunRecord) -> list[Turn]:
    """The agent's live turns that said something."""
    return [t for t in record.live_turns if t.role == "assistant" and t.text]


def canonical(value: Any) -> str:
    """JSON text with sorted keys: equal values, equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path (a number indexes a list), or :data:`MISSING`."""
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar inside ``value`` with its dotted path (what "any parameter" searches)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from leaves(inner, f"{prefix}.{index}" if prefix else str(index))
    else:
        yield prefix, value


def text_of(value: Any) -> str:
    """A value as the text a ``contains`` / ``matches`` looks in: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else canonical(value)


def value_matches(value: Any, *, contains: str | None, pattern: re.Pattern[str] | None) -> bool:
    """``contains`` is in the value's text, or ``pattern`` is found in it (one of them is given)."""
    text = text_of(value)
    if contains is not None:
        return contains in text
    return pattern is not None and pattern.search(text) is not None
