"""The simulated user's faults that reached the agent, and the units they void.

The model proxy catches its faults before sending (``user_proxy.faults``); this audit reads the
transcript for any that got through all the same — a model message that re-sent a delivered scripted
turn, repeated the previous message, quoted a director note or the proxy's instructions, spoke as the
assistant or said nothing, or a model-written widget answer that quoted, recited or spoke as the
assistant. What the agent did after such a message answers something the case never asked, so every
unit it could affect — all but ``review`` criteria and verdicts pointing at an earlier turn — is
*not judged*, attributed to the user (``proxy_issue``), never a failure of the builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadcase.case import schema
from threadcase.case.notes import split_notes
from threadcase.records import RunRecord, Turn
from threadcase.user_proxy.faults import FaultKind, answer_fault, message_fault, similar
from threadcase.user_proxy.prompts import CONFIRMATION_INSTRUCTIONS, SYSTEM_PROMPT, USER_TURN_INSTRUCTIONS
from threadcase.verdicts import PremiseResult, UnitVerdict

__all__ = ["ReachedFault", "audit_user_turns", "fault_premise", "void_for_proxy_faults"]

_INSTRUCTIONS = (SYSTEM_PROMPT, CONFIRMATION_INSTRUCTIONS, USER_TURN_INSTRUCTIONS)
USER_FAITHFUL = "user-faithful"
"""The premise that the simulated user said only what a user following the script would say."""


@dataclass(frozen=True)
class ReachedFault:
    """A fault of the simulated user that reached the agent, at a turn of the transcript."""

    turn_index: int
    kind: FaultKind
    reason: str

    def sentence(self) -> str:
        return f"the simulated user misspoke at turn {self.turn_index} ({self.kind}: {self.reason})"


def _answer_texts(answer: dict[str, Any] | None) -> list[str]:
    if not answer:
        return []
    texts = [str(answer.get("userInput") or "")]
    for item in answer.get("answers") or []:
        if isinstance(item, dict):
            texts.append(str(item.get("customText") or ""))
    return [t for t in texts if t]


def audit_user_turns(case: schema.Case, record: RunRecord) -> list[ReachedFault]:
    """Every fault of the model user that reached the agent, in transcript order."""
    scripted = [split_notes(t.text) for t in case.conversation if t.role == "user"]
    notes = [n for _, found in scripted for n in found]
    spoken = [s for s, _ in scripted if s]
    faults: list[ReachedFault] = []
    said: list[str] = []
    last_user: str | None = None
    last_assistant: str | None = None
    for turn in record.turns:
        if turn.role == "assistant":
            faults.extend(_widget_faults(turn, notes, last_assistant))
            last_assistant = turn.text or last_assistant
            continue
        if not turn.seeded and turn.sent_by == "proxy":
            delivered = [s for s in spoken if any(similar(s, earlier) for earlier in said)]
            fault = message_fault(
                turn.text,
                notes=notes,
                previous_user=last_user,
                delivered=delivered,
                pending=[s for s in spoken if s not in delivered],
                instructions=_INSTRUCTIONS,
                last_assistant=last_assistant,
            )
            if fault is not None:
                faults.append(ReachedFault(turn.index, fault.kind, fault.reason))
        said.append(turn.text)
        last_user = turn.text
    return faults


def _widget_faults(turn: Turn, notes: list[str], last_assistant: str | None) -> list[ReachedFault]:
    found = []
    for widget in turn.widgets:
        if widget.answered_by != "model":
            continue
        for text in _answer_texts(widget.answer):
            fault = answer_fault(text, notes=notes, instructions=_INSTRUCTIONS, last_assistant=last_assistant)
            if fault is not None:
                found.append(ReachedFault(turn.index, fault.kind, f"in its answer to a widget: {fault.reason}"))
                break
    return found


def fault_premise(faults: list[ReachedFault]) -> PremiseResult:
    """The ``user-faithful`` premise: held when no fault of the simulated user reached the agent."""
    if not faults:
        return PremiseResult(name=USER_FAITHFUL, held=True, reason="no fault of the simulated user reached the agent")
    more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
    return PremiseResult(name=USER_FAITHFUL, held=False, reason=faults[0].sentence() + more, attribution="proxy_issue")


def void_for_proxy_faults(verdicts: list[UnitVerdict], faults: list[ReachedFault]) -> list[UnitVerdict]:
    """Every unit the first fault could affect turned not judged (``proxy_issue``); the rest unchanged."""
    if not faults:
        return verdicts
    first = min(faults, key=lambda f: f.turn_index)
    reason = f"not judged — {first.sentence()}; what followed is not the builder's doing"
    return [
        v
        if v.status == "reviewed" or (v.turn_index is not None and v.turn_index < first.turn_index)
        else v.model_copy(update={"status": "not_judged", "reason": reason, "attribution": "proxy_issue"})
        for v in verdicts
    ]
