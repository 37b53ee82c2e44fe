"""threadcase's deterministic checks (``checks``): the one key of a case file that is not n8n's."""

from __future__ import annotations

import re
from typing import Annotated, Any, NamedTuple

from pydantic import AfterValidator, Field, PrivateAttr, field_validator, model_validator

from threadcase.case.base import NonBlank, Strict, Strings, fail, non_blank

__all__ = ["AgentSkillContains", "Checks", "CompiledRule", "NodeParameterCheck", "TranscriptRule"]


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


class NodeParameterCheck(Strict):
    """A parameter of a built node must equal a value."""

    node: NonBlank
    """The node's name, or its type (``n8n-nodes-base.slack``): the first built node that matches."""
    path: NonBlank
    """A dotted path inside the node's ``parameters`` (``channel`` or ``options.retry.count``)."""
    equals: Any
    """The expected value (compared after JSON decoding)."""


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

    must_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings that must appear in the agent's live messages joined with a space."""
    must_not_contain: Strings = Field(default_factory=list)
    """Case-sensitive substrings that must not appear in the agent's live messages."""
    must_end_with_question: bool | None = None
    """True: the final agent message ends with ``?`` (trailing whitespace and emoji ignored); false: it does not."""
    max_lines: int | None = Field(default=None, gt=0)
    """No single agent message has more lines than this."""
    review: Strings = Field(default_factory=list)
    """Criteria printed next to the reply for a person; reported as reviewed, never counted as passed."""
    transcript_rules: list[TranscriptRule] = Field(default_factory=list)
    """State-machine rules graded on the sequence of turns, never on one message."""
    node_types_present: Strings = Field(default_factory=list)
    """Node types the built workflows must contain (``n8n-nodes-base.slack``)."""
    node_types_absent: Strings = Field(default_factory=list)
    """Node types the built workflows must not contain."""
    node_parameters: list[NodeParameterCheck] = Field(default_factory=list)
    """Parameter values the built nodes must have."""
    tools_called: Strings = Field(default_factory=list)
    """Tools the agent must have called during the live conversation."""
    tools_not_called: Strings = Field(default_factory=list)
    """Tools the agent must not have called."""
    max_clarifying_questions: int | None = Field(default=None, ge=0)
    """At most this many clarifying questions asked of the user across the conversation."""
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
        keys += [f"check:toolsCalled#{i}" for i in range(len(self.tools_called))]
        keys += [f"check:toolsNotCalled#{i}" for i in range(len(self.tools_not_called))]
        keys += [f"check:agentSkillsUnchanged#{i}" for i in range(len(self.agent_skills_unchanged))]
        keys += [f"check:agentSkillsChanged#{i}" for i in range(len(self.agent_skills_changed))]
        keys += [f"check:agentSkillsPresent#{i}" for i in range(len(self.agent_skills_present))]
        keys += [f"check:agentSkillsAbsent#{i}" for i in range(len(self.agent_skills_absent))]
        keys += [f"check:agentInstructionsContain#{i}" for i in range(len(self.agent_instructions_contain))]
        keys += [f"check:agentSkillContains#{i}" for i in range(len(self.agent_skill_contains))]
        keys += ["check:maxClarifyingQuestions"] if self.max_clarifying_questions is not None else []
        keys += ["check:noRepeatedQuestions"] if self.no_repeated_questions else []
        keys += [f"review#{i}" for i in range(len(self.review))]
        return keys

    @property
    def unit_count(self) -> int:
        """How many graded units these checks contribute."""
        return len(self.unit_keys())
