"""The director-note grammar: one note read into typed directives, once, at load.

A note is read sentence by sentence (``.``, ``;``, ``!``, ``?``, ``…`` or a line break end one; text in
quotes is never split). A sentence may open with a *trigger* — "when/once/as soon as/after/if/should/
whenever …" up to a comma or colon — that names the moment: a question ("when asked for the
channel"), the plan ("when the plan is shown"), a credential card ("when the Slack connection card
appears"), a web-access prompt, or the first build ("once it is built", the turn's own moment). The
rest is split into pieces at commas, "then", "but" and "and" before an action verb, and each piece
is matched against the directive phrasings in a fixed order. A piece no phrasing covers is *not
understood* — unless it only continues the value of the piece before it ("answer #deploys, the
release channel") or explains a decline ("you will add it yourself later").

Phrasings per directive are listed in ``docs/director-notes.md``; the tests hold one per phrasing.
Reading is pure and cached per note text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

from threadcase.case import note_phrasings as phrasing
from threadcase.case.details import detail_kind, stated_values, topic_words
from threadcase.case.directives import (
    Answer,
    AsUsual,
    Credential,
    Decline,
    Directive,
    Hold,
    NoteReading,
    OneAtATime,
    PlanReview,
    RunWorkflow,
    Say,
    Tone,
    Trigger,
    WebAccess,
)

__all__ = ["read_note", "split_items"]

# --- lists -----------------------------------------------------------------------------------------

_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$")
_INLINE_ITEMS = re.compile(r"(?:^|\s)(\d+)[.)]\s+")


def split_items(text: str) -> list[str]:
    """The items of a numbered or bulleted list in ``text`` (one per line, or inline ``1. a 2. b``)."""
    items = [m.group(1) for line in text.splitlines() if (m := _LIST_ITEM.match(line))]
    if len(items) >= 2:
        return [i.strip() for i in items if i.strip()]
    marks = list(_INLINE_ITEMS.finditer(text))
    numbered = [m for k, m in enumerate(marks) if m.group(1) == str(k + 1)]
    if len(numbered) >= 2:
        out = []
        for k, m in enumerate(numbered):
            end = numbered[k + 1].start() if k + 1 < len(numbered) else len(text)
            item = text[m.end() : end].strip().rstrip(",;").strip()
            if item:
                out.append(item)
        return out
    return []


def _without_list(note: str) -> tuple[str, tuple[str, ...]]:
    """The note's words without its list, and the list's items (a list needs two items or more)."""
    items = split_items(note)
    if not items:
        return note, ()
    lines = [line for line in note.splitlines() if not _LIST_ITEM.match(line)]
    text = "\n".join(lines)
    if text.strip() == note.strip():  # an inline list: cut from its first number
        first = next(m for m in _INLINE_ITEMS.finditer(note) if m.group(1) == "1")
        text = note[: first.start()]
    return text, tuple(items)


# --- quotes ----------------------------------------------------------------------------------------

_QUOTE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|‘[^’\n]*’|(?<![\w])'[^'\n]+'(?![\w])")
_SLOT = re.compile(r"\x00(\d+)\x00")


def _protect(text: str) -> tuple[str, list[str]]:
    quotes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    return _QUOTE.sub(keep, text), quotes


def _restore(text: str, quotes: list[str]) -> str:
    return _SLOT.sub(lambda m: quotes[int(m.group(1))], text)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"“‘'" and text[-1] in "\"”’'":
        return text[1:-1].strip()
    return text


def _tidy_value(text: str) -> str:
    text = re.sub(r"\s*(?:…|\.\.\.)\s*$", "", text.strip())
    text = text.rstrip(".,;:!").strip()
    return _unquote(text)


# --- reading ---------------------------------------------------------------------------------------


@dataclass
class _Reader:
    """The state of reading one note: what came before shapes what a sentence means."""

    items: tuple[str, ...]
    quotes: list[str]
    directives: list[Directive] = field(default_factory=list)
    not_understood: list[str] = field(default_factory=list)
    credential_note: bool = False
    """A piece of this note was about credentials: "skip Gmail" in it is a credential deferral."""
    sentence: str = ""
    """The sentence being read ("push back twice …: say X" says X twice)."""

    def text(self, piece: str) -> str:
        return _restore(piece, self.quotes).strip()

    def fail(self, piece: str, why: str) -> None:
        self.not_understood.append(f"{self.text(piece)!r} ({why})")


@functools.lru_cache(maxsize=4096)
def read_note(note: str) -> NoteReading:
    """Read one note's inner text into directives; the parts no directive covers are listed with why."""
    words, items = _without_list(note)
    protected, quotes = _protect(words)
    reader = _Reader(items=items, quotes=quotes)
    reader.credential_note = bool(phrasing.CARD_WORDS.search(protected)) and not phrasing.PLAN_WORDS.search(protected)
    for sentence in phrasing.SENTENCES.split(protected):
        sentence = sentence.strip().rstrip(".!;…").strip()
        if sentence:
            _read_sentence(reader, sentence)
    if items and not reader.directives and not reader.not_understood:
        # A list in a note with no other instruction is a list to send, item by item.
        reader.directives.append(OneAtATime(clause=note.strip(), items=items))
    return NoteReading(note=note, directives=tuple(reader.directives), not_understood=tuple(reader.not_understood))


