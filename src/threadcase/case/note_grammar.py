"""The director-note grammar: one note read into typed directives, once, at load.

A note is read in three steps.

1. **Its list** (:mod:`~threadcase.case.note_lists`): numbered or bulleted items, or a prose list
   after "one at a time: …", are taken out first.
2. **Sentences** (``.`` ``;`` ``!`` ``?`` ``…`` or a line break; quoted text is never split). Each
   sentence is brought to the imperative ("the user replies", "you should reply" -> "reply",
   :func:`~threadcase.case.note_text.imperative`) and split into a **moment** and the rest: the moment
   opens the sentence ("when / once / if / should / in case … ," — "should it want the address, …"),
   closes it ("…, if it asks"), or is a sentence of its own ("Asked for the sheet? …"). The moment
   is a question (about the topic its words name, kept as written: :mod:`~threadcase.case.note_topics`),
   the plan (or a condition on it the plan's steps can show), a credential card, a web-access prompt,
   the first build (the turn's own moment) — or something the scripted user cannot see ("if it
   mentions pricing", "if the plan seems secure").
3. **Action clauses**: the rest is split into pieces (commas, "then", "but", "and" before an action
   verb, dashes) and each piece is read by its head: a plan sentence by
   :mod:`~threadcase.case.note_plans`, a credential by :mod:`~threadcase.case.note_credentials`, and
   here a list, a run, web access, a held position (with a count and what is pushed for), a decline,
   an answer (its value without the conversation around it; under a question's moment, what the user
   says is the answer), something to say (as a natural sentence, :mod:`~threadcase.case.note_speech`),
   a tone, or "everything else as usual". A piece that only continues the one before (a count, what a
   push is for, the rest of a value, a reason) extends it.

A reading may drop a manner word, never change the action, the topic, the service or the value the note
gives. A piece no head covers is *not understood*, and so is a reading that would leave words
unaccounted for, a vague value the user would have to make up ("the usual one"), a card or question
named only by a pronoun, and a note whose parts say opposite things about one moment: the scripted
user refuses rather than guesses (a wrong reading is worse than a refusal). Reading is pure and cached
per note text.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Literal

from threadcase.case import note_phrasings as phrasing
from threadcase.case.details import stated_values, topic_words
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
from threadcase.case.note_credentials import credential_note, is_credential, read_credential, services_in
from threadcase.case.note_lists import note_list, split_items, split_prose
from threadcase.case.note_plans import Wanted, is_plan_sentence, plan_moment, read_plan
from threadcase.case.note_speech import pushed_for, spoken
from threadcase.case.note_text import (
    MANNER_LY,
    capitalised,
    count_in,
    imperative,
    protect,
    restore,
    tidy_value,
    value_of,
)
from threadcase.case.note_topics import read_topic

__all__ = ["read_note", "split_items", "split_prose"]

_LEADING = re.compile(
    r"^(?:(?:and|also|but|then|so|finally|afterwards|after that|next|now|first|otherwise)\b[,:]?\s+|"
    r"(?:ok|okay|right|alright)\s*,\s*)+",
    re.IGNORECASE,
)


@dataclass
class _Reader:
    """The state of reading one note: what came before shapes what a sentence means."""

    items: tuple[str, ...]
    quotes: list[str]
    directives: list[Directive] = field(default_factory=list)
    not_understood: list[str] = field(default_factory=list)
    credential_note: bool = False
    """A piece of this note was about credentials: "skip Gmail" in it is a credential deferral."""
    third_person: bool = False
    """The sentence speaks of the user in the third person ("the user says they're done")."""
    pending: Trigger | None = None
    """A moment said in a sentence of its own ("Asked for the sheet?"), for the next sentence."""

    def text(self, piece: str) -> str:
        return restore(piece, self.quotes).strip()

    def fail(self, piece: str, why: str) -> None:
        self.not_understood.append(f"{self.text(piece)!r} ({why})")


@functools.lru_cache(maxsize=4096)
def read_note(note: str) -> NoteReading:
    """Read one note's inner text into directives; the parts no directive covers are listed with why."""
    words, items = note_list(note, phrasing.ONE_AT_A_TIME)
    protected, quotes = protect(words)
    reader = _Reader(items=items, quotes=quotes)
    reader.credential_note = credential_note(protected)
    for sentence in phrasing.SENTENCES.split(protected):
        sentence = sentence.strip().rstrip(".!;…").strip()
        if sentence:
            _read_sentence(reader, sentence)
    if reader.pending is not None:
        reader.fail("", "a moment with nothing to do at it")
    if items and not reader.directives and not reader.not_understood:
        # A list in a note with no other instruction is a list to send, item by item.
        reader.directives.append(OneAtATime(clause=note.strip(), items=items))
    reader.not_understood.extend(_conflicts(reader.directives))
    return NoteReading(note=note, directives=tuple(reader.directives), not_understood=tuple(reader.not_understood))


