"""The scripted user following its directives: which apply now, which fired, and how the script went.

:class:`Director` sits beside the :class:`~threadcase.case.notes.Script` (which knows what was sent
when) and answers the scripted user's questions at each widget: is this question declined, does a
note give its value, what does the plan review call for, which credential directive governs this
card. Every decision that uses a directive *fires* it (once, at the current message); every value
given is recorded with where it came from — a note, the script's own words, an offered option, or a
plainly placeholder value recorded as invented — and what the user could not do as the script says
is recorded as a fault. :meth:`Director.delivery` turns all of it into the run's
:class:`~threadcase.records.ScriptDelivery`, which the premises read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from threadcase.case.details import detail_kind, placeholder_for, stated_values
from threadcase.case.directives import (
    Answer,
    Credential,
    Decline,
    Directive,
    PlanReview,
    RunWorkflow,
    WebAccess,
)
from threadcase.case.note_topics import governing, near_miss
from threadcase.case.notes import Script, ScriptTurn
from threadcase.records import DirectiveDelivery, ScriptDelivery, ScriptTurnDelivery, UserValue, ValueSource

__all__ = ["Bound", "Director", "ValueChoice"]

_TURN_EVENT_KINDS = frozenset({"say", "one-at-a-time", "hold", "tone", "as-usual"})
"""Directives that act when their own turn is sent (nothing to wait for)."""


@dataclass(frozen=True)
class Bound:
    """A directive bound to the turn it stands in."""

    turn: ScriptTurn
    position: int
    note: str
    directive: Directive

    @property
    def key(self) -> tuple[int, int]:
        return (self.turn.index, self.position)


@dataclass(frozen=True)
class ValueChoice:
    """The scripted user's answer to one question or parameter."""

    value: str | None
    """None = declined."""
    option: str | None = None
    """The offered option picked, when the question offers options and one fits."""
    source: ValueSource = "invented"