def _read_sentence(reader: _Reader, sentence: str) -> None:
    sentence = re.sub(r"^(?:and|also|but|then|so|finally|afterwards)\s+", "", sentence, flags=re.IGNORECASE)
    trailing = phrasing.TRAILING_ASK.match(sentence)
    if trailing is not None and not phrasing.TRIGGER.match(sentence):
        # "Answer #deploys if asked for the channel" reads as "If asked for the channel, answer #deploys".
        sentence = f"{trailing.group('moment')}, {trailing.group('rest')}"
    reader.sentence = sentence
    trigger, rest, unknown = _trigger(sentence)
    if not rest:
        reader.fail(sentence, "a moment with nothing to do at it")
        return
    if trigger.event == "plan" or _plan_sentence(reader, rest):
        _read_plan(reader, rest, trigger)
        return
    before = len(reader.directives)
    previous: Directive | None = None
    for piece in (p for p in phrasing.PIECES.split(rest) if p and p.strip()):
        piece = piece.strip()
        if previous is not None and _continues(previous, piece):
            previous = _extend(reader, previous, piece)
            continue
        found = _classify(reader, piece, trigger)
        if found is True:
            continue  # understood, and said already: nothing new to do
        if found is None:
            if reader.directives and phrasing.RATIONALE.match(piece):
                continue  # an explanation of the instruction before it ("you will add it later")
            reader.fail(piece, "no directive matches these words")
            previous = None
            continue
        reader.directives.append(found)
        previous = found
    if unknown and any(not isinstance(d, Hold | Tone) for d in reader.directives[before:]):
        # The scripted user cannot tell when "if it mentions pricing" happens: only a tone or a held
        # position (which change nothing it sends) may wait on such a moment.
        del reader.directives[before:]
        reader.fail(sentence, f"the scripted user cannot tell when {unknown!r} happens")


def _trigger(sentence: str) -> tuple[Trigger, str, str | None]:
    """(trigger, the rest of the sentence, the words of a moment the scripted user cannot recognise)."""
    m = phrasing.TRIGGER.match(sentence)
    if m is None:
        return Trigger(), sentence, None
    word, body = m.group("word").lower(), m.group("body")
    split = phrasing.TRIGGER_END.search(body)
    if split is not None:
        moment, rest = body[: split.start()], body[split.end() :]
    else:
        verb = re.search(rf"\s(?=(?:then\s+)?(?:{phrasing.ACTION_VERBS})\b)", body, re.IGNORECASE)
        if verb is None:
            return Trigger(), sentence, None  # "if asked" with nothing after: read whole
        moment, rest = body[: verb.start()], body[verb.end() :]
    required = word in phrasing.REQUIRED
    if phrasing.PLAN_WORDS.search(moment):
        return Trigger(event="plan", required=required), rest, None
    if phrasing.CARD_WORDS.search(moment):
        services = tuple(sorted({phrasing.SERVICE_TYPES[s.lower()] for s in phrasing.SERVICE.findall(moment)}))
        return Trigger(event="credential-card", topic=services, required=required), rest, None
    if phrasing.WEB_WORDS.search(moment) and re.search(r"\b(?:access|permission|allow|search|browse)\b", moment, re.I):
        return Trigger(event="web-access", required=required), rest, None
    if phrasing.ASK_WORDS.search(moment):
        about = phrasing.ASKER.sub("", moment.strip())
        about = phrasing.ASK_WORDS.sub(" ", about)
        topic = tuple(w for w in topic_words(about) if not phrasing.AGAIN.fullmatch(w))
        return Trigger(event="question", topic=topic, detail=detail_kind(about), required=required), rest, None
    if phrasing.BUILT_WORDS.search(moment) or (word == "before" and phrasing.BEFORE_SENDING.search(moment)):
        return Trigger(), rest, None  # the turn's own moment: a follow-up is sent after a run anyway
    return Trigger(), rest, f"{m.group('word')} {moment.strip()}"


