"""The shared vocabulary of case-file validation: strict models, one-line errors, reusable field types.

Every model of a case file derives from :class:`Strict`. A field-level rule raises :func:`fail`
(pydantic error type :data:`VALUE_ERROR_TYPE`, the message already quoting the value); a model's
cross-field rules collect every problem as ``(relative JSON path, message)`` pairs and raise them
together with :func:`raise_problems` (type :data:`RULES_ERROR_TYPE`), so an author sees every broken
rule of a file in one ``threadcase validate``. The loader turns both into one
:class:`~threadcase.errors.CaseProblem` each, prefixing paths with where the model sits in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, WithJsonSchema
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

__all__ = [
    "RULES_ERROR_TYPE",
    "VALUE_ERROR_TYPE",
    "Lines",
    "NonBlank",
    "Problem",
    "SeedId",
    "Strict",
    "Strings",
    "declared_ids",
    "duplicates",
    "fail",
    "length",
    "non_blank_items",
    "quote",
    "raise_problems",
    "slugify",
    "unbalanced_bracket",
]

RULES_ERROR_TYPE = "threadcase_rules"
"""The pydantic error type of a cross-field rule failure; ``ctx["problems"]`` holds ``(path, message)`` pairs."""

VALUE_ERROR_TYPE = "threadcase_value"
"""The pydantic error type of a field-level rule failure; the message already quotes the value."""

Problem = tuple[str, str]
"""``(relative JSON path, message)``; the path is empty when the problem is the model as a whole."""


def fail(message: str) -> PydanticCustomError:
    # The message goes through ctx so braces in a quoted value are never read as a template.
    return PydanticCustomError(VALUE_ERROR_TYPE, "{message}", {"message": message})


def raise_problems(problems: list[Problem]) -> None:
    if problems:
        summary = "; ".join(f"{path}: {message}" if path else message for path, message in problems)
        raise PydanticCustomError(RULES_ERROR_TYPE, "{summary}", {"summary": summary, "problems": problems})


def non_blank(value: str) -> str:
    if not value.strip():
        raise fail(f"{value!r} is blank; write some text")
    return value


def length(low: int, high: int, why: str = "") -> Callable[[str], str]:
    def check(value: str) -> str:
        if not low <= len(value) <= high:
            raise fail(f"{quote(value)} has {len(value)} characters; it needs {low}–{high}{why}")
        return value

    return check


def join_lines(value: Any) -> Any:
    """``text`` may be authored as a list of lines so a long director note stays readable in JSON."""
    if isinstance(value, list):
        if all(isinstance(line, str) for line in value):
            return "\n".join(value)
        raise fail(f"{quote(value)} is not a string or a list of strings")
    if not isinstance(value, str):
        raise fail(f"{quote(value)} is not a string or a list of strings")
    return value


def quote(value: Any, limit: int = 60) -> str:
    """``repr`` of a value, cut short so one bad field cannot flood a terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def declared_ids(ids: Iterable[str]) -> str:
    listed = ", ".join(repr(i) for i in ids)
    return f"declared: {listed}" if listed else "none declared"


def duplicates(values: Sequence[str], label: str, path: str) -> list[Problem]:
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        if value in first:
            problems.append((f"{path}[{index}]", f"duplicate {label} {value!r} (also {path}[{first[value]}])"))
        else:
            first[value] = index
    return problems


def unbalanced_bracket(text: str) -> bool:
    """True when some ``[`` opening a director note has no ``]`` closing it."""
    if "[" not in text:
        return False
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
    return depth > 0


def slugify(name: str) -> str:
    """The addressing key n8n derives from an agent name: ``Support Bot`` and ``support-bot`` collide."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def non_blank_items(values: list[str]) -> list[str]:
    for index, value in enumerate(values):
        if not value.strip():
            raise fail(f"entry [{index}] {value!r} is blank")
    return values


NonBlank = Annotated[str, AfterValidator(non_blank)]
SeedId = Annotated[str, AfterValidator(length(8, 64, " (ids shorter than 8 are too short to remap safely)"))]
Lines = Annotated[
    str,
    BeforeValidator(join_lines),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
]

Strings = Annotated[list[str], AfterValidator(non_blank_items)]


class Strict(BaseModel):
    # strict: a case file says what it means ("5" is not a budget, "true" is not a boolean).
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        use_attribute_docstrings=True,
        strict=True,
    )
