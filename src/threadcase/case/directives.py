"""Directives: what a director note tells the scripted user to do, typed, and the moment it applies to.

Every ``[bracketed]`` note is read once, at load, by :mod:`threadcase.case.note_grammar` into a
:class:`NoteReading`: the directives it holds and the parts of it that no directive covers (reported by
``threadcase validate``; in a scripted run they make the case *not judged*). A directive carries its
:class:`Trigger`: the event it waits for (a question about a detail, the plan, a credential card, a web
access prompt) or ``turn`` (it applies when its own turn is delivered), and whether the case expects
that event (``required``: "*when* asked for the channel") or merely allows it ("*if* asked").

The scripted user (``threadcase.user_proxy``) follows directives; the model user reads the notes as
text. The grammar and its phrasings are documented in ``docs/director-notes.md``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.case.details import DetailKind

__all__ = [
    "UNDERSTOOD_SUMMARY",
    "Answer",
    "AsUsual",
    "Credential",
    "Decline",
    "Directive",
    "Hold",
    "NoteReading",
    "OneAtATime",
    "PlanReview",
    "RunWorkflow",
    "Say",
    "Tone",
    "Trigger",
    "TriggerEvent",
    "WebAccess",
]

_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")

TriggerEvent = Literal["turn", "question", "plan", "credential-card", "web-access"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Trigger(_Frozen):
    """When a directive applies."""

    event: TriggerEvent = "turn"
    """``turn``: when its own turn is delivered; otherwise the first such event in the turn's window."""
    topic: tuple[str, ...] = ()
    """For ``question``: the content words of what is asked about, as the note says them (empty = any
    question). For ``credential-card``: the services it is about, as squashed names (empty = any)."""
    head: tuple[str, ...] = ()
    """For ``question``: the words of the topic's head phrase ("timezone" in "the timezone for the
    schedule"), which a question must hold to match (see :mod:`threadcase.case.note_topics`)."""
    detail: DetailKind | None = None
    """For ``question``: the kind of detail asked about, when the note's own words name it ("the
    channel"); never guessed from the value."""
    required: bool = False
    """The case expects this moment ("when …"): if it never comes, the case is not judged. False for
    "if …" and for standing directions with no moment of their own."""

    def about(self) -> str:
        """What a question trigger is about, in the note's words (and the detail kind they name)."""
        words = " ".join(self.topic or self.head)
        if self.detail is not None and self.detail not in (self.head or self.topic):
            article = "an" if self.detail[0] in "aeiou" else "a"
            return f"{words} ({article} {self.detail})" if words else str(self.detail)
        return words or "any question"

    def describe(self) -> str:
        if self.event == "turn":
            return "when its turn is sent"
        word = "when" if self.required else "if"
        if self.event == "question":
            return f"{word} asked" + (f" about {self.about()}" if self.topic or self.detail else "")
        if self.event == "plan":
            return f"{word} a plan is shown"
        if self.event == "credential-card":
            services = " or ".join(self.topic) if self.topic else "any service"
            return f"{word} a credential card for {services} appears"
        return f"{word} web access is asked for"


class _Base(_Frozen):
    clause: str
    """The words of the note this directive was read from."""
    trigger: Trigger = Field(default_factory=Trigger)
    """When it applies."""


class Answer(_Base):
    """Answer a question (or fill a setup-card parameter) with a given value."""

    kind: Literal["answer"] = "answer"
    value: str
    """The answer, as the note gives it (sent as the answer's text)."""

    def describe(self) -> str:
        return f"answer with {self.value!r} ({self.trigger.describe()})"


class Decline(_Base):
    """Decline to give a detail: the question is skipped and the value is never invented, later either."""

    kind: Literal["decline"] = "decline"

    def describe(self) -> str:
        about = self.trigger.about()
        return f"decline to give {about} ({'when' if self.trigger.required else 'if'} asked), and keep declining"