def _plan_sentence(reader: _Reader, rest: str) -> bool:
    if phrasing.PLAN_WORDS.search(rest) and (phrasing.PUSHBACK.match(rest) or phrasing.DECISION.match(rest)):
        return True
    if (
        phrasing.BARE_DECISION.match(rest)
        and not phrasing.CARD_WORDS.search(rest)
        and not phrasing.WEB_WORDS.search(rest)
    ):
        return True
    after_plan = bool(reader.directives) and isinstance(reader.directives[-1], PlanReview)
    return after_plan and bool(phrasing.PUSHBACK.match(rest) or phrasing.DECISION.match(rest))


def _continues(previous: Directive, piece: str) -> bool:
    """A piece that carries on the value of the one before ("answer #deploys, the release channel";
    "answer a@b.dev and mention it is the shared inbox")."""
    if isinstance(previous, Answer) and phrasing.SAY.match(piece) and not phrasing.DECLINE.search(piece):
        return True
    if phrasing.VERB_START.match(piece) or phrasing.TONE.match(piece):
        return False
    if isinstance(previous, Answer | Say):
        return True
    return isinstance(previous, Decline) and bool(phrasing.RATIONALE.match(piece))


def _extend(reader: _Reader, previous: Directive, piece: str) -> Directive:
    extra = reader.text(piece)
    said = phrasing.SAY.match(piece)
    if isinstance(previous, Answer) and said is not None:
        extra = reader.text(said.group("text"))
    if isinstance(previous, Answer):
        updated: Directive = previous.model_copy(update={"value": f"{previous.value}, {_tidy_value(extra)}"})
    elif isinstance(previous, Say):
        updated = previous.model_copy(update={"text": f"{previous.text.rstrip('.')}, {extra}."})
    else:
        return previous
    reader.directives[reader.directives.index(previous)] = updated
    return updated


def _classify(reader: _Reader, piece: str, trigger: Trigger) -> Directive | Literal[True] | None:
    """The directive ``piece`` says; True when it only restates one already read; None when none matches."""
    clause = reader.text(piece)
    if phrasing.ONE_AT_A_TIME.search(piece):
        if any(isinstance(d, OneAtATime) for d in reader.directives):
            return True  # a second wording of the same instruction ("waiting for each build")
        return OneAtATime(clause=clause, items=reader.items)
    if phrasing.RUN_WORKFLOW.search(piece):
        return RunWorkflow(clause=clause)
    if trigger.event == "web-access" or phrasing.WEB_DENY.search(piece) or phrasing.WEB_ALLOW.search(piece):
        web = _web_access(piece, trigger, clause)
        if web is not None:
            return web
    if _is_credential(reader, piece, trigger):
        return _credential(reader, piece, trigger, clause)
    if phrasing.HOLD.match(piece) and not phrasing.SAY.match(piece):
        # "keep insisting even if it refuses": the position held, not a decline
        if any(isinstance(d, Hold) for d in reader.directives):
            return True
        return Hold(clause=clause)
    if phrasing.DECLINE.search(piece):
        return _decline(reader, piece, trigger, clause)
    answer = _answer(reader, piece, trigger, clause)
    if answer is not None:
        return answer
    said = phrasing.SAY.match(piece)
    if said is not None and not phrasing.HOLD.match(piece):
        if reader.directives and isinstance(reader.directives[-1], Decline):
            return True  # "do not give the channel; say you'll decide later": how the user declines
        return _say(reader, said.group("text"), clause)
    if phrasing.HOLD.match(piece):
        if any(isinstance(d, Hold) for d in reader.directives):
            return True  # "push once more, then give up": one held position
        return Hold(clause=clause)
    if phrasing.TONE.match(piece):
        if any(isinstance(d, Tone) for d in reader.directives):
            return True  # "polite but firm": one tone of voice
        return Tone(clause=clause)
    if phrasing.AS_USUAL.match(piece):
        return AsUsual(clause=clause)
    return None


