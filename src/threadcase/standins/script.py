"""The scripted model's script: rules that say what to answer to which request.

A script is one JSON file::

    {
      "description": "What this script makes n8n's agent do",
      "models": ["scripted"],
      "rules": [
        {"id": "ask-channel",
         "when": {"userText": {"regex": "digest"}, "after": "user", "notSeen": ["ask-user"]},
         "reply": {"toolCalls": [{"name": "ask-user", "arguments": {"questions": [...]}}]}},
        {"id": "built",
         "when": {"after": "build-workflow"},
         "reply": {"text": "Saved {{result.workflowName}}."}}
      ]
    }

Each request is classified first (which of n8n's agents is asking: the orchestrator, a sub-agent, the
title generator, the mocked-execution helpers, the memory observer; see :mod:`.asks`), then the rules
are tried in order and the first whose every ``when`` condition holds answers. The request carries
the whole conversation, so the conditions read state from it and the server keeps none: ``after`` is
the step (``"user"``: the first step after the user's message; a tool name: the step right after that
tool's result), ``seen``/``notSeen`` look at every tool result of the conversation.

String leaves of a reply are templates: ``{{user}}`` (the latest user text), ``{{match.NAME}}`` (a
named group of a ``regex`` condition), ``{{result.PATH}}`` (the latest tool result, parsed from
JSON), ``{{results.TOOL.PATH}}`` (the latest result of tool TOOL), ``{{answer.ID}}`` (the latest
answer to ask-user question ID). ``PATH`` is dot-separated keys and list indices; ``{{NAME|text}}``
gives ``text`` when NAME has no value (a skipped question, say). An object
``{"$json": VALUE}`` becomes the JSON text of VALUE (a workflow's ``sourceCode``, for instance).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "AGENTS",
    "Agent",
    "Failure",
    "ModelScript",
    "Reply",
    "Rule",
    "ScriptError",
    "TextMatch",
    "ToolCall",
    "Usage",
    "When",
    "load_script",
]

Agent = Literal[
    "orchestrator",
    "subagent",
    "title",
    "fixtures",
    "classifier",
    "eval-hints",
    "eval-pin-data",
    "eval-mock-responder",
    "eval-completion-mock",
    "observer",
    "reflector",
    "other",
]
AGENTS: tuple[str, ...] = get_args(Agent)
"""Which of n8n's model callers a request comes from (see :func:`threadcase.standins.asks.classify`)."""


class ScriptError(Exception):
    """A script file that cannot be used: the file, the JSON path and what is wrong, on one line."""


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=False, validate_default=True
    )


class TextMatch(_Strict):
    """A condition on a piece of text; every given part must hold (case-insensitive)."""

    contains: list[str] = Field(default_factory=list)
    """Substrings that must all occur."""
    regex: str | None = None
    """A Python regular expression searched in the text; its named groups feed ``{{match.NAME}}``."""
    absent: list[str] = Field(default_factory=list)
    """Substrings none of which may occur."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"{value!r} is not a valid regular expression: {exc}") from exc
        return value

    def search(self, text: str) -> dict[str, str] | None:
        """The named groups when the text matches (empty when there are none), else None."""
        folded = text.casefold()
        if any(part.casefold() not in folded for part in self.contains):
            return None
        if any(part.casefold() in folded for part in self.absent):
            return None
        if self.regex is None:
            return {}
        found = re.search(self.regex, text, re.IGNORECASE | re.DOTALL)
        if found is None:
            return None
        return {name: value for name, value in found.groupdict().items() if value is not None}


class When(_Strict):
    """When a rule answers; every condition given must hold."""

    agent: Agent = "orchestrator"
    """Which of n8n's model callers is asking (default: the orchestrator, the agent the user talks to)."""
    user_text: TextMatch | None = None
    """The latest user message (its ``<thread-context>`` preamble removed)."""
    first_user_text: TextMatch | None = None
    """The conversation's first user message."""
    after: str | None = None
    """``"user"``: the first step after the latest user message; a tool name: the step right after that
    tool's result; unset: any step."""
    result: TextMatch | None = None
    """The latest tool result's text (what the step right after a tool call reads)."""
    seen: list[str] = Field(default_factory=list)
    """Tools that must have a result somewhere in the conversation."""
    not_seen: list[str] = Field(default_factory=list)
    """Tools that must have no result anywhere in the conversation (a question asked once stays asked)."""
    seen_since_user: list[str] = Field(default_factory=list)
    """Tools that must have a result since the latest user message."""
    not_seen_since_user: list[str] = Field(default_factory=list)
    """Tools that must have no result since the latest user message."""
    system: TextMatch | None = None
    """The system prompt (rarely needed: ``agent`` already tells the callers apart)."""
    user_turn: int | None = Field(default=None, ge=1)
    """The latest user message is the conversation's N-th (1 = the opening message)."""