class Director:
    """Directive state of one scripted user in one conversation."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.bound: list[Bound] = [
            Bound(turn=turn, position=position, note=reading.note, directive=directive)
            for turn in script.user_turns
            for position, (reading, directive) in enumerate(
                (reading, directive) for reading in turn.readings for directive in reading.directives
            )
        ]
        self._fired: dict[tuple[int, int], int] = {}
        self._pushes: dict[tuple[int, int], int] = {}
        self._why_not: dict[tuple[int, int], str] = {}
        self._near: dict[tuple[int, int], str] = {}
        """Directive -> a question close to its topic that it did not answer (see :meth:`_near_misses`)."""
        self.values: list[UserValue] = []
        self.faults: list[str] = []
        # The harness sends the opening turn (as written) before the user has anything to decide.
        self.turn_delivered(script.opener)

    # --- state ---------------------------------------------------------------------------------

    def active(self) -> list[Bound]:
        """Directives whose turn's window holds the current moment, in script order."""
        turns = {t.index for t in self.script.active_turns()}
        return [b for b in self.bound if b.turn.index in turns]

    def fire(self, bound: Bound) -> None:
        self._fired.setdefault(bound.key, self.script.message)

    def fired(self, bound: Bound) -> bool:
        return bound.key in self._fired

    def fault(self, bound: Bound | None, what: str) -> None:
        """The user could not do what the script says (or did against it): recorded, never hidden."""
        where = f'conversation[{bound.turn.index}]: note "{bound.note}": ' if bound is not None else ""
        line = f"{where}{what}"
        if line not in self.faults:
            self.faults.append(line)

    def turn_delivered(self, turn: ScriptTurn) -> None:
        """A turn was sent: the directives that act with it fire."""
        for bound in self.bound:
            if bound.turn.index == turn.index and bound.directive.kind in _TURN_EVENT_KINDS:
                self.fire(bound)

    def run_requested(self, turn: ScriptTurn | None, ran: bool, why_not: str | None = None) -> None:
        """A run-the-workflow note was acted on (or could not be)."""
        for bound in self.bound:
            if isinstance(bound.directive, RunWorkflow) and (turn is None or bound.turn.index == turn.index):
                if ran:
                    self.fire(bound)
                elif why_not:
                    self._why_not.setdefault(bound.key, why_not)

    # --- questions and parameters --------------------------------------------------------------

    def _held_decline(self, asked: str, siblings: Sequence[str]) -> Bound | None:
        # A decline applies in its window; once it fired it is held for the rest of the conversation
        # (a declined recipient is not filled in later on a setup card either).
        active = {b.key for b in self.active()}
        held = [b for b in self.bound if isinstance(b.directive, Decline) and (b.key in active or self.fired(b))]
        return _governing(held, asked, siblings)

    def _note_answer(self, asked: str, siblings: Sequence[str]) -> Bound | None:
        found = _governing([b for b in self.active() if isinstance(b.directive, Answer)], asked, siblings)
        if found is not None:
            return found
        # A value a note gave for this question earlier stays the user's answer (asked again); a note
        # about any question answered the question it was given for, not every later one.
        answered = [
            b
            for b in self.bound
            if isinstance(b.directive, Answer)
            and self.fired(b)
            and (b.directive.trigger.topic or b.directive.trigger.detail)
        ]
        return _governing(answered, asked, siblings)

    def _near_misses(self, asked: str) -> None:
        """Notes in force about a question close to this one, but not naming it ("the alert channel" when
        only "Which channel should it post to?" comes): the user cannot tell whether they meant it."""
        for bound in self.active():
            if isinstance(bound.directive, Answer | Decline) and near_miss(bound.directive.trigger, asked):
                self._near.setdefault(bound.key, asked)

    def _texts(self) -> tuple[list[str], list[str]]:
        """(spoken texts, note texts), most relevant first: the active turns, delivered ones from the
        latest, then the rest of the script."""
        active = self.script.active_turns()
        users = self.script.user_turns
        delivered = [t for t in reversed(users) if self.script.delivered(t) and t not in active]
        rest = [t for t in users if t not in active and t not in delivered]
        ordered = [*active, *delivered, *rest]
        return [t.spoken for t in ordered if t.spoken], [n for t in ordered for n in t.loose_notes]

    def value_for(self, request_id: str, asked: str, options: list[str], siblings: Sequence[str] = ()) -> ValueChoice:
        """The answer to one question or parameter: declined, a note's value, a stated value, an offered
        option the script mentions, or a plainly placeholder value (recorded as invented). ``siblings``
        are the other questions of the same widget: a note goes to the one that names its words best."""
        kind = detail_kind(asked)
        declined = self._held_decline(asked, siblings)
        if declined is not None:
            self.fire(declined)
            return self._record(request_id, asked, ValueChoice(value=None, source="declined"))
        answer = self._note_answer(asked, siblings)
        if answer is not None:
            self.fire(answer)
            assert isinstance(answer.directive, Answer)
            value = answer.directive.value
            option = _option_matching(options, value)
            return self._record(request_id, asked, ValueChoice(value=value, option=option, source="note"))
        self._near_misses(asked)
        spoken, notes = self._texts()
        if options:
            mentioned = _option_mentioned(options, "\n".join([*spoken, *notes]))
            if mentioned is not None:
                return self._record(request_id, asked, ValueChoice(value=mentioned, option=mentioned, source="option"))
        if kind is not None:
            for text in spoken:
                found = stated_values(kind, text)
                if found:
                    return self._record(request_id, asked, ValueChoice(value=found[0], source="stated"))
            for text in notes:
                found = stated_values(kind, text)
                if found:
                    return self._record(request_id, asked, ValueChoice(value=found[0], source="note"))
        if options:
            return self._record(request_id, asked, ValueChoice(value=options[0], option=options[0], source="invented"))
        return self._record(request_id, asked, ValueChoice(value=placeholder_for(kind), source="invented"))

    def _record(self, request_id: str, asked: str, choice: ValueChoice) -> ValueChoice:
        self.values.append(
            UserValue(
                message=self.script.message,
                request_id=request_id,
                asked=asked[:300],
                value=choice.value,
                source=choice.source,
            )
        )
        return choice

    # --- plans, credentials, web access --------------------------------------------------------

    def plan_review(self, steps: str, message: str = "") -> tuple[bool, str | None, Bound] | None:
        """``(approve, feedback, directive)`` when a plan directive governs this moment, else None."""
        bound = next((b for b in self.active() if isinstance(b.directive, PlanReview)), None)
        if bound is None:
            return None
        plan = bound.directive
        assert isinstance(plan, PlanReview)
        self.fire(bound)
        if plan.feedback is None:
            return plan.then == "approve", None, bound
        if plan.conditional:
            if plan.satisfied_by(steps, message):
                return True, None, bound
            self._pushes[bound.key] = self._pushes.get(bound.key, 0) + 1
            return False, plan.feedback, bound
        pushed = self._pushes.get(bound.key, 0)
        if pushed < plan.pushes:
            self._pushes[bound.key] = pushed + 1
            return False, plan.feedback, bound
        return plan.then == "approve", None, bound

    def credential_for(self, credential_type: str, *names: str) -> Bound | None:
        """The credential directive governing a card entry of this type now: one naming the service
        wins over one about any service; a later one in the script over an earlier one."""
        matching = [
            b
            for b in self.active()
            if isinstance(b.directive, Credential) and b.directive.applies_to(credential_type, *names)
        ]
        specific = [b for b in matching if isinstance(b.directive, Credential) and b.directive.services]
        chosen = (specific or matching)[-1:] if matching else []
        return chosen[0] if chosen else None

    def engages_any(self, credential_types: list[str]) -> bool:
        """Some directive governing now engages one of these credential types (or may: it names them)."""
        return any(self.credential_for(t) is not None for t in credential_types)

    def web_access(self) -> tuple[bool, Bound] | None:
        bound = next((b for b in self.active() if isinstance(b.directive, WebAccess)), None)
        if bound is None:
            return None
        assert isinstance(bound.directive, WebAccess)
        self.fire(bound)
        return bound.directive.allow, bound

    # --- the record ----------------------------------------------------------------------------

    def delivery(self, *, ended_by: str, follow_ups: int, budget: int | None) -> ScriptDelivery:
        """How the script went, once the conversation is over."""
        script = self.script
        cut = _cut_reason(ended_by, follow_ups, budget)
        turns: list[ScriptTurnDelivery] = []
        for turn in script.user_turns[1:]:
            delivered = script.delivered(turn)
            why = None
            in_progress = script.list_in_progress
            if in_progress is not None and in_progress[0] == turn.index:
                delivered = False
                why = f"{in_progress[1]} of its messages (list items or pushes) were never sent: {cut}"
            elif not delivered:
                why = cut
            message = script.sent_at(turn) if script.speaks(turn) else script.window(turn)[0]
            turns.append(
                ScriptTurnDelivery(
                    turn=turn.index, says=turn.spoken[:200], delivered=delivered, message=message, why_not=why
                )
            )
        directives = [self._directive_delivery(b, cut) for b in self.bound]
        for bound in self.bound:
            near = self._near.get(bound.key)
            if near is not None and not self.fired(bound):
                assert isinstance(bound.directive, Answer | Decline)
                self.fault(
                    bound,
                    f'it is about {bound.directive.trigger.about()}, and the agent asked "{near[:120]}" instead: '
                    "the scripted user could not tell whether the note meant that question, so it did not follow it",
                )
        not_understood = [
            f'conversation[{turn.index}]: note "{note}": {part}'
            for turn in script.user_turns
            for note, part in turn.not_understood
        ]
        return ScriptDelivery(
            tracked=True,
            turns=turns,
            directives=directives,
            not_understood=not_understood,
            values=list(self.values),
            faults=list(self.faults),
        )

    def _directive_delivery(self, bound: Bound, cut: str) -> DirectiveDelivery:
        directive = bound.directive
        turn_event = directive.kind in _TURN_EVENT_KINDS or isinstance(directive, RunWorkflow)
        required = turn_event or directive.trigger.required
        fired = bound.key in self._fired
        why = None
        if not fired:
            opened, _ = self.script.window(bound.turn)
            if bound.key in self._why_not:
                why = self._why_not[bound.key]
            elif opened is None or (turn_event and not self.script.delivered(bound.turn)):
                why = f"its turn was never reached: {cut}"
            elif turn_event:
                why = "its turn was sent, but the scripted user had nothing to do for it"
            else:
                why = f"the event never came: {_never_came(directive)} while its note applied"
        return DirectiveDelivery(
            turn=bound.turn.index,
            note=bound.note,
            does=directive.describe(),
            required=required,
            fired=fired,
            message=self._fired.get(bound.key),
            why_not=why,
        )