def _web_access(piece: str, trigger: Trigger, clause: str) -> WebAccess | None:
    web_trigger = trigger if trigger.event == "web-access" else Trigger(event="web-access")
    if phrasing.WEB_DENY.search(piece) or re.match(r"^(?:deny|block|refuse|reject|decline)\b", piece, re.I):
        return WebAccess(clause=clause, trigger=web_trigger, allow=False)
    if phrasing.WEB_ALLOW.search(piece) or re.match(r"^(?:allow|approve|accept|grant|permit)\b", piece, re.I):
        return WebAccess(clause=clause, trigger=web_trigger, allow=True)
    return None


# --- credentials -----------------------------------------------------------------------------------


def _services(text: str) -> tuple[str, ...]:
    return tuple(sorted({phrasing.SERVICE_TYPES[s.lower()] for s in phrasing.SERVICE.findall(text)}))


def _is_credential(reader: _Reader, piece: str, trigger: Trigger) -> bool:
    if re.search(r"\b(?:credential\w*|connect\w*|unconnected|account|sign[- ]?in|log[- ]?in|oauth)\b", piece, re.I):
        return True
    in_context = trigger.event == "credential-card" or reader.credential_note
    if not in_context:
        return False
    if detail_kind(piece) is not None and not _services(piece) and not phrasing.CRED_PRONOUN.search(piece):
        return False  # "fill in the channel with #ops" on a setup card is an answer, not a credential
    about = _services(piece) or phrasing.CRED_PRONOUN.search(piece) or trigger.event == "credential-card"
    acts = phrasing.CRED_VERB.search(piece) or phrasing.CRED_DEFER.search(piece) or phrasing.CRED_BROKEN.search(piece)
    return bool(about and acts)


def _credential(reader: _Reader, piece: str, trigger: Trigger, clause: str) -> Directive | Literal[True]:
    text = reader.text(piece)
    names = tuple(_unquote(q) for q in _QUOTE.findall(text)) + tuple(
        m.group(1) for m in phrasing.CRED_NAMED.finditer(text)
    )
    services = _services(piece) or _services(" ".join(names))
    previous = next((d for d in reversed(reader.directives) if isinstance(d, Credential)), None)
    if not services:
        services = previous.services if previous is not None and previous.services else trigger.topic
    broken = bool(phrasing.CRED_BROKEN.search(piece))
    defer = bool(phrasing.CRED_DEFER.search(piece))
    # "it should fail the connection test" names no action: "connection" is not "connect".
    acting = re.sub(r"\bconnection tests?\b", " ", piece, flags=re.IGNORECASE)
    engage = bool(phrasing.CRED_VERB.search(acting)) and not defer
    if broken and not engage and not defer and previous is not None and previous.action == "engage":
        # "…, but the credential does not authenticate": a property of the one just engaged.
        updated = previous.model_copy(update={"working": False, "clause": f"{previous.clause}, {clause}"})
        reader.directives[reader.directives.index(previous)] = updated
        return True
    required = trigger.required if trigger.event == "credential-card" else False
    auto = bool(phrasing.CRED_AUTO.search(piece)) and not re.search(r"\bmanual", piece, re.I)
    return Credential(
        clause=clause,
        trigger=Trigger(event="credential-card", topic=services, required=required),
        services=services,
        action="defer" if defer else "engage",
        option="auto" if auto else "manual",
        names=names,
        new=bool(phrasing.CRED_NEW.search(piece)),
        working=not broken,
    )


# --- questions -------------------------------------------------------------------------------------