def _conflicts(directives: list[Directive]) -> list[str]:
    """Parts of one note that say opposite things about the same moment ("leave Slack for later … connect
    Slack"): the scripted user cannot follow both, and does not pick one."""
    found = []
    for a, b in itertools.combinations(directives, 2):
        if isinstance(a, Credential) and isinstance(b, Credential):
            same = set(a.services) & set(b.services) or not (a.services or b.services)
            opposite = same and a.action != b.action
        elif isinstance(a, WebAccess) and isinstance(b, WebAccess):
            opposite = a.allow != b.allow
        elif isinstance(a, PlanReview) and isinstance(b, PlanReview):
            opposite = (a.then, a.feedback) != (b.then, b.feedback)
        elif isinstance(a, Answer | Decline) and isinstance(b, Answer | Decline):
            same_question = (a.trigger.topic, a.trigger.detail) == (b.trigger.topic, b.trigger.detail)
            opposite = same_question and (a.kind != b.kind or getattr(a, "value", None) != getattr(b, "value", None))
        else:
            continue
        if opposite:
            found.append(f"{a.clause!r} and {b.clause!r} (they say opposite things about the same moment)")
    return found


def _verbs(text: str) -> re.Match[str] | None:
    return phrasing.VERB_START.match(text) or phrasing.HOLD.match(text) or phrasing.TONE.match(text)


_VERBS = re.compile(rf"^(?:{phrasing.ACTION_VERBS}|insist|persist|stand|keep|press|nudge)\b", re.IGNORECASE)


