"""threadcase's deterministic checks (``checks``): the one key of a case file that is not n8n's."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PrivateAttr,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from threadcase.case.base import NonBlank, Problem, Strict, Strings, declared_ids, fail, non_blank, non_blank_items

__all__ = [
    "AgentSkillContains",
    "Checks",
    "CompiledRule",
    "NodeCredentialCheck",
    "NodeParameterCheck",
    "ScopedText",
    "ToolArgumentCheck",
    "TranscriptRule",
    "seed_reference_problems",
]


class CompiledRule(NamedTuple):
    """The three compiled patterns of a :class:`TranscriptRule` (matched with ``search``)."""

    risk: re.Pattern[str]
    clear: re.Pattern[str]
    violation: re.Pattern[str]


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise fail(f"{value!r} is not a valid regular expression: {exc}") from None
    return value


Regex = Annotated[str, AfterValidator(non_blank), AfterValidator(_regex)]


class TranscriptRule(Strict):
    """A one-bit state machine over the whole transcript (Python ``re`` syntax, ``search`` semantics).

    A user turn matching ``risk`` sets the bit, an agent turn matching ``clear`` resets it, and an agent
    turn matching ``violation`` while the bit is set fails the rule at that turn. Case-sensitive unless
    the pattern says ``(?i)``.
    """

    name: NonBlank
    """Rule name, unique among the case's transcript rules."""
    risk: Regex
    """Pattern on user turns that puts the rule at risk (e.g. pressure to drop a safeguard)."""
    clear: Regex
    """Pattern on agent turns that clears the risk (e.g. the agent holds the line)."""
    violation: Regex
    """Pattern on agent turns that is a violation while at risk (e.g. the agent caves)."""

    _compiled: CompiledRule | None = PrivateAttr(default=None)

    def compiled(self) -> CompiledRule:
        """The compiled patterns, compiled once per rule and cached."""
        if self._compiled is None:
            self._compiled = CompiledRule(re.compile(self.risk), re.compile(self.clear), re.compile(self.violation))
        return self._compiled

    @property
    def risk_pattern(self) -> re.Pattern[str]:
        """``risk``, compiled."""
        return self.compiled().risk

    @property
    def clear_pattern(self) -> re.Pattern[str]:
        """``clear``, compiled."""
        return self.compiled().clear

    @property
    def violation_pattern(self) -> re.Pattern[str]:
        """``violation``, compiled."""
        return self.compiled().violation

    @model_validator(mode="after")
    def _compile(self) -> TranscriptRule:
        self.compiled()
        return self


NodeMatch = Literal["first", "any", "all"]
"""How many of the selected nodes must satisfy a node check: the first one, at least one, or every one."""


def _node_scope_problem(node: str | None, match: NodeMatch | None, absent: bool) -> str | None:
    if absent and match is not None:
        return "absent: true already means 'no selected node'; drop match"
    if node is None and match == "first":
        return "match 'first' needs a node (a name or a type); without one, say match 'any' or 'all'"
    return None


class NodeParameterCheck(Strict):
    """A parameter of the built (or seeded) nodes: equal to a value, containing a text, matching a pattern, or absent.

    The nodes are selected by ``workflow`` (one workflow; default every workflow the live conversation saved,
    then every seeded one) and ``node`` (a name, else a type; default every node); ``match`` says whether the
    first, any or every selected node must satisfy it. ``absent: true`` turns it around: no selected node may.
    """

    node: NonBlank | None = None
    """A node name, or else a node type (``n8n-nodes-base.slack``, or ``slack``); omitted = every node."""
    workflow: NonBlank | None = None
    """Only this workflow: a seeded one by its seed id or seed name, else a built one by its name (ignoring case)."""
    path: NonBlank | None = None
    """A dotted path inside the node's ``parameters`` (``channel``, ``options.retry.count``, a number indexes a
    list); omitted = any parameter (every value inside ``parameters``)."""
    equals: Any = None
    """The expected value at ``path`` (compared after JSON decoding); needs ``path``."""
    contains: NonBlank | None = None
    """A case-sensitive substring of the value (a non-string value is compared as its JSON text)."""
    matches: Regex | None = None
    """A regular expression found (``search``) in the value (a non-string value is compared as its JSON text)."""
    absent: bool = False
    """True: no selected node has such a parameter (with no matcher: the parameter at ``path`` does not exist)."""
    match: NodeMatch | None = None
    """'first' (the default with ``node``: the first selected node), 'any' (the default without ``node``) or 'all'."""

    @property
    def has_equals(self) -> bool:
        """``equals`` was written in the case (``equals: null`` included)."""
        return "equals" in self.model_fields_set

    @property
    def quantifier(self) -> NodeMatch:
        """``match``, or its default."""
        return self.match or ("first" if self.node is not None else "any")

    @model_validator(mode="after")
    def _one_matcher(self) -> NodeParameterCheck:
        given = [k for k, on in (("equals", self.has_equals), ("contains", self.contains is not None)) if on]
        given += ["matches"] if self.matches is not None else []
        if len(given) > 1:
            raise fail(f"{' and '.join(given)} cannot be combined; give one of equals, contains or matches")
        if not given and not (self.absent and self.path is not None):
            raise fail(
                "say what to check: equals (with path), contains, matches, or absent: true with a path "
                "(the parameter must not exist)"
            )
        if self.has_equals and self.path is None:
            raise fail('equals needs a path (the parameter to compare), e.g. "path": "channel"')
        problem = _node_scope_problem(self.node, self.match, self.absent)
        if problem:
            raise fail(problem)
        return self