def _decline(reader: _Reader, piece: str, trigger: Trigger, clause: str) -> Directive | Literal[True]:
    if phrasing.AGAIN.search(piece) or (trigger.event == "question" and phrasing.AGAIN.search(" ".join(trigger.topic))):
        return Hold(clause=clause)  # "decline again if re-asked": every decline is held anyway
    m = phrasing.DECLINE.search(piece)
    assert m is not None
    inner = m.group("kept") or m.group("left") or ""
    about = f"{piece[: m.start()]} {inner} {phrasing.DECLINE_FILLER.sub('', piece[m.end() :].strip())}".strip()
    about = re.sub(r"\b(?:if (?:it |they )?asks?(?:ed)?|when asked|for now|yet|later|either|at all)\b", " ", about)
    words = tuple(w for w in topic_words(reader.text(about)) if w not in ("asked", "asks", "ask", "later"))
    if not words and trigger.event != "question":
        previous = next((d for d in reversed(reader.directives) if isinstance(d, Decline)), None)
        if previous is not None:
            return True  # "…; do not provide one": the decline before it, said again
    topic = tuple(dict.fromkeys((*trigger.topic, *words)))
    detail = detail_kind(reader.text(about)) or trigger.detail
    required = trigger.required if trigger.event == "question" else False
    return Decline(clause=clause, trigger=Trigger(event="question", topic=topic, detail=detail, required=required))


def _answer(reader: _Reader, piece: str, trigger: Trigger, clause: str) -> Answer | None:
    if trigger.event == "question":
        m = phrasing.ANSWER_VERB.match(piece)
        value = m.group("value") if m is not None else None
        if value is None and trigger.detail is not None and stated_values(trigger.detail, reader.text(piece)):
            value = piece
        if value is not None:
            return Answer(clause=clause, trigger=trigger, value=_tidy_value(reader.text(value)))
    for pattern in (phrasing.USE_AS, phrasing.STATEMENT):
        m = pattern.match(piece)
        if m is None:
            continue
        about, value = reader.text(m.group("topic")), _tidy_value(reader.text(m.group("value")))
        kind = detail_kind(about)
        if kind is None or not (stated_values(kind, value) or _QUOTE.search(reader.text(m.group("value")))):
            continue
        required = trigger.required if trigger.event == "question" else False
        question = Trigger(event="question", topic=tuple(topic_words(about)), detail=kind, required=required)
        return Answer(clause=clause, trigger=question, value=value)
    return None


def _say(reader: _Reader, raw: str, clause: str) -> Say:
    raw = phrasing.STOP_SAYING.sub("", raw)
    times = 1
    count = re.search(r"\b(twice|two times|three times|thrice)\b", reader.text(reader.sentence), re.I)
    if count is not None:
        times = phrasing.REPEATS[count.group(1).lower()]
        raw = re.sub(rf"\s*\b{count.group(1)}\b", "", raw, flags=re.I)
    text = reader.text(raw).strip()
    if len(text) >= 2 and text[0] in "\"“‘'" and text[-1] in "\"”’'":
        return Say(clause=clause, text=text[1:-1].strip(), times=times)
    text = _tidy_value(text)
    for pattern, replacement in phrasing.FLIP:
        text = pattern.sub(replacement, text)
    return Say(clause=clause, text=text[:1].upper() + text[1:] + ".", times=times)


# --- plans -----------------------------------------------------------------------------------------


def _plan_words(what: str) -> tuple[str, ...]:
    services = [s.lower() for s in phrasing.SERVICE.findall(what)]
    if services:
        return tuple(dict.fromkeys(services))
    noise = {"post", "posts", "posting", "send", "sends", "step", "steps", "node", "message", "messages", "anymore"}
    return tuple(w for w in topic_words(what) if w not in noise)


def _decide(reader: _Reader, text: str, plan: PlanReview) -> PlanReview | None:
    """Apply an approve/reject sentence ("approve once it no longer posts to Slack") to ``plan``."""
    m = phrasing.DECISION.match(text)
    if m is None:
        return None
    verb, rest = m.group("verb").lower(), m.group("rest")
    then = "reject" if verb in ("reject", "decline", "refuse", "turn down") else "approve"
    condition = phrasing.CONDITION.search(rest)
    if condition is not None and not phrasing.LATER_VERSION.search(rest):
        wanted = _condition(reader, condition.group("cond"))
        if wanted is None:
            return None
        feedback = plan.feedback if plan.feedback is not None else _feedback_for(wanted)
        update = {"then": then, "until_absent": wanted[0], "until_present": wanted[1], "feedback": feedback}
        return plan.model_copy(update=update)
    return plan.model_copy(update={"then": then})