def _read_sentence(reader: _Reader, sentence: str) -> None:
    sentence = _LEADING.sub("", sentence).strip()
    sentence = re.sub(r"^asked\b", "if asked", sentence, flags=re.IGNORECASE)
    # "Channel, if asked: #ops" / "tz if asked: Asia/Tokyo" / "region q -> us-east-1" name what is asked
    # before the moment.
    sentence = re.sub(
        r"^(?P<topic>[\w #/-]{2,30}?),?\s+(?P<word>if|when|in case) (?:asked|it asks)\s*(?::|->|→|=)\s*",
        lambda m: f"{m.group('word')} asked for the {m.group('topic')}, ",
        sentence,
        flags=re.IGNORECASE,
    )
    sentence = re.sub(
        r"^(?!(?:any|every|all|other|each|the other)\b)(?P<topic>[\w #/-]{2,30}?)\s+(?:q|question)\s*(?::|->|→|=)\s*",
        lambda m: f"if asked for the {m.group('topic')}, ",
        sentence,
        flags=re.IGNORECASE,
    )
    # "plan: reject", "web: deny": a moment named tersely, before a colon or an arrow.
    sentence = re.sub(
        r"^(?:the\s+)?(?:plan|proposal)\s*(?::|->|→|=)\s*", "if a plan is shown, ", sentence, flags=re.IGNORECASE
    )
    sentence = re.sub(
        r"^(?:web(?: access| search)?|internet(?: access)?|browsing)\s*(?::|->|→|=)\s*",
        "if web access is asked for, ",
        sentence,
        flags=re.IGNORECASE,
    )
    # "Any question about the repo: …" / "For questions on the channel, …" name a question's moment.
    sentence = re.sub(
        r"^(?:for\s+)?(?:any|every|each|all)?\s*questions?\s+(?=(?:about|on|regarding|concerning)\b)",
        "whenever asked ",
        sentence,
        flags=re.IGNORECASE,
    )
    said_before = reader.directives[-1] if reader.directives else None
    if isinstance(said_before, Decline) and (_INTENSIFIER.match(sentence) or _OWN_LATER.match(sentence)):
        return  # "Don't give the key. Ever." / "…; you will fill it in yourself": the decline, and why
    # "Ask it, politely, whether …": a manner set off by commas is how, not what (and not a piece).
    sentence = re.sub(rf"\s*,\s*(?:(?:very|quite|really|rather)\s+)?{MANNER_LY}\s*,\s*", " ", sentence)
    if (
        isinstance(said_before, Decline)
        and phrasing.RATIONALE.match(sentence)
        and phrasing.NOT_AVAILABLE.match(sentence)
    ):
        return  # "Withhold the recipient. You will add it yourself later.": why, not what
    sentence, third = imperative(sentence, _VERBS)
    reader.third_person = third
    if phrasing.AS_USUAL_REST.search(sentence) and phrasing.AS_USUAL_HOW.search(sentence):
        reader.directives.append(AsUsual(clause=reader.text(sentence)))
        return
    trailing = phrasing.TRAILING_MOMENT.match(sentence)
    if trailing is not None and not phrasing.TRIGGER.match(sentence):
        # "Answer #deploys if asked for the channel" reads as "If asked for the channel, answer #deploys".
        sentence = f"{trailing.group('moment')}, {trailing.group('rest')}"
    trigger, rest, unknown, moment = _trigger(sentence)
    wanted: Wanted | None = None
    if trigger.event == "plan":
        checked = plan_moment(moment)
        if checked == "unknown":
            reader.fail(sentence, f"the scripted user cannot check the plan against {moment.strip()!r}")
            return
        wanted = checked
    if reader.pending is not None and trigger.event == "turn" and unknown is None:
        trigger, reader.pending = reader.pending, None
    if not rest.strip():
        if trigger.event != "turn" and reader.pending is None:
            reader.pending = trigger
            return
        reader.fail(sentence, "a moment with nothing to do at it")
        return
    rest, more_third = imperative(rest, _VERBS)
    reader.third_person = reader.third_person or more_third
    after_plan = bool(reader.directives) and isinstance(reader.directives[-1], PlanReview)
    if after_plan and trigger.event == "turn" and unknown is None and _reason_for_rejection(reader, rest):
        return
    other_moment = trigger.event in ("web-access", "credential-card", "question")
    if unknown is None and (trigger.event == "plan" or (not other_moment and is_plan_sentence(rest, after_plan))):
        previous = reader.directives[-1] if after_plan else None
        assert previous is None or isinstance(previous, PlanReview)
        read, rest = read_plan(rest, trigger, reader.text(rest), reader.text, previous, wanted)
        if isinstance(read, str):
            reader.fail(rest, read)
            return
        if previous is not None and read.clause.startswith(previous.clause + ". "):
            reader.directives[-1] = read
        else:
            reader.directives.append(read)
        if not rest:
            return
        trigger = Trigger()
    _read_pieces(reader, rest, trigger, sentence, unknown)


def _reason_for_rejection(reader: _Reader, rest: str) -> bool:
    """ "Reject the plan; we wanted Airtable, not Google Sheets.": a sentence that only says why a plan is
    rejected outright is the rejection's reason, sent with it (the plan stays rejected)."""
    rejected = reader.directives[-1]
    assert isinstance(rejected, PlanReview)
    if rejected.feedback is not None or rejected.then != "reject" or _verbs(rest) or is_plan_sentence(rest, True):
        return False
    if not re.match(r"^(?:we|they|the (?:client|customer|team|user)s?|our|their|legal|it|this|that)\b", rest, re.I):
        return False
    words = reader.text(rest)
    reader.directives[-1] = rejected.model_copy(
        update={"feedback": capitalised(tidy_value(words)), "clause": f"{rejected.clause}. {words}"}
    )
    return True


def _read_pieces(reader: _Reader, rest: str, trigger: Trigger, sentence: str, unknown: str | None) -> None:
    """The action clauses of a sentence, piece by piece."""
    before = len(reader.directives)
    last: Directive | None = None
    for piece in (p for p in phrasing.PIECES.split(rest) if p and p.strip()):
        piece, more_third = imperative(_LEADING.sub("", piece.strip()), _VERBS)
        reader.third_person = reader.third_person or more_third
        if not piece:
            continue
        if last is not None:
            extended = _extend(reader, last, piece)
            if extended is not None:
                last = extended
                continue
        found = _classify(reader, piece, trigger)
        if found is True:
            continue  # understood, and said already: nothing new to do
        if found is None:
            if reader.directives and phrasing.RATIONALE.match(piece):
                continue  # an explanation of the instruction before it ("you will add it later")
            reader.fail(piece, "no directive matches these words")
            last = None
            continue
        if isinstance(found, Say) and isinstance(last, Say):
            # "say the report looks great and thank it": one message, as a user writes it.
            last = _replace(
                reader, last, {"text": f"{last.text} {found.text}", "clause": f"{last.clause}, {found.clause}"}
            )
            continue
        reader.directives.append(found)
        last = found
    refusal = bool(unknown) and bool(phrasing.REFUSAL_MOMENT.search(unknown or ""))
    if unknown and any(
        not (isinstance(d, Tone) or (isinstance(d, Hold) and refusal)) for d in reader.directives[before:]
    ):
        # The scripted user cannot tell when "if it mentions pricing" happens: only a tone (which changes
        # nothing it sends) may wait on such a moment, and a held position on a refusal ("if it says no,
        # insist"), which is the moment the turn stands in.
        del reader.directives[before:]
        reader.fail(sentence, f"the scripted user cannot tell when {unknown!r} happens")


