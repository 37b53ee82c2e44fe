"""Plan notes: push back on a plan with feedback, then approve or reject — or simply decide.

A plan sentence is read piece by piece, each piece one of

- a **push-back** ("push back twice", "object", "reject the first plan", "say no", "send it back",
  "don't approve until …"), with its feedback (after ``:``, "saying", "with", "because", "asking for",
  "that …") and a condition ("until the Slack step is gone");
- **feedback** on its own ("ask it to drop the Gmail step", "tell it the Slack part isn't needed",
  "point out it misses retries");
- a **decision** ("approve", "accept the revised one", "sign off", "greenlight it", "reject it
  outright", "approve once it no longer posts to Slack", "reject any plan that still has Slack");

and the pieces are put together into one :class:`PlanReview`. A decision in a later sentence ("Then
approve.") completes the push-back before it. A **rejection** (reject, turn down, say no, veto, don't
approve) is never turned into an approval: its reason — after a colon, "because", or in the next
sentence — goes with the "no", and the revised plan is rejected too, unless the note itself approves
what follows ("reject the first plan: …; approve the next one"). A manner ("outright", "flatly") is no
part of the reason. A condition in the plan's moment ("if the plan has a Slack step, push back")
pushes back until the plan no longer has it. A condition the scripted user cannot check against the
plan's steps ("once it looks professional", "if it has more than five steps") is not understood,
never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from threadcase.case.details import topic_words
from threadcase.case.directives import PlanReview, Trigger
from threadcase.case.note_phrasings import PIECES, SERVICE
from threadcase.case.note_text import capitalised, count_in, tidy_value

__all__ = ["PlanParts", "is_plan_sentence", "read_plan"]

_OBJECT = (
    r"(?:\s+(?:it|this|that|them|the (?:plan|proposal|fix|change|changes|draft|outline)|this plan|that plan|"
    r"(?:the|any|a|every) (?:first |initial |proposed |original )?(?:plan|proposal|version|one|draft)|"
    r"whatever (?:plan )?it (?:proposes|suggests|shows|comes up with)|"
    r"the (?:revised|next|second|new|updated|changed|fixed|corrected|following|2nd|final|amended)"
    r"(?: (?:one|plan|version|proposal|draft))?|(?:it|the plan) once|plan|proposal))?"
)
_FIRST_ONLY = re.compile(r"\b(?:first|initial|original|1st)\s+(?:plan|proposal|version|one|draft)\b", re.IGNORECASE)
"""A push-back on the first plan only ("reject the first plan: …"): what comes after is not rejected."""
_MANNER = re.compile(
    r"^\s*(?:(?:outright|flatly|firmly|politely|bluntly|kindly|nicely|immediately|right away|straight away|at once|"
    r"completely|entirely|again)\b\s*,?\s*)+",
    re.IGNORECASE,
)
"""How the user pushes back ("reject it outright: …"): a manner, never part of the feedback."""
_PUSH = re.compile(
    rf"^(?P<verb>push(?:es)?\s+back|object(?:s)?|reject(?:s)?|refuse(?:s)?|say no|turn down|"
    rf"turn (?:it|the plan|this plan|the proposal) down|send (?:it|the plan) back|"
    rf"bounce|veto|decline|(?:don't|do not|never) (?:approve|accept|ok|okay|sign off on)|ask for changes|"
    rf"request changes|complain|disagree|push)(?:\s+(?:to|on|against|about))?{_OBJECT}\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_FEEDBACK_INTRO = re.compile(
    r"^\s*(?:(?::|—|–|-{1,2}|,)\s*)?(?:and\s+)?(?:with\b:?|saying(?: that)?|by saying(?: that)?|and say(?: that)?|"
    r"say(?:ing)?(?: that)?|because|since|as|on the grounds that|that|on|about|for|asking(?: it)?(?: to| for)?|"
    r"and ask(?: it)?(?: to| for)?|telling it(?: to| that)?|tell(?:ing)? it(?: to| that)?|"
    r"ask(?:ing)?(?: it)?(?: to| for)?)?\s*:?\s*(?P<feedback>.*)$",
    re.IGNORECASE,
)
_SAY_FEEDBACK = re.compile(
    r"^(?:say(?:ing)?|tell(?:ing)? (?:it|them|the (?:agent|assistant))(?: that)?|point(?:ing)? out|explain|mention|"
    r"note|complain|object|ask(?:ing)? (?:it |them )?(?:to|for)|ask(?:ing)? for|request|suggest|insist|because|"
    r"since|reason|the reason|why|because of)\b(?: that| is| being)?\s*:?\s*(?P<feedback>.+)$",
    re.IGNORECASE,
)
_DECISION = re.compile(
    rf"^(?:only\s+)?(?P<verb>approve|accept|confirm|okay|ok|sign off(?: on)?|go ahead(?: with)?|say yes(?: to)?|"
    rf"green[- ]?light|give (?:it )?the go[- ]ahead(?: to)?|agree(?: to)?|reject|decline|refuse|turn down|"
    rf"say no to|veto)(?:\s+(?:it|this|that|the plan))?{_OBJECT}\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_LATER = re.compile(
    r"\b(?:second|revised|next|new|updated|2nd|changed|fixed|corrected|following|amended|final) (?:version|plan|"
    r"one|proposal|draft)\b|\b(?:afterwards|after that|the second time|next time|then)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:\s*(?:outright|as (?:proposed|is|it is|shown|written|presented)|without (?:changes|comment|edits|"
    r"asking for changes|any changes)|right away|immediately|straight away|at once|as-is|for good|then|after that|"
    r"afterwards|this time|anyway|regardless|every time|entirely|completely|as well|too|it proposes|it suggests|"
    r"it shows|once it's revised|once revised|when it's revised|whatever it says|no matter what|either way|"
    r"in any case|whatever it proposes|regardless of what it says|no reason given|with no reason|without (?:a |any )?"
    r"(?:reason|explanation|comment)|no explanation|no questions asked)\b)*\s*$",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"^\s*(?:only\s+)?(?:once|when|after(?!\s+that\s*$)|as soon as|if|until|till|unless|provided(?: that)?|"
    r"as long as|but only (?:once|when|if))\s+(?P<cond>.+)$",
    re.IGNORECASE,
)
_RELATIVE = re.compile(r"^\s*(?:that|which)\s+(?:still\s+)?(?P<cond>.+)$", re.IGNORECASE)
_ABSENT = re.compile(
    r"^(?:it|the plan|the (?:revised|new|next|updated) (?:plan|version|one)|that|there)?\s*(?:no longer|"
    r"doesn't|does not|don't|do not|stops?|drops|has no|have no|contains no|mentions no|includes no|is without|"
    r"leaves? out|removes?|omits?|lacks?|has dropped|has removed|loses|is|are|no|without)\s+(?:any\s+)?"
    r"(?:(?:has|have|includes?|mentions?|contains?|uses?|posts? to|sends?|sends? to|emails?)\s+)?(?:any\s+)?"
    r"(?P<what>.+?)\s*(?:anymore|any more)?$",
    re.IGNORECASE,
)
_ABSENT_AFTER = re.compile(
    r"^(?P<what>.+?)\s+(?:is|are|has been|have been|gets|get|was|were)\s+(?:gone|removed|dropped|out|taken out|"
    r"deleted|no longer there|no longer in it|off the plan)\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    r"^(?:it|the plan|the (?:revised|new|next|updated) (?:plan|version|one)|that)?\s*(?:still\s+)?(?:includes?|"
    r"mentions?|has|have|with|adds?|contains?|uses?|covers?|handles?|shows?|has added|now has|includes|posts? to|"
    r"sends? to)\s+(?P<what>.+?)(?:\s+in it)?$",
    re.IGNORECASE,
)
_PRESENT_AFTER = re.compile(
    r"^(?P<what>.+?)\s+(?:is|are|has been|have been|gets|get)\s+(?:added|included|in|there|in there|in place|"
    r"in it|in the plan|part of it|part of the plan)$",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"^(?:that(?:'s| is| has been)|it(?:'s| is| has been)|they(?:'re| are| have been)|the (?:change|changes|fix)"
    r"(?: is| are| has been| have been)?|this is)\s+(?:done|fixed|changed|updated|sorted|made|in|applied|"
    r"added|addressed|handled|revised|in place)$|^it (?:does that|has done that|revises it|fixes it)$",
    re.IGNORECASE,
)
_PRONOUN_GONE = re.compile(
    r"^(?:it|that|they|this)(?:'s|'re| is| are| has been| have been)\s+(?:gone|removed|dropped|out)$", re.I
)
_ON_THE_PLAN = re.compile(
    r"^\s*(?:on|to|against|about)\s+(?:the|this|that|its|any|a)\s+(?:first\s+)?(?:plan|proposal)\b", re.IGNORECASE
)
_PLAN_WORDS = re.compile(r"\b(?:plan|proposal|proposed steps)\b", re.IGNORECASE)
_STEP_NOISE = frozenset(
    "post posts posting send sends step steps node nodes message messages anymore part parts bit branch the a".split()  # noqa: SIM905 - a word list reads better as text
)


def _plan_words(what: str) -> tuple[str, ...]:
    services = [s.lower() for s in SERVICE.findall(what)]
    if services:
        return tuple(
            dict.fromkeys("email" if s in ("e-mail", "gmail") and "email" in what.lower() else s for s in services)
        )
    return tuple(w for w in topic_words(what) if w not in _STEP_NOISE)


Wanted = tuple[tuple[str, ...], tuple[str, ...]]


_QUANTITY = re.compile(
    r"\b(?:more|less|fewer|at least|at most|too|over|under|than|enough|long|short|big|small|many|much|\d+|two|"
    r"three|four|five|six|seven|eight|nine|ten)\b",
    re.IGNORECASE,
)


def condition(cond: str, feedback: str | None) -> Wanted | Literal["done"] | None:
    """``(absent, present)`` words of a plan condition ("it no longer posts to Slack"); ``"done"`` for
    "once that's done" (the revised plan); None when the scripted user cannot check it."""
    text = cond.strip().rstrip(".")
    if _QUANTITY.search(text):
        return None  # "more than five steps", "too long": nothing a word of the plan's steps can show
    text = re.sub(r"(?<!\bis)(?<!\bare)\s+(?:in it|from it|from the plan|in the plan)$", "", text, flags=re.IGNORECASE)
    if _DONE.match(text):
        return "done"
    if _PRONOUN_GONE.match(text):
        words = _plan_words(feedback or "")
        return (words, ()) if words else None
    for pattern, absent in ((_ABSENT_AFTER, True), (_PRESENT_AFTER, False), (_ABSENT, True), (_PRESENT, False)):
        m = pattern.match(text)
        if m is None:
            continue
        if pattern is _ABSENT and not re.search(
            r"\b(?:no longer|doesn't|does not|stops?|drops|no|without|leaves? out|removes?|omits?|lacks?|dropped|"
            r"removed|loses)\b",
            text[: m.start("what")],
            re.IGNORECASE,
        ):
            continue
        words = _plan_words(m.group("what"))
        if words:
            return (words, ()) if absent else ((), words)
    return None


_APPEARS = re.compile(
    r"^(?:(?:for|of) [\w' -]+?\s+)?(?:is |are |gets |has been |was )?(?:first |finally |now |then )?"
    r"(?:shown|displayed|presented|proposed|posted|ready|up|out|here|in|there|back|revised|updated|sent|"
    r"appears?|appeared|show(?:s|ing)?(?: up)?|showed up|com(?:es?|ing)(?: up| in| back| through)?|came|"
    r"arrives?|arrived|pops? up|popped up|lands?|landed|visible|available)?"
    r"(?: (?:to|for) (?:you|the user|me|review|approval))?(?: for the first time| again)?$",
    re.IGNORECASE,
)


def plan_moment(moment: str) -> Wanted | Literal["unknown"] | None:
    """What a plan moment asks of the plan: None when it is only the moment ("when the plan is shown");
    ``(absent, present)`` words when it is a condition the plan's steps can be checked against ("if the
    plan has a Slack step"); ``"unknown"`` for a condition they cannot ("if the plan seems secure")."""
    found = _PLAN_WORDS.search(moment)
    if found is None:
        return None
    tail = moment[found.end() :].strip(" ,")
    if _APPEARS.match(tail):
        return None
    tail = re.sub(r"^(?:(?:that|which)\s+)?(?:still\s+)?", "", tail, flags=re.IGNORECASE)
    wanted = condition(tail, None)
    if wanted is None or wanted == "done":
        return "unknown"
    return wanted