def _feedback_for(wanted: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """What the user says when a condition alone drives the push-back ("approve only once it has no Slack")."""
    absent, present = wanted
    if absent:
        return f"Please take {' and '.join(absent)} out of the plan."
    return f"Please add {' and '.join(present)} to the plan."


def _condition(reader: _Reader, cond: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(absent, present)`` words of a plan condition ("it no longer posts to Slack"); None if unread."""
    text = reader.text(cond).strip().rstrip(".")
    absent = phrasing.ABSENT.match(text) or phrasing.ABSENT_AFTER.match(text)
    if absent is not None and _plan_words(absent.group("what")):
        return _plan_words(absent.group("what")), ()
    present = phrasing.PRESENT.match(text)
    if present is not None and _plan_words(present.group("what")):
        return (), _plan_words(present.group("what"))
    return None


def _read_plan(reader: _Reader, rest: str, trigger: Trigger) -> None:
    plan_trigger = Trigger(event="plan", required=trigger.required if trigger.event == "plan" else False)
    previous = reader.directives[-1] if reader.directives else None
    said = phrasing.PLAN_SAY.match(rest)
    if said is not None:
        # "say it misses error handling and reject it": the words are the push-back.
        verb = said.group("decision").split()[0].lower()
        feedback = _tidy_value(reader.text(said.group("feedback")))
        if verb in ("reject", "decline", "refuse"):
            text = feedback[:1].upper() + feedback[1:]
            reader.directives.append(PlanReview(clause=reader.text(rest), trigger=plan_trigger, feedback=text))
        else:
            reader.directives.append(PlanReview(clause=reader.text(rest), trigger=plan_trigger))
        return
    push = phrasing.PUSHBACK.match(rest)
    if push is None:
        if isinstance(previous, PlanReview) and previous.feedback is not None:
            decided = _decide(reader, rest, previous)
            if decided is None:
                reader.fail(rest, "an approval whose condition the scripted user cannot check")
                return
            reader.directives[-1] = decided.model_copy(update={"clause": f"{previous.clause}. {reader.text(rest)}"})
            return
        decided = _decide(reader, rest, PlanReview(clause=reader.text(rest), trigger=plan_trigger))
        if decided is None:
            reader.fail(rest, "a plan direction the scripted user cannot follow")
            return
        reader.directives.append(decided)
        return
    verb = push.group("verb").lower()
    count = (push.group("count") or "").strip().lower()
    tail = phrasing.ON_THE_PLAN.sub("", push.group("rest"))
    until = phrasing.UNTIL.search(tail)
    wanted = None
    if until is not None:
        wanted = _condition(reader, until.group("cond"))
        if wanted is None:
            reader.fail(until.group("cond"), "a condition on the plan the scripted user cannot check")
            return
        tail = tail[: until.start()]
    feedback_match = phrasing.FEEDBACK.match(tail) if tail.strip() else None
    feedback = feedback_match.group("feedback") if feedback_match is not None else ""
    decision = None
    trailing = phrasing.TRAILING_DECISION.match(feedback) if feedback else None
    if trailing is not None:
        feedback, decision = trailing.group("feedback"), trailing.group("decision")
    feedback_text = _tidy_value(reader.text(feedback)) if feedback else ""
    if not feedback_text and verb.startswith("reject") and not count and wanted is None:
        reader.directives.append(PlanReview(clause=reader.text(rest), trigger=plan_trigger, then="reject"))
        return
    if not feedback_text and wanted is not None:
        feedback_text = _feedback_for(wanted)
    if not feedback_text:
        feedback_text = "I'd like changes to this plan before I approve it."
    plan = PlanReview(
        clause=reader.text(rest),
        trigger=plan_trigger,
        feedback=feedback_text[:1].upper() + feedback_text[1:],
        pushes=phrasing.REPEATS.get(count, 1),
        until_absent=wanted[0] if wanted else (),
        until_present=wanted[1] if wanted else (),
    )
    if decision is not None:
        decided = _decide(reader, decision, plan)
        if decided is None:
            reader.fail(decision, "an approval whose condition the scripted user cannot check")
            return
        plan = decided
    reader.directives.append(plan)