def _trigger(sentence: str) -> tuple[Trigger, str, str | None, str]:
    """(trigger, the rest of the sentence, the words of a moment the scripted user cannot recognise, the
    moment's words)."""
    m = phrasing.TRIGGER.match(sentence)
    if m is None:
        return Trigger(), sentence, None, ""
    word, body = m.group("word").lower(), m.group("body")
    split = phrasing.TRIGGER_END.search(body)
    if split is not None:
        moment, rest = body[: split.start()], body[split.end() :]
    else:
        verb = re.search(rf"\s(?=(?:then\s+)?(?:{phrasing.ACTION_VERBS})\b)", body, re.IGNORECASE)
        if verb is None:
            alone = _moment(word, body) if word not in ("on", "at", "before") else None
            if alone is not None and alone.event != "turn":
                return alone, "", None, body  # "Asked for the sheet?": a moment for the next sentence
            return Trigger(), sentence, None, ""
        moment, rest = body[: verb.start()], body[verb.end() :]
    found = _moment(word, moment)
    if found is None:
        if word in ("on", "at", "before") and not phrasing.ASK_WORDS.search(moment):
            return Trigger(), sentence, None, ""  # "on Mondays, …" / "at 9am …" / "before that …": no moment
        return Trigger(), rest, f"{m.group('word')} {moment.strip()}", moment
    return found, rest, None, moment


def _moment(word: str, moment: str) -> Trigger | None:
    required = word in phrasing.REQUIRED
    if phrasing.PLAN_WORDS.search(moment) and not phrasing.OTHER_PLAN.search(moment):
        return Trigger(event="plan", required=required)
    if re.search(r"\b(?:card|credentials?|connect\w*|accounts?|sign[- ]?in|log[- ]?in|oauth)\b", moment, re.I):
        services = services_in(moment)
        return Trigger(event="credential-card", topic=services, required=required)
    if phrasing.WEB_WORDS.search(moment) and re.search(
        r"\b(?:access|permission|allow|search|browse|online|look|web)\b", moment, re.I
    ):
        return Trigger(event="web-access", required=required)
    if re.search(r"\b(?:visit|open|fetch|browse|access|read|load)\b.*\b[\w-]+\.[a-z]{2,}\b", moment, re.I):
        return Trigger(event="web-access", required=required)  # "if it wants to visit example.com"
    if phrasing.ASK_WORDS.search(moment) or re.match(r"^(?:asked|prompted|queried|needed|necessary)\b", moment, re.I):
        about = phrasing.ASKER.sub("", moment.strip())
        about = phrasing.ASK_WORDS.sub(" ", about)
        about = re.sub(r"\b(?:again|ever|the question|a question)\b", " ", about, flags=re.IGNORECASE)
        asked = _question(about, required)
        vague = re.search(r"\b(?:which|what|whose)\s+(?:one|ones|of them|of those|of these|thing)\b", about, re.I)
        if not (asked.topic or asked.detail) and vague:
            return None  # "if it asks which one": it names a question, but none the scripted user can tell
        return asked
    if phrasing.BUILT_WORDS.search(moment) or (word == "before" and phrasing.BEFORE_SENDING.search(moment)):
        return Trigger()  # the turn's own moment: a follow-up is sent after a run anyway
    return None


def _question(about: str, required: bool, also: tuple[str, ...] = ()) -> Trigger:
    """A question trigger about what the note's words name (kept as written; see ``note_topics``)."""
    topic = read_topic(about)
    words = tuple(w for w in dict.fromkeys((*topic.words, *also)) if not phrasing.AGAIN.fullmatch(w))
    return Trigger(event="question", topic=words, head=topic.head, detail=topic.detail, required=required)