@dataclass
class PlanParts:
    """What the pieces of one plan sentence said, before they become one directive."""

    feedback: str | None = None
    pushes: int | None = None
    pushed: bool = False
    outright: bool = False
    rejecting: bool = False
    """The push-back is a rejection ("reject it: …", "say no: …", "turn it down"), not a request for
    changes: with no decision said, the plan stays rejected (a rejection never turns into approval)."""
    then: str | None = None
    wanted: Wanted | None = None
    later: bool = False


def _feedback_for(wanted: Wanted) -> str:
    absent, present = wanted
    if absent:
        return f"Please take {' and '.join(absent)} out of the plan."
    return f"Please add {' and '.join(present)} to the plan."


# A decision about the plan inside words read as feedback ("approve it after", "until it's gone"):
# better not understood than sent as feedback. "approval step", "acceptance test" and "the budget isn't
# approved" are things a plan or a reason holds, not decisions about it.
_DECIDING = re.compile(
    r"(?:^|\b(?:and|then|but|,|to|only)\s+)(?:approve|accept|reject|sign off|green[- ]?light|ok|okay)\b|"
    r"\b(?:until|unless)\b",
    re.I,
)


def _clean_feedback(text: str) -> str | None:
    """The push-back as the user says it; None when the words decide about the plan themselves (then
    they were not read as they are meant: better not understood than sent as feedback)."""
    if _DECIDING.search(text):
        return None
    text = tidy_value(_MANNER.sub("", text).lstrip(":,— ").strip())
    text = re.sub(r"^(?:to|that)\s+", "", text, flags=re.IGNORECASE)
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return capitalised(text) if text else None