class ToolCall(_Strict):
    """One tool call of a reply."""

    name: str = Field(min_length=1)
    """The tool's name as n8n offers it in ``tools`` (e.g. ``build-workflow``, ``ask-user``, ``workflows``)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments; string leaves are templates, ``{"$json": VALUE}`` becomes JSON text."""


class Usage(_Strict):
    """Token numbers reported for a reply (otherwise estimated at four characters a token)."""

    prompt_tokens: int = Field(ge=0)
    """Tokens in: what n8n's run debug records as the step's ``inputTokens``."""
    completion_tokens: int = Field(ge=0)
    """Tokens out: ``outputTokens``."""


class Failure(_Strict):
    """Answer with an HTTP error instead, as a failing model provider would."""

    status: int = Field(ge=400, le=599)
    """The HTTP status (n8n retries 5xx and connection errors three times; a 401 once)."""
    message: str = Field(min_length=1)
    """The provider's ``error.message``."""


class Reply(_Strict):
    """What the model answers: text, tool calls (or both), a JSON document, or an error."""

    text: str | None = None
    """Assistant text (streamed in chunks when n8n streams)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Tool calls, in order; n8n runs them and asks again with their results."""
    json_: Any = Field(default=None, alias="json")
    """A JSON document answered as the text (what n8n's helper agents expect: hints, pin data, ...)."""
    error: Failure | None = None
    """Answer with an HTTP error instead."""
    usage: Usage | None = None
    """Token numbers to report instead of the estimate."""
    delay_ms: int = Field(default=0, ge=0, le=600_000)
    """Wait this long before answering (a slow model)."""

    @model_validator(mode="after")
    def _one_kind(self) -> Reply:
        kinds = [
            name
            for name, given in (
                ("text/toolCalls", self.text is not None or bool(self.tool_calls)),
                ("json", self.json_ is not None),
                ("error", self.error is not None),
            )
            if given
        ]
        if len(kinds) != 1:
            raise ValueError(
                "a reply needs exactly one of text and/or toolCalls, json, error"
                + (f" (got {', '.join(kinds)})" if kinds else " (got none)")
            )
        return self


class Rule(_Strict):
    """One rule: an id for the log, when it answers, and what it answers."""

    id: Annotated[str, Field(min_length=1, max_length=80)]
    """Named in the server's log and in every error about this rule."""
    when: When = Field(default_factory=When)
    """The conditions (all must hold)."""
    reply: Reply
    """The answer."""


class ModelScript(_Strict):
    """A whole script file."""

    description: str = ""
    """What the script makes n8n's agent do (for people)."""
    models: list[str] = Field(default_factory=lambda: ["scripted"], min_length=1)
    """Model ids ``GET /v1/models`` lists (any id is answered: n8n sends the part after ``custom/``)."""
    rules: list[Rule] = Field(min_length=1)
    """Tried in order; the first that matches answers."""

    @model_validator(mode="after")
    def _unique_ids(self) -> ModelScript:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice; ids name rules in the log, keep them unique")
            seen.add(rule.id)
        return self


def _where(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def load_script(path: Path) -> ModelScript:
    """Read and validate a script file; a problem raises :class:`ScriptError` with one line per problem."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read the script: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ScriptError(f"{path}: not valid JSON: {exc}") from exc
    try:
        return ModelScript.model_validate(raw)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_url=False):
            shown = (
                ""
                if error["type"] == "missing" or isinstance(error["input"], dict | list)
                else f" (got {error['input']!r})"
            )
            message = error["msg"].removeprefix("Value error, ")
            lines.append(f"{path}: {_where(tuple(error['loc']))}: {message}{shown}")
        raise ScriptError("\n".join(lines)) from None