_YES_NO = re.compile(
    r"^(?:(?:say|answer|reply)\s+)?(?:(?P<no>no|deny it|refuse|decline|block it|refuse it|decline it)|yes|allow it|"
    r"approve it|permit it|let it)(?: to it| to that)?$",
    re.IGNORECASE,
)
_OWN_LATER = re.compile(
    r"^(?:you|i|we|they|the user)(?:'ll| will| are going to)\b.*\b(?:yourself|myself|ourselves|themselves|later|"
    r"afterwards|manually|by hand|on (?:your|my|our|their) own)\b",
    re.IGNORECASE,
)
_INTENSIFIER = re.compile(
    r"^(?:never|ever|not ever|at all|no matter what|under no circumstances|not even once|whatever happens)$", re.I
)
_LATER = re.compile(r"^(?:later|for later|not now|for now|another time|until later|maybe later)$", re.IGNORECASE)

# --- continuing the piece before ------------------------------------------------------------------


def _replace(reader: _Reader, previous: Directive, update: dict[str, object]) -> Directive:
    updated = previous.model_copy(update=update)
    reader.directives[reader.directives.index(previous)] = updated
    return updated


def _extend(reader: _Reader, previous: Directive, piece: str) -> Directive | None:
    """The directive before, extended by a piece that only continues it; None when the piece is new."""
    count, without = count_in(piece)
    if count is not None and not without.strip(" ,.") and isinstance(previous, Hold | Say):
        return _replace(reader, previous, {"times": count})
    if isinstance(previous, Hold) and phrasing.HOLD_REST_OK.match(piece) and piece.strip():
        return previous  # "insist, three times, on putting the secret in the node": what it is about
    if isinstance(previous, Hold) and previous.text is None:
        said = phrasing.SAY.match(piece)
        pushed = pushed_for(reader.text(piece), third_person=reader.third_person)
        if pushed is None and said is not None:
            pushed = spoken(
                said.group("verb").split()[0], reader.text(said.group("text")), third_person=reader.third_person
            )
        if pushed is not None:
            return _replace(reader, previous, {"text": pushed})
    if isinstance(previous, Answer):
        said = phrasing.SAY.match(piece)
        if said is not None and not phrasing.DECLINE.match(piece) and not phrasing.NOT_AVAILABLE.match(piece):
            return _replace(
                reader, previous, {"value": f"{previous.value}, {tidy_value(reader.text(said.group('text')))}"}
            )
        if not _verbs(piece) and not phrasing.STOP.match(piece):
            return _replace(reader, previous, {"value": f"{previous.value}, {tidy_value(reader.text(piece))}"})
    if isinstance(previous, Say) and (
        phrasing.CLOSING.fullmatch(piece.strip())
        or not (_verbs(piece) or phrasing.STOP.match(piece) or phrasing.RATIONALE.match(piece))
    ):
        return _replace(reader, previous, {"text": f"{previous.text.rstrip('.')}, {reader.text(piece)}."})
    if isinstance(previous, Decline) and (
        phrasing.RATIONALE.match(piece) or phrasing.NOT_AVAILABLE.match(piece) or _INTENSIFIER.match(piece)
    ):
        return previous
    if isinstance(previous, Credential) and previous.action == "defer" and _LATER.match(piece):
        return previous  # "the Gmail no, later": when, said again
    if isinstance(previous, Decline | Hold) and phrasing.EVEN_IF.match(piece):
        return previous
    return None


# --- one piece ------------------------------------------------------------------------------------