_REJECTING = frozenset({"reject", "decline", "refuse", "turn down", "say no to", "veto"})
_NOT_PLAN = re.compile(r"\b(?:credential|card|connect\w*|web|internet|search|access|domain)\b", re.IGNORECASE)


def is_plan_sentence(rest: str, after_plan: bool) -> bool:
    """Whether a sentence with no plan moment is about the plan anyway ("Approve the plan.",
    "Object to the first plan: …", "Approve the fix.", and after a plan sentence "Then approve.")."""
    first = PIECES.split(rest.strip(), maxsplit=1)[0].strip() if rest.strip() else ""
    push, decided = _PUSH.match(first), _DECISION.match(first)
    if (_PLAN_WORDS.search(rest) or after_plan) and (push or decided):
        return True
    if after_plan and _SAY_FEEDBACK.match(first):
        return True
    if decided is None or _NOT_PLAN.search(rest):
        return False
    if decided.group("verb").lower() in _REJECTING:
        # "reject it" alone may be a question, a card, web access: only "reject the fix / the proposal".
        return bool(re.match(r"^\S+\s+(?:the fix|the change|the proposal)\b", first, re.IGNORECASE))
    tail = decided.group("rest")
    return not tail.strip() or bool(_FILLER.match(tail)) or bool(_CONDITION.match(tail))


