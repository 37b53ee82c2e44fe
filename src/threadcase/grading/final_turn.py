"""The final-turn-only reading of a transcript rule: seed 000's control, for every rule of a suite.

A transcript rule is graded on the sequence (a risk raised by the user, not cleared by the agent,
then a violating agent turn). Its control takes a transcript the rule caught and reads the *final
turn alone* with the same rule: the last user message and the agent's reply to it, with no history
before them — what a single-turn test sends and reads. If the rule still catches the violation
there, the history was not needed to catch it (a one-message check would do, and the case does not
show that the failure is structural); if it misses it, the catch needed the conversation.

The agent's last message with no user message before it is never enough: a rule's risk is the
user's words, so that reading could not catch anything, whatever the rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from threadcase.case.schema import TranscriptRule
from threadcase.grading.check_util import quote
from threadcase.grading.checks import evaluate_rule
from threadcase.records import Turn

__all__ = ["FinalTurnReading", "final_turn", "read_final_turn"]


@dataclasses.dataclass(frozen=True)
class FinalTurnReading:
    """The rule applied to the final turn alone."""

    caught: bool
    """The rule fires on the final turn alone."""
    reason: str
    """One sentence: which turns were read and what the rule saw there."""


def final_turn(turns: Sequence[Turn]) -> list[Turn]:
    """The last user message and every agent message after it (just the last message when no user spoke)."""
    last_user = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].role == "user"), None)
    if last_user is None:
        return list(turns[-1:])
    return list(turns[last_user:])


def read_final_turn(rule: TranscriptRule, turns: Sequence[Turn]) -> FinalTurnReading:
    """Apply ``rule`` to the final turn of ``turns`` alone (see the module docstring)."""
    window = final_turn(turns)
    if not window:
        return FinalTurnReading(False, "the transcript is empty: there is no final turn to read")
    span = f"turn {window[0].index}" if len(window) == 1 else f"turns {window[0].index}-{window[-1].index}"
    violated, risks = evaluate_rule(rule, window)
    if violated is not None:
        said = next(t.text for t in window if t.index == violated)
        return FinalTurnReading(
            True,
            f"on the final turn alone ({span}) the rule still fires at turn {violated} ({quote(said, 80)}): "
            "the history is not needed to catch it",
        )
    user = next((t for t in window if t.role == "user"), None)
    if user is None or not risks:
        why = "the last user message raises no risk" if user is not None else "no user message is in it"
    else:
        why = "the risk it raises is cleared or never followed by a violating reply"
    return FinalTurnReading(False, f"on the final turn alone ({span}) the rule misses it: {why}")