def _classify(reader: _Reader, piece: str, trigger: Trigger) -> Directive | Literal[True] | None:
    """The directive ``piece`` says; True when it only restates one already read; None when none matches."""
    clause = reader.text(piece)
    if phrasing.STOP.match(piece):
        return True
    listing = any(isinstance(d, OneAtATime) for d in reader.directives)
    if phrasing.ONE_AT_A_TIME.search(piece) or (listing and phrasing.WAIT_EACH.match(piece)):
        if listing:
            return True  # a second wording of the same instruction ("waiting for each build")
        return OneAtATime(clause=clause, items=reader.items)
    run = _run(piece)
    if run:
        return RunWorkflow(clause=clause)
    web = _web_access(piece, trigger, clause)
    if web is not None:
        if any(isinstance(d, WebAccess) and d.allow == web.allow for d in reader.directives):
            return True  # "don't let it browse; say no to web access": one decision, said twice
        return web
    said_web = next((d for d in reader.directives if isinstance(d, WebAccess)), None)
    yes_no = _YES_NO.match(piece)
    if said_web is not None and yes_no is not None:
        # "It shouldn't browse the web — say no if it asks": the same decision, said again.
        return True if (yes_no.group("no") is None) == said_web.allow else None
    hold = _hold(reader, piece, clause)
    if hold is not None:
        return hold  # "keep insisting that it skip the credential": the push, whatever it is about
    if is_credential(piece, trigger, reader.credential_note):
        read = read_credential(piece, trigger, clause, reader.text, reader.directives)
        reader.credential_note = True  # "…, it must fail the test" goes on about the credential
        if isinstance(read, Credential) and any(_same_credential(read, d) for d in reader.directives):
            return True  # "not ready to connect Stripe yet, so leave that card for later": one deferral
        return read
    if phrasing.DECLINE.match(piece) or phrasing.NOT_AVAILABLE.match(piece):
        return _decline(reader, piece, trigger, clause)
    answer = _answer(reader, piece, trigger, clause)
    if answer is not None:
        return answer
    if phrasing.TONE.match(piece):
        if any(isinstance(d, Tone) for d in reader.directives):
            return True  # "polite but firm": one tone of voice
        return Tone(clause=clause)
    if phrasing.THANK.match(piece):
        return Say(clause=clause, text="Thanks!")
    said = phrasing.SAY.match(piece)
    if said is not None:
        verb = said.group("verb").split()[0].lower()
        if verb == "let":
            verb = "tell"
        text = spoken(
            verb, reader.text(said.group("text")), third_person=reader.third_person, literal=bool(said.group("colon"))
        )
        if text is None:
            return None
        times = None
        quoted = re.fullmatch(r"(?P<quote>\x00\d+\x00)\s*(?P<count>.*)", said.group("text").strip())
        if quoted is not None and quoted.group("count"):
            # 'Say "please just do it" twice': the count stands outside the user's words.
            times, left = count_in(quoted.group("count"))
            if times is None or left.strip(" ."):
                return None
            text = spoken(verb, reader.text(quoted.group("quote"))) or text
        if trigger.event == "question":
            if times is not None or verb in ("ask", "enquire", "inquire"):
                return None  # "if it asks about X, ask …": a question back, which no directive says
            if re.fullmatch(r"(?:it|that|this|them|so)\.?", text, re.IGNORECASE):
                return None  # "confirm it": no words to answer with
            # "If it questions the deadline, explain it's fixed": what it says is the question's answer.
            return Answer(clause=clause, trigger=trigger, value=text)
        return Say(clause=clause, text=text, times=times or 1)
    if phrasing.AGAIN.search(piece) and re.match(r"^(?:decline|refuse)", piece, re.I):
        return Hold(clause=clause)
    return None


def _same_credential(read: Credential, other: Directive) -> bool:
    keys = ("services", "action", "option", "names", "new", "working")
    return isinstance(other, Credential) and all(getattr(read, k) == getattr(other, k) for k in keys)


def _run(piece: str) -> bool:
    m = phrasing.RUN_WORKFLOW.match(piece)
    if m is None:
        return False
    what = phrasing.RUN_OBJECT.match(m.group("what").strip())
    if what is None:
        # "click execute before replying": the button names the run
        return bool(re.match(r"^(?:click|hit|press)\s", piece, re.I)) and bool(phrasing.RUN_REST.match(m.group("what")))
    if re.search(r"\b(?:every|hourly|daily|weekly|at \d|schedule)\b", piece, re.I):
        return False  # "run it every hour" is a change to ask for, not a run
    return bool(phrasing.RUN_REST.match(what.group("rest")))


def _web_access(piece: str, trigger: Trigger, clause: str) -> WebAccess | None:
    web_trigger = trigger if trigger.event == "web-access" else Trigger(event="web-access")
    if phrasing.WEB_DENY.search(piece):
        return WebAccess(clause=clause, trigger=web_trigger, allow=False)
    if phrasing.WEB_ALLOW.search(piece) and (
        trigger.event == "web-access" or phrasing.WEB_WORDS.search(piece) or re.search(r"\b[\w-]+\.[a-z]{2,}\b", piece)
    ):
        return WebAccess(clause=clause, trigger=web_trigger, allow=True)
    if trigger.event == "web-access":
        if re.match(r"^(?:deny|block|refuse|reject|decline|say no|don't allow|do not allow|no)\b", piece, re.I):
            return WebAccess(clause=clause, trigger=web_trigger, allow=False)
        if re.match(r"^(?:allow|approve|accept|grant|permit|let it|say yes|okay|ok|yes)\b", piece, re.I):
            return WebAccess(clause=clause, trigger=web_trigger, allow=True)
    return None