class PlanReview(_Base):
    """Push back on a plan with feedback, then approve or reject; or simply approve or reject it."""

    kind: Literal["plan"] = "plan"
    feedback: str | None = None
    """What the user says when pushing back (sent as the rejection's text); None = no push-back."""
    pushes: int = 1
    """How many times to push back before deciding (ignored when a condition decides)."""
    then: Literal["approve", "reject"] = "approve"
    """The decision once the push-backs are spent (or at once, without feedback)."""
    decided: bool = True
    """False: the note pushes back without saying what follows ("push back: drop the Slack post"); the
    scripted user then approves the revised plan, as after any push-back, and ``validate`` says so."""
    until_absent: tuple[str, ...] = ()
    """Approve only once none of these words appears in the plan ("once it no longer posts to Slack")."""
    until_present: tuple[str, ...] = ()
    """Approve only once all of these words appear in the plan ("once it includes retries")."""

    @property
    def conditional(self) -> bool:
        return bool(self.until_absent or self.until_present)

    def satisfied_by(self, steps: str, message: str = "") -> bool:
        """Whether a plan satisfies the condition this push-back waits for.

        "No longer mentions X" reads the plan's steps only (its message may say "removed the X step",
        or carry a workflow name); "mentions X" reads the message too ("I revised the plan: added
        error handling"), without what it quotes (an agent that "didn't understand “add error
        handling”" added nothing).
        """
        if self.until_absent:
            lowered = steps.lower()
            return not any(word.lower() in lowered for word in self.until_absent)
        lowered = f"{steps} {_QUOTED.sub(' ', message)}".lower()
        return all(word.lower() in lowered for word in self.until_present)

    def describe(self) -> str:
        if self.feedback is None:
            return f"{self.then} the plan ({self.trigger.describe()})"
        if self.until_absent:
            decide = f"approve once the plan no longer mentions {', '.join(self.until_absent)}"
        elif self.until_present:
            decide = f"approve once the plan mentions {', '.join(self.until_present)}"
        elif self.then == "reject":
            # A rejection with its reason: the reason goes with the "no", and the plan stays rejected.
            times = "" if self.pushes == 1 else f" {self.pushes} times"
            return (
                f"reject the plan with {self.feedback!r}{times}, and reject it again if it comes back "
                f"({self.trigger.describe()})"
            )
        else:
            times = "once" if self.pushes == 1 else f"{self.pushes} times"
            decide = f"{self.then} after pushing back {times}"
            if not self.decided:
                decide += " (the note does not say what follows a push-back: the revised plan is approved)"
        return f"push back on the plan with {self.feedback!r}, then {decide} ({self.trigger.describe()})"


class Hold(_Base):
    """Hold a position: insist, push again, keep declining when re-asked, then give up."""

    kind: Literal["hold"] = "hold"
    times: int | None = None
    """How many messages push the position ("two more times"); None = as the turn says it, once."""
    text: str | None = None
    """What the user pushes for, as a user's sentence ("for it to just hardcode the token"); None = the
    turn's own words (a note-only turn: the last request, repeated)."""

    def describe(self) -> str:
        said = f"say {self.text!r}" if self.text else "send the turn's words as written"
        times = f" {self.times} time{'s' if self.times != 1 else ''}" if self.times else ""
        return f"hold the position: {said}{times}, keep every decline"


class Tone(_Base):
    """A tone of voice ("sounding frustrated"): the model user's to play; the scripted one sends the words."""

    kind: Literal["tone"] = "tone"

    def describe(self) -> str:
        return "a tone of voice (the scripted user sends the turn's words as written)"


class AsUsual(_Base):
    """Answer everything else as the scripted user always does ("make up plausible values for the rest")."""

    kind: Literal["as-usual"] = "as-usual"

    def describe(self) -> str:
        return "answer any other question as usual: a value the script states, else a plainly placeholder one"