def _governing(bounds: list[Bound], asked: str, siblings: Sequence[str]) -> Bound | None:
    triggers = [b.directive.trigger for b in bounds]
    at = governing(triggers, asked, siblings)
    return bounds[at] if at is not None else None


def _never_came(directive: Directive) -> str:
    trigger = directive.trigger
    if trigger.event == "plan":
        return "no plan was shown"
    if trigger.event == "credential-card":
        services = " or ".join(trigger.topic) if trigger.topic else "any service"
        return f"no credential card for {services} appeared"
    if trigger.event == "web-access":
        return "no web-access prompt appeared"
    if trigger.topic or trigger.detail:
        return f"no question about {trigger.about()} was asked"
    return "no question was asked"


def _cut_reason(ended_by: str, follow_ups: int, budget: int | None) -> str:
    if ended_by == "budget":
        return f"the message budget ({budget} follow-up{'' if budget == 1 else 's'}) was spent"
    if ended_by in ("turn-timeout", "conversation-timeout", "stalled"):
        return f"the conversation ended first ({ended_by})"
    if ended_by == "error":
        return "the conversation stopped on an error"
    if ended_by == "done":
        return "the user declared done first"
    if ended_by == "cancelled":
        return "the run was cancelled"
    return f"the conversation ended ({ended_by}) after {follow_ups} follow-ups"


def _option_matching(options: list[str], value: str) -> str | None:
    lowered = value.lower()
    exact = next((o for o in options if o.lower() == lowered), None)
    if exact is not None:
        return exact
    contained = [o for o in options if o.lower() in lowered or lowered in o.lower()]
    return max(contained, key=len) if contained else None


def _option_mentioned(options: list[str], text: str) -> str | None:
    """The offered option the script mentions; the longest wins ("Slack (workspace 2)" over "Slack")."""
    lowered = text.lower()
    mentioned = [o for o in options if o.lower() in lowered]
    return max(mentioned, key=len) if mentioned else None