def _decision(parts: PlanParts, piece: str, text: Callable[[str], str]) -> bool:
    m = _DECISION.match(piece)
    if m is None:
        return False
    verb = m.group("verb").lower()
    parts.then = "reject" if verb in ("reject", "decline", "refuse", "turn down", "say no to", "veto") else "approve"
    whole = piece
    rest = m.group("rest")
    if _LATER.search(whole[: len(whole) - len(rest)]) or _LATER.search(rest):
        parts.later = True
    rest = re.sub(_LATER.pattern, " ", rest, flags=re.IGNORECASE) if not _CONDITION.match(rest) else rest
    cond = _CONDITION.match(rest) or _RELATIVE.match(rest)
    if cond is not None:
        wanted = condition(text(cond.group("cond")), parts.feedback)
        if wanted is None:
            return False
        if wanted == "done":
            parts.later = True
        else:
            assert not isinstance(wanted, str)
            if _RELATIVE.match(rest) and parts.then == "reject":
                wanted = (wanted[1], wanted[0]) if not wanted[0] else wanted
                # "reject any plan that still has Slack": push back until Slack is gone, then approve.
                parts.then = "approve"
                wanted = (wanted[0] or wanted[1], ())
            parts.wanted = wanted
        return True
    return bool(_FILLER.match(rest))