class OneAtATime(_Base):
    """Send a list of changes one per message, each after the previous run finished."""

    kind: Literal["one-at-a-time"] = "one-at-a-time"
    items: tuple[str, ...] = ()
    """The list when the note holds it; empty = the list in the turn's own words."""

    def describe(self) -> str:
        where = f"{len(self.items)} items from the note" if self.items else "the turn's list"
        return f"send {where} one per message, each after the previous one was answered"


class Credential(_Base):
    """Engage or defer a credential card, per service; name the credential to pick, or one meant to fail."""

    kind: Literal["credential"] = "credential"
    services: tuple[str, ...] = ()
    """The services the note names, squashed (lower case, no spaces or punctuation: ``slack``,
    ``googlesheets``, ``typeform``); empty = any service."""
    action: Literal["engage", "defer"] = "engage"
    option: Literal["manual", "auto"] = "manual"
    """``auto`` asks for automatic setup (inert without a browser: the run stalls)."""
    names: tuple[str, ...] = ()
    """Names of existing credentials to pick (quoted in the note)."""
    new: bool = False
    """Create a new credential even when one exists."""
    working: bool = True
    """False: the credential is meant to fail its connection test."""

    def applies_to(self, credential_type: str, *names: str) -> bool:
        """Whether a card entry is for one of the services: its credential type or another name of it (the
        node's type) holds the service's squashed name ("Google Sheets" ~ ``googleSheetsOAuth2Api``)."""
        if not self.services:
            return True
        squashed = [re.sub(r"[^a-z0-9]", "", n.lower()) for n in (credential_type, *names)]
        return any(s in name for s in self.services for name in squashed)

    def describe(self) -> str:
        services = ", ".join(self.services) or "any service"
        if self.action == "defer":
            return f"defer the {services} credential ({self.trigger.describe()})"
        how = "automatic setup" if self.option == "auto" else "set it up by hand"
        if self.names:
            how += f", picking {', '.join(repr(n) for n in self.names)}"
        elif self.new:
            how += " with a new credential"
        if not self.working:
            how += "; it is meant to fail its connection test"
        return f"engage the {services} credential: {how} ({self.trigger.describe()})"


class RunWorkflow(_Base):
    """Run the last saved workflow for real before sending the turn (needs ``allowUserExecution``)."""

    kind: Literal["run-workflow"] = "run-workflow"

    def describe(self) -> str:
        return "run the saved workflow before sending the turn"


class Say(_Base):
    """Say something (a note-only turn's message), possibly several times."""

    kind: Literal["say"] = "say"
    text: str
    times: int = 1

    def describe(self) -> str:
        times = "" if self.times == 1 else f" {self.times} times"
        return f"say {self.text!r}{times}"


class WebAccess(_Base):
    """Allow or deny a web-access (domain, web search) prompt."""

    kind: Literal["web-access"] = "web-access"
    allow: bool

    def describe(self) -> str:
        return f"{'allow' if self.allow else 'deny'} web access ({self.trigger.describe()})"


Directive = Annotated[
    Answer | Decline | PlanReview | Hold | Tone | AsUsual | OneAtATime | Credential | RunWorkflow | Say | WebAccess,
    Field(discriminator="kind"),
]


class NoteReading(_Frozen):
    """One note, read: the directives it holds, and what no directive covers."""

    note: str
    directives: tuple[Directive, ...] = ()
    not_understood: tuple[str, ...] = ()
    """Parts of the note (sentences or clauses) the scripted user cannot follow, with why."""

    @property
    def understood(self) -> bool:
        return not self.not_understood


UNDERSTOOD_SUMMARY = (
    "answer a question with a value, decline a detail, push back on a plan then approve or reject, hold a "
    "position, send a list one item at a time, engage or defer a credential card per service (naming the one "
    "to pick or one meant to fail), run the workflow, say something, allow or deny web access — "
    "see docs/director-notes.md"
)
"""What the scripted user understands, in one line (``validate``'s warnings end with it)."""