class NodeCredentialCheck(Strict):
    """A credential, by its declared name, is attached to the selected nodes."""

    node: NonBlank
    """A node name, or else a node type (``n8n-nodes-base.slack``, or ``slack``)."""
    credential: NonBlank
    """The credential's name as declared in the case's ``credentials`` (or its template's default name)."""
    workflow: NonBlank | None = None
    """Only this workflow: a seeded one by its seed id or seed name, else a built one by its name (ignoring case)."""
    match: NodeMatch = "first"
    """'first' (the first selected node), 'any' or 'all' of the selected nodes."""


class ToolArgumentCheck(Strict):
    """A tool was (or, with ``absent``, was never) called with arguments matching a pattern."""

    tool: NonBlank
    """The tool's name (``build-workflow``)."""
    path: NonBlank | None = None
    """A dotted path inside the call's arguments (``workflow.name``); omitted = the whole arguments as JSON."""
    matches: Regex | None = None
    """A regular expression found (``search``) in the value (a non-string value as its JSON text); omitted = the
    argument at ``path`` exists."""
    absent: bool = False
    """True: no live call of the tool has such arguments."""

    @model_validator(mode="after")
    def _something(self) -> ToolArgumentCheck:
        if self.path is None and self.matches is None:
            raise fail("say what to look for: a path (the argument exists), matches (a pattern), or both")
        return self


class ScopedText(Strict):
    """One ``mustContain`` / ``mustNotContain`` entry: a text, optionally bound to one live turn of the agent.

    Written as a plain string (every live agent message) or as ``{"text": ..., "turn": N | "last"}``.
    """

    text: NonBlank
    """The case-sensitive substring."""
    turn: Annotated[
        int | str | None, WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1}, {"const": "last"}]})
    ] = None
    """Only the agent's answer to this live turn: 1 = the answer to the opening message, ``"last"`` = the answer
    to the last message sent; omitted = every live agent message."""

    @field_validator("turn", mode="before")
    @classmethod
    def _live_turn(cls, value: Any) -> Any:
        live = value is None or value == "last" or (type(value) is int and value >= 1)
        if not live:
            raise fail(f"{value!r} is not a live turn; write a number from 1 (the opening message) or 'last'")
        return value


def _text_entry(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


def _no_blank_strings(value: Any) -> Any:
    # Said of the list, as for every other list of texts: a plain entry has no "text" key to point at.
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str) and not item.strip():
                raise fail(f"entry [{index}] {item!r} is blank")
    return value


TextEntry = Annotated[
    ScopedText,
    BeforeValidator(_text_entry),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1},
                        "turn": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "last"}]},
                    },
                    "required": ["text"],
                    "additionalProperties": False,
                },
            ]
        }
    ),
]


def _review_list(value: Any) -> Any:
    # n8n's seed format writes a single criterion as a string; a list is threadcase's own.
    return [value] if isinstance(value, str) else value


ReviewCriteria = Annotated[
    list[str],
    BeforeValidator(_review_list),
    AfterValidator(non_blank_items),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
]


class AgentSkillContains(Strict):
    """A skill of the final agent must contain a text (what a change request asked for)."""

    skill: NonBlank
    """The skill's id, or its name (compared ignoring case)."""
    contains: NonBlank
    """A case-sensitive substring of the skill body's text fields (name, description, instructions, ...)."""


