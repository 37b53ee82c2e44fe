"""Expected meanings of director notes, compactly, and how a reading is scored against them.

A corpus row is ``(note, [expected directive, ...])`` — or ``(note, REFUSE)`` for a note whose intent
no directive covers (the scripted user must report it, never guess). Each expected directive names
its kind and the fields that carry the note's meaning (the detail asked about and the value given,
the service and what to do with its card, the push-back and when to approve, ...); fields left out
are not checked.

A reading scores:

- ``pass``: understood, and every directive means what the row says;
- ``refused``: some part of it is *not understood* (the case would be not judged: a miss, never a
  wrong verdict);
- ``wrong``: understood, but it means something else — worse than a refusal, since the scripted user
  would then do the wrong thing without anyone knowing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from threadcase.case.directives import (
    Answer,
    Credential,
    Decline,
    Directive,
    Hold,
    NoteReading,
    OneAtATime,
    PlanReview,
    Say,
    WebAccess,
)

Outcome = Literal["pass", "refused", "wrong"]


@dataclass(frozen=True)
class Expect:
    """One expected directive: its kind and the fields that must hold (None = not checked)."""

    kind: str
    about: str | None = None
    """answer/decline: the detail kind, or a word of the topic; ``any`` = any question."""
    words: tuple[str, ...] | None = None
    """answer/decline: words of the note's topic the directive must keep (matched against questions)."""
    value: str | None = None
    """answer: the value (``~x``: contains x)."""
    required: bool | None = None
    """The moment is expected ("when ...") rather than allowed ("if ...")."""
    feedback: str | None = None
    """plan: words the push-back contains (case-insensitive)."""
    pushes: int | None = None
    then: str | None = None
    absent: tuple[str, ...] | None = None
    present: tuple[str, ...] | None = None
    times: int | None = None
    """hold/say: how many messages."""
    text: str | None = None
    """say/hold: what is said (punctuation at the end and case ignored; ``~x``: contains x)."""
    items: int | None = None
    """one-at-a-time: how many items the note itself lists (0: the list is in the turn)."""
    services: tuple[str, ...] | None = None
    action: str | None = None
    new: bool | None = None
    working: bool | None = None
    names: tuple[str, ...] | None = None
    option: str | None = None
    allow: bool | None = None


def A(about: str, value: str, required: bool | None = None, words: tuple[str, ...] | None = None) -> Expect:
    return Expect("answer", about=about, value=value, required=required, words=words)


def D(about: str, required: bool | None = None, words: tuple[str, ...] | None = None) -> Expect:
    return Expect("decline", about=about, required=required, words=words)


def P(
    feedback: str | None = None,
    pushes: int | None = None,
    then: str | None = None,
    absent: tuple[str, ...] | None = None,
    present: tuple[str, ...] | None = None,
    required: bool | None = None,
) -> Expect:
    return Expect(
        "plan",
        feedback=feedback,
        pushes=pushes,
        then=then,
        absent=absent,
        present=present,
        required=required,
    )


def APPROVE(required: bool | None = None) -> Expect:
    return Expect("plan", feedback="", then="approve", required=required)


def REJECT() -> Expect:
    return Expect("plan", feedback="", then="reject")


def H(times: int | None = None, text: str | None = None) -> Expect:
    return Expect("hold", times=times, text=text)


def T() -> Expect:
    return Expect("tone")


def S(text: str, times: int | None = None) -> Expect:
    return Expect("say", text=text, times=times)


def L(items: int) -> Expect:
    return Expect("one-at-a-time", items=items)


def C(
    services: tuple[str, ...] | str = (),
    action: str = "engage",
    new: bool | None = None,
    working: bool | None = None,
    names: tuple[str, ...] | None = None,
    option: str | None = None,
) -> Expect:
    wanted = (services,) if isinstance(services, str) else services
    return Expect(
        "credential",
        services=tuple(sorted(wanted)),
        action=action,
        new=new,
        working=working,
        names=names,
        option=option,
    )


def R() -> Expect:
    return Expect("run-workflow")


def W(allow: bool) -> Expect:
    return Expect("web-access", allow=allow)


def U() -> Expect:
    return Expect("as-usual")


REFUSE: list[Expect] = []
"""The note's intent is no directive: it must be reported as not understood."""