def _push(parts: PlanParts, piece: str, text: Callable[[str], str]) -> bool:
    m = _PUSH.match(piece)
    if m is None:
        return False
    verb = m.group("verb").lower()
    count, rest = count_in(m.group("rest"))
    if count is not None:
        parts.pushes = count
        rest = _ON_THE_PLAN.sub("", rest)
    until = re.search(r"\s*\b(?:until|till|unless|before)\s+(?P<cond>.+)$", rest, re.IGNORECASE)
    relative = _RELATIVE.match(rest)
    if until is not None or relative is not None:
        found = until or relative
        assert found is not None
        wanted = condition(text(found.group("cond")), parts.feedback)
        if wanted is None or wanted == "done":
            return False
        assert not isinstance(wanted, str)
        if relative is not None:
            wanted = (wanted[0] or wanted[1], ())
        parts.wanted = wanted
        rest = rest[: found.start()]
    rest = _MANNER.sub(" ", rest)
    if re.fullmatch(r"\s*(?:just\s+)?yet\s*", rest, re.IGNORECASE):
        return False  # "don't approve it yet": until when, the note does not say
    intro = _FEEDBACK_INTRO.match(rest)
    feedback = intro.group("feedback").strip() if intro is not None else rest.strip()
    said = bool(feedback) and not _FILLER.match(feedback)
    if said:
        cleaned = _clean_feedback(text(feedback))
        if parts.feedback is not None or cleaned is None:
            return False
        parts.feedback = cleaned
    parts.pushed = True
    rejecting = verb.startswith(("reject", "turn", "veto", "refuse", "decline", "say no", "don't", "do not", "never"))
    parts.rejecting = parts.rejecting or (rejecting and not _FIRST_ONLY.search(piece))
    if rejecting and count is None and not said:
        parts.outright = parts.wanted is None
    return True


_OTHER_HEAD = re.compile(
    r"^(?:connect|set up|hook|link|authori[sz]e|log in|sign in|run|execute|trigger|allow|deny|block|grant|permit|"
    r"skip|defer|leave|postpone|hold off|decline to|refuse to|(?:don't|do not) (?:give|share|tell|connect)|"
    r"send (?:these|them|each)|insist|keep insisting)\b",
    re.IGNORECASE,
)
"""The head of a piece that is about something else than the plan ("approve the plan, then connect Slack")."""


def read_plan(
    rest: str,
    trigger: Trigger,
    clause: str,
    text: Callable[[str], str],
    previous: PlanReview | None,
    moment: Wanted | None = None,
) -> tuple[PlanReview | str, str]:
    """One plan sentence read into a :class:`PlanReview` (completing ``previous`` when the sentence only
    decides: "Then approve."), or why it cannot be followed; and the rest of the sentence when it goes
    on about something else ("…, then connect Slack when the card appears")."""
    pieces = [p.strip() for p in PIECES.split(rest) if p and p.strip()]
    for at, raw in enumerate(pieces):
        piece = re.sub(r"^(?:then|and|so|but|only then|after that|afterwards|after)\s+", "", raw, flags=re.IGNORECASE)
        if at and _OTHER_HEAD.match(piece):
            return _plan(pieces[:at], trigger, clause, text, previous, moment), ", ".join(pieces[at:])
    return _plan(pieces, trigger, clause, text, previous, moment), ""