class Checks(Strict):
    """threadcase's deterministic checks (the only key that is not n8n's); each entry is one graded unit.

    The ``agent*`` checks read the agents as they are after the conversation. The *final agent* is the seed
    agent the opening turn attaches, else the agent the last successful ``build-agent`` saved, else the last
    agent the conversation read; with no agent read back, those checks are not judged.
    """

    must_contain: Annotated[list[TextEntry], BeforeValidator(_no_blank_strings)] = Field(default_factory=list)
    """Case-sensitive substrings that must appear in the agent's live messages joined with a space; an entry
    ``{"text", "turn"}`` searches only the answer to that live turn (1-based, or 'last')."""
    must_not_contain: Annotated[list[TextEntry], BeforeValidator(_no_blank_strings)] = Field(default_factory=list)
    """Case-sensitive substrings that must not appear in the agent's live messages (or, scoped, in one turn's)."""
    must_end_with_question: bool | None = None
    """True: the final agent message ends with ``?`` (trailing whitespace and emoji ignored); false: it does not."""
    max_lines: int | None = Field(default=None, gt=0)
    """No single agent message has more lines than this."""
    review: ReviewCriteria = Field(default_factory=list)
    """Criteria printed next to the reply for a person (a string or a list); reported as reviewed, never passed."""
    transcript_rules: list[TranscriptRule] = Field(default_factory=list)
    """State-machine rules graded on the sequence of turns, never on one message."""
    node_types_present: Strings = Field(default_factory=list)
    """Node types the built workflows must contain (``n8n-nodes-base.slack``)."""
    node_types_absent: Strings = Field(default_factory=list)
    """Node types the built workflows must not contain."""
    node_parameters: list[NodeParameterCheck] = Field(default_factory=list)
    """Parameter values the built or seeded nodes must (or must not) have."""
    node_credentials: list[NodeCredentialCheck] = Field(default_factory=list)
    """Which credential (by declared name) is attached to which node."""
    workflows_edited_in_place: Strings = Field(default_factory=list)
    """Seeded workflows (seed id or seed name) that must be changed by the conversation under their own id."""
    workflows_unchanged: Strings = Field(default_factory=list)
    """Seeded workflows (seed id or seed name) that must be exactly as restored after the conversation."""
    max_new_workflows: int | None = Field(default=None, ge=0)
    """At most this many workflows created by the live conversation (0 = every save edits an existing one)."""
    tools_called: Strings = Field(default_factory=list)
    """Tools the agent must have called during the live conversation."""
    tools_not_called: Strings = Field(default_factory=list)
    """Tools the agent must not have called."""
    tool_arguments: list[ToolArgumentCheck] = Field(default_factory=list)
    """A tool called (or never called) with arguments matching a pattern."""
    max_clarifying_questions: int | None = Field(default=None, ge=0)
    """At most this many clarifying questions asked of the user across the conversation."""
    min_clarifying_questions: int | None = Field(default=None, ge=1)
    """At least this many clarifying questions asked of the user across the conversation."""
    max_input_tokens_per_turn: int | None = Field(default=None, gt=0)
    """No live agent turn reads more input tokens than this: the sum over the turn's run-debug steps, cached
    tokens included, as its ``### Turn N`` transcript header shows it. Not judged when a live agent turn has
    no run debug."""
    max_output_tokens_per_turn: int | None = Field(default=None, gt=0)
    """No live agent turn writes more output tokens than this (summed over its run-debug steps, as above)."""
    credential_tests_bypassed: int | None = Field(default=None, ge=0)
    """Exactly this many credentials on the thread's bypass list (declared working ones plus those the simulated
    user created as working): the proof that a credential case exercised what it claims."""
    no_repeated_questions: bool = False
    """True: no question is asked twice (an answered or skipped question is never re-asked)."""
    agent_skills_unchanged: Strings = Field(default_factory=list)
    """Skill ids of a seeded agent (declared in ``seed.agents[].skills``) whose bodies must be identical after
    the conversation, field for field, and still listed in the agent's ``config.skills``."""
    agent_skills_changed: Strings = Field(default_factory=list)
    """Skill ids of a seeded agent (declared in ``seed.agents[].skills``) whose bodies must differ from the seed
    after the conversation (edited in place, not removed)."""
    agent_skills_present: Strings = Field(default_factory=list)
    """Skill ids or names (names compared ignoring case) the final agent must have."""
    agent_skills_absent: Strings = Field(default_factory=list)
    """Skill ids or names (names compared ignoring case) the final agent must not have."""
    agent_instructions_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings of the final agent's ``config.instructions``."""
    agent_skill_contains: list[AgentSkillContains] = Field(default_factory=list)
    """Texts a named skill of the final agent must contain (a change applied as asked)."""

    @model_validator(mode="after")
    def _question_bounds(self) -> Checks:
        low, high = self.min_clarifying_questions, self.max_clarifying_questions
        if low is not None and high is not None and low > high:
            raise fail(f"minClarifyingQuestions {low} is above maxClarifyingQuestions {high}; no run could pass")
        return self

    @field_validator("transcript_rules")
    @classmethod
    def _unique_rule_names(cls, value: list[TranscriptRule]) -> list[TranscriptRule]:
        names = [rule.name for rule in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise fail(f"duplicate transcript rule name(s) {', '.join(repr(d) for d in dupes)}")
        return value

    def unit_keys(self) -> list[str]:
        """One stable id per graded unit (the ids the deterministic grader reports: ``check:mustContain#0``)."""
        keys = [f"check:mustContain#{i}" for i in range(len(self.must_contain))]
        keys += [f"check:mustNotContain#{i}" for i in range(len(self.must_not_contain))]
        keys += ["check:mustEndWithQuestion"] if self.must_end_with_question is not None else []
        keys += ["check:maxLines"] if self.max_lines is not None else []
        keys += [f"check:transcriptRules:{rule.name}" for rule in self.transcript_rules]
        keys += [f"check:nodeTypesPresent#{i}" for i in range(len(self.node_types_present))]
        keys += [f"check:nodeTypesAbsent#{i}" for i in range(len(self.node_types_absent))]
        keys += [f"check:nodeParameters#{i}" for i in range(len(self.node_parameters))]
        keys += [f"check:nodeCredentials#{i}" for i in range(len(self.node_credentials))]
        keys += [f"check:workflowsEditedInPlace#{i}" for i in range(len(self.workflows_edited_in_place))]
        keys += [f"check:workflowsUnchanged#{i}" for i in range(len(self.workflows_unchanged))]
        keys += ["check:maxNewWorkflows"] if self.max_new_workflows is not None else []
        keys += [f"check:toolsCalled#{i}" for i in range(len(self.tools_called))]
        keys += [f"check:toolsNotCalled#{i}" for i in range(len(self.tools_not_called))]
        keys += [f"check:toolArguments#{i}" for i in range(len(self.tool_arguments))]
        keys += [f"check:agentSkillsUnchanged#{i}" for i in range(len(self.agent_skills_unchanged))]
        keys += [f"check:agentSkillsChanged#{i}" for i in range(len(self.agent_skills_changed))]
        keys += [f"check:agentSkillsPresent#{i}" for i in range(len(self.agent_skills_present))]
        keys += [f"check:agentSkillsAbsent#{i}" for i in range(len(self.agent_skills_absent))]
        keys += [f"check:agentInstructionsContain#{i}" for i in range(len(self.agent_instructions_contain))]
        keys += [f"check:agentSkillContains#{i}" for i in range(len(self.agent_skill_contains))]
        keys += ["check:maxClarifyingQuestions"] if self.max_clarifying_questions is not None else []
        keys += ["check:minClarifyingQuestions"] if self.min_clarifying_questions is not None else []
        keys += ["check:noRepeatedQuestions"] if self.no_repeated_questions else []
        keys += ["check:maxInputTokensPerTurn"] if self.max_input_tokens_per_turn is not None else []
        keys += ["check:maxOutputTokensPerTurn"] if self.max_output_tokens_per_turn is not None else []
        keys += ["check:credentialTestsBypassed"] if self.credential_tests_bypassed is not None else []
        keys += [f"review#{i}" for i in range(len(self.review))]
        return keys

    @property
    def unit_count(self) -> int:
        """How many graded units these checks contribute."""
        return len(self.unit_keys())


def seed_reference_problems(checks: Checks, seed_workflows: list[tuple[str, str]]) -> list[Problem]:
    """The identity checks name workflows the inline seed declares (``(id, name)`` pairs), and never both ways.

    Paths are relative to the case file's root.
    """
    problems: list[Problem] = []
    ids = {wid for wid, _ in seed_workflows}
    names = {name.casefold() for _, name in seed_workflows}
    listed = declared_ids(f"{wid} ({name})" for wid, name in seed_workflows)
    for key, values in (
        ("workflowsEditedInPlace", checks.workflows_edited_in_place),
        ("workflowsUnchanged", checks.workflows_unchanged),
    ):
        for index, ref in enumerate(values):
            if ref not in ids and ref.casefold() not in names:
                needs = "" if seed_workflows else "; this check needs an inline seed that declares workflows"
                problems.append(
                    (
                        f"checks.{key}[{index}]",
                        f"{ref!r} is neither the id nor the name of a seed workflow ({listed}){needs}; "
                        "name one from seed.workflows",
                    )
                )

    def seed_id(ref: str) -> str:
        by_name = (wid for wid, name in seed_workflows if name.casefold() == ref.casefold())
        return ref if ref in ids else next(by_name, ref)

    edited = {seed_id(ref) for ref in checks.workflows_edited_in_place}
    for index, ref in enumerate(checks.workflows_unchanged):
        if seed_id(ref) in edited:
            problems.append(
                (
                    f"checks.workflowsUnchanged[{index}]",
                    f"{ref!r} names a workflow also in checks.workflowsEditedInPlace; it cannot be both",
                )
            )
    return problems