def _hold(reader: _Reader, piece: str, clause: str) -> Directive | Literal[True] | None:
    again = re.match(
        r"^(?:insist|(?:ask|request|say it|repeat)(?: for)?(?: it| that| the same(?: thing)?| the request)?)\s+"
        r"(?P<rest>(?:again|once more|one more time|twice|thrice|\w+ (?:more )?times)\b.*)$",
        piece,
        re.I,
    )
    m = phrasing.HOLD.match(piece)
    if again is None and (m is None or (phrasing.SAY.match(piece) and not re.match(r"^insist", piece, re.I))):
        return None
    count, rest = count_in((again or m).group("rest"))  # type: ignore[union-attr]
    text = None
    if rest.strip() and not phrasing.HOLD_REST_OK.match(rest):
        text = pushed_for(reader.text(rest), third_person=reader.third_person)
        if text is None:
            return None  # "insist, and invent a new requirement": words a held position does not cover
    held = next((d for d in reader.directives if isinstance(d, Hold)), None)
    if held is not None:
        if count is not None and held.times is None:
            _replace(reader, held, {"times": count})
        return True  # "push once more, then give up": one held position
    return Hold(clause=clause, times=count, text=text)


def _decline(reader: _Reader, piece: str, trigger: Trigger, clause: str) -> Directive | Literal[True] | None:
    if phrasing.AGAIN.search(piece) or (trigger.event == "question" and phrasing.AGAIN.search(" ".join(trigger.topic))):
        return Hold(clause=clause)  # "decline again if re-asked": every decline is held anyway
    m = phrasing.DECLINE.match(piece)
    if m is not None:
        inner = m.group("kept") or m.group("left") or ""
        about = f"{inner} {piece[m.end() :]}"
    else:
        unavailable = phrasing.NOT_AVAILABLE.match(piece)
        assert unavailable is not None
        about = piece[unavailable.end() :]
    about = re.split(r"\s*(?::|—|–|\s-\s)\s*|\s+(?:because|since|as)\s+", about, maxsplit=1)[0]  # why, not what
    about = phrasing.DECLINE_FILLER.sub(" ", about)
    about = re.sub(r"\b(?:it|them|that|this|to yourself|yet)\b", " ", about)
    about = re.sub(r"\b(?:asked|asks|ask|later)\b", " ", reader.text(about), flags=re.IGNORECASE)
    words = tuple(topic_words(about))
    asked = trigger.event == "question"
    if not words and (not asked or not (trigger.topic or trigger.detail)):
        previous = next((d for d in reversed(reader.directives) if isinstance(d, Decline)), None)
        if previous is not None:
            return True  # "…; do not provide one": the decline before it, said again
    required = trigger.required if asked else False
    if not words:
        if not asked and not _EVERY_QUESTION.search(piece):
            return None  # "skip it for now": what "it" is, the note does not say
        return Decline(clause=clause, trigger=trigger if asked else Trigger(event="question", required=required))
    # What the decline names decides; the moment's words only rank ("if asked, don't give the key").
    declined = _question(about, required, also=trigger.topic if asked else ())
    if declined.detail is None and asked and trigger.detail is not None and not declined.head:
        declined = declined.model_copy(update={"detail": trigger.detail})
    return Decline(clause=clause, trigger=declined)


_EVERY_QUESTION = re.compile(
    r"\b(?:any|every|all|each)\b.*\b(?:questions?|details?|info|information|answers?)\b|\beverything\b|\banything\b",
    re.IGNORECASE,
)
_POINTS_BACK = re.compile(
    r"^(?:tell|give|say|reply|answer|use|send|offer)(?: it| them| that| this| so)*(?: (?:that|this) one)?$", re.I
)