Row = tuple[str, list[Expect]]


def _loose(text: str) -> str:
    return re.sub(r"[\s.!?]+$", "", re.sub(r"\s+", " ", text.strip())).lower()


def _text_matches(expected: str, actual: str) -> bool:
    if expected.startswith("~"):
        return expected[1:].lower() in actual.lower()
    return _loose(expected) == _loose(actual)


def _about(d: Answer | Decline) -> tuple[str | None, tuple[str, ...]]:
    return d.trigger.detail, d.trigger.topic


def _mismatches(e: Expect, d: Directive) -> list[str]:
    if d.kind != e.kind:
        return [f"kind {d.kind} != {e.kind}"]
    out: list[str] = []

    def check(name: str, ok: bool, actual: object) -> None:
        if not ok:
            out.append(f"{name}: {actual!r} != {getattr(e, name)!r}")

    if e.required is not None:
        check("required", d.trigger.required == e.required, d.trigger.required)
    if isinstance(d, Answer | Decline) and e.about is not None:
        detail, topic = _about(d)
        if e.about == "any":
            check("about", detail is None and not topic, (detail, topic))
        else:
            check("about", detail == e.about or (detail is None and e.about in topic), (detail, topic))
        if e.words is not None:
            check("words", all(w in topic for w in e.words), topic)
    if isinstance(d, Answer) and e.value is not None:
        check("value", _text_matches(e.value, d.value), d.value)
    if isinstance(d, PlanReview):
        if e.feedback == "":
            check("feedback", d.feedback is None, d.feedback)
        elif e.feedback is not None:
            check("feedback", d.feedback is not None and e.feedback.lower() in d.feedback.lower(), d.feedback)
        elif d.feedback is None:
            out.append("feedback: none, a push-back was expected")
        if e.pushes is not None and not d.conditional:
            check("pushes", d.pushes == e.pushes, d.pushes)
        if e.then is not None:
            check("then", d.then == e.then, d.then)
        if e.absent is not None:
            check("absent", set(d.until_absent) == set(e.absent), d.until_absent)
        elif e.feedback != "":
            check("absent", not d.until_absent, d.until_absent)
        if e.present is not None:
            check("present", set(d.until_present) == set(e.present), d.until_present)
        elif e.feedback != "":
            check("present", not d.until_present, d.until_present)
    if isinstance(d, Hold):
        if e.times is not None:
            check("times", d.times == e.times, d.times)
        if e.text is not None:
            check("text", d.text is not None and _text_matches(e.text, d.text), d.text)
    if isinstance(d, Say):
        if e.text is not None:
            check("text", _text_matches(e.text, d.text), d.text)
        check("times", d.times == (e.times or 1), d.times)
    if isinstance(d, OneAtATime) and e.items is not None:
        check("items", len(d.items) == e.items, list(d.items))
    if isinstance(d, Credential):
        check("services", d.services == e.services, d.services)
        check("action", d.action == e.action, d.action)
        for name in ("new", "working", "option"):
            if getattr(e, name) is not None:
                check(name, getattr(d, name) == getattr(e, name), getattr(d, name))
        if e.names is not None:
            check("names", d.names == e.names, d.names)
    if isinstance(d, WebAccess) and e.allow is not None:
        check("allow", d.allow == e.allow, d.allow)
    return out


@dataclass
class Score:
    """How one note was read against its row."""

    note: str
    outcome: Outcome
    why: list[str] = field(default_factory=list)


def score(note: str, expected: list[Expect], reading: NoteReading) -> Score:
    """Score a reading against a row (see the module docstring)."""
    if not reading.understood:
        if not expected:
            return Score(note, "pass")
        return Score(note, "refused", list(reading.not_understood))
    if not expected:
        return Score(note, "wrong", [f"read as {[d.describe() for d in reading.directives]}, expected a refusal"])
    if len(reading.directives) != len(expected):
        got = [d.describe() for d in reading.directives]
        return Score(note, "wrong", [f"{len(got)} directives {got}, expected {[e.kind for e in expected]}"])
    why = [
        f"#{i} {m}"
        for i, (e, d) in enumerate(zip(expected, reading.directives, strict=True))
        for m in _mismatches(e, d)
    ]
    return Score(note, "wrong" if why else "pass", why)