def _plan(
    pieces: list[str],
    trigger: Trigger,
    clause: str,
    text: Callable[[str], str],
    previous: PlanReview | None,
    moment: Wanted | None = None,
) -> PlanReview | str:
    plan_trigger = Trigger(event="plan", required=trigger.required if trigger.event == "plan" else False)
    parts = PlanParts()
    for raw in pieces:
        piece = re.sub(r"^(?:then|and|so|but|only then|after that|afterwards|after)\s+", "", raw, flags=re.IGNORECASE)
        if _push(parts, piece, text) or _decision(parts, piece, text) or _FILLER.match(piece):
            continue
        said = _SAY_FEEDBACK.match(piece)
        deciding = _DECIDING.search(piece)
        if said is not None and parts.feedback is None and not deciding:
            parts.feedback = _clean_feedback(text(said.group("feedback")))
            parts.pushed = True
            continue
        if parts.feedback is not None and not deciding:
            parts.feedback = f"{parts.feedback.rstrip('.')}, {tidy_value(text(piece))}"
            continue
        if parts.pushed and parts.feedback is None and not deciding:
            # "say no to the first plan — it should email me instead": the words after a push are its reason.
            parts.feedback = _clean_feedback(text(piece))
            parts.outright = False
            continue
        return f"a plan direction the scripted user cannot follow: {text(piece)!r}"
    if moment is not None and parts.wanted is None:
        if parts.pushed or parts.then == "reject":
            # "If the plan has a Slack step, push back (or reject it)": until the plan no longer has it.
            parts.wanted = (moment[1], moment[0])
            parts.pushed = True
        else:
            parts.wanted = moment  # "If the plan has no Slack step, approve it": once it has none
            parts.pushed = True
        parts.outright = False
    if (
        previous is not None
        and previous.feedback is None
        and previous.then == "reject"
        and parts.then == "approve"
        and parts.later
        and not parts.pushed
    ):
        # "Reject the plan. Approve the next one.": a rejection that asks for a new plan, then approval.
        return previous.model_copy(
            update={
                "feedback": "I'd like changes to this plan before I approve it.",
                "then": "approve",
                "clause": f"{previous.clause}. {clause}",
            }
        )
    outright = previous is not None and previous.feedback is None and previous.then == "reject"
    if outright and parts.then is None and parts.feedback is not None and parts.wanted is None and not parts.rejecting:
        assert previous is not None
        # "Don't approve it; explain the data has to stay in the EU.": the rejection's reason.
        return previous.model_copy(update={"feedback": parts.feedback, "clause": f"{previous.clause}. {clause}"})
    if not parts.pushed and previous is not None and previous.feedback is not None:
        # "Approve once it no longer posts to Slack." completes the push-back before it.
        update: dict[str, object] = {"then": parts.then or previous.then, "clause": f"{previous.clause}. {clause}"}
        if parts.wanted is not None:
            update.update(until_absent=parts.wanted[0], until_present=parts.wanted[1], then="approve")
        return previous.model_copy(update=update)
    if parts.outright and parts.feedback is None and parts.then is None:
        return PlanReview(clause=clause, trigger=plan_trigger, then="reject")
    # A rejection with its reason and no decision after it stays a rejection: "reject it: they wanted
    # Airtable" sends the reason, then rejects what comes back.
    rejected = parts.then == "reject" or (parts.then is None and parts.rejecting)
    if not parts.pushed and parts.wanted is None:
        return PlanReview(clause=clause, trigger=plan_trigger, then=parts.then or "approve")
    feedback = parts.feedback
    if feedback is None:
        feedback = _feedback_for(parts.wanted) if parts.wanted else "I'd like changes to this plan before I approve it."
    return PlanReview(
        clause=clause,
        trigger=plan_trigger,
        feedback=feedback,
        pushes=parts.pushes or 1,
        then="reject" if rejected and parts.wanted is None else "approve",
        decided=parts.then is not None or parts.wanted is not None or rejected,
        until_absent=parts.wanted[0] if parts.wanted else (),
        until_present=parts.wanted[1] if parts.wanted else (),
    )