def _answer(reader: _Reader, piece: str, trigger: Trigger, clause: str) -> Answer | Literal[True] | None:
    if _POINTS_BACK.match(piece.strip()):
        # "The channel is #deploy-log; tell it if it asks": the value just given, said again.
        return True if any(isinstance(d, Answer) for d in reader.directives) else None
    if trigger.event == "question":
        stated = _statement(reader, piece, trigger, clause)
        if stated is not None:
            return stated
        m = phrasing.ANSWER_VERB.match(piece)
        raw = m.group("value") if m is not None else None
        if raw is None and _bare_value(piece, trigger):
            raw = piece  # "If it asks which channel, #fin-close." / "…, our fiscal year starts in April."
        if raw is not None:
            found = _statement(reader, raw, trigger)
            if found is not None:
                return found
            value = value_of(trigger.detail, reader.text(raw))
            if not value:
                return None
            if (
                trigger.detail is not None
                and m is None
                and value == reader.text(raw).rstrip(".")
                and not _plain_value(value)
            ):
                return None  # no verb and no value of the detail's shape: not an answer
            # The topic stays the one the note names: the value's shape never replaces it.
            return Answer(clause=clause, trigger=trigger, value=value)
    return _statement(reader, piece, trigger, clause)


_VAGUE = re.compile(
    r"^(?:whatever|anything|something|any(?:one| one| of them)?|the usual|the same|up to (?:it|you|them)|"
    r"its call|your call|no preference|(?:it )?(?:doesn't|does not) matter|as it (?:likes|wants|sees fit)|"
    r"let (?:it|them) (?:decide|choose|pick)|you decide)\b",
    re.IGNORECASE,
)
_VALUE_WRAPPER = re.compile(r"^(?:it'?s|it is|that'?s|that is|this is|is)\b", re.IGNORECASE)


def _bare_value(piece: str, trigger: Trigger) -> bool:
    """A piece after a question's moment that is only the answer (no action verb, no reason): "If it asks
    which channel, #fin-close", "if asked why: budget cuts"."""
    text = piece.strip()
    if re.fullmatch(r"\x00\d+\x00", text):
        return True
    if not (trigger.topic or trigger.detail):
        return False  # "if it asks, it shouldn't browse the web": a question about nothing named takes a verb
    if _verbs(text) or phrasing.STOP.match(text) or phrasing.TONE.match(text):
        return False
    if re.search(r"\bnot\b|n't\b|\bnever\b|\b(?:should|must|rather|prefer|need to|has to|have to)\b", text, re.I):
        return False  # an instruction or a reason, not a value
    if _VAGUE.match(text):
        return False  # "the usual one", "something short": a value the scripted user would have to make up
    if re.match(r"^[a-z][\w'-]*\s+(?:it|them|him|her|me|us|the (?:agent|assistant|bot|builder|ai))\b", text):
        return False  # "reassure it", "help them out": an instruction in a verb no directive knows
    return not phrasing.RATIONALE.match(text) or bool(_VALUE_WRAPPER.match(text))


def _plain_value(value: str) -> bool:
    return len(value.split()) <= 6


def _statement(reader: _Reader, piece: str, trigger: Trigger, clause: str | None = None) -> Answer | None:
    """ "The channel is #deploys", "recipient: a@b.dev", "use #ops for the channel", "#ops is the channel"."""
    for pattern in (phrasing.ANSWER_ABOUT, phrasing.USE_AS, phrasing.STATEMENT, phrasing.REVERSED_STATEMENT):
        m = pattern.match(piece)
        if m is None:
            continue
        groups = m.groupdict()
        about = reader.text(groups.get("topic") or groups.get("topic2") or "")
        named = read_topic(about)
        kind = named.detail
        asked = trigger.event == "question"
        overlaps = not trigger.topic or bool(set(named.words) & set(trigger.topic))
        if kind is None and not (asked and named.head and _plain_value(about) and overlaps):
            # "The workflow is urgent" names no question: only after a question's moment ("if asked about
            # the timezone, the timezone is Europe/Lisbon") is a statement about another topic an answer.
            continue
        value = value_of(kind, reader.text(m.group("value")))
        shaped = value != reader.text(m.group("value")).rstrip(".") or bool(re.search(r"\x00", m.group("value")))
        if kind is None:
            if not _plain_value(value):
                continue
        elif not (
            stated_values(kind, value) or shaped or (kind in ("spreadsheet", "table", "name") and _plain_value(value))
        ):
            continue
        required = trigger.required if asked else False
        question = _question(about, required, also=trigger.topic)
        if question.detail is None and not question.head:
            continue
        return Answer(clause=clause or reader.text(piece), trigger=question, value=value)
    return None
