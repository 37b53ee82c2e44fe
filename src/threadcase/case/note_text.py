"""Words of a director note before the grammar reads them: quotes kept whole, the register evened out,
counts and values taken out.

Authors write notes in many registers — "reply with X", "you reply with X", "the user replies with
X", "you should just reply with X", "please reply with X", "have the user reply with X" — that mean
the same instruction. :func:`imperative` brings a clause to the bare imperative the phrasings are
written for, and says whether it was about the user in the third person (so "they" in what the user
says is "I"). It only rewrites the clause's *head*: values and what the user says stay as written.
"""

from __future__ import annotations

import re

from threadcase.case.details import DetailKind, stated_values

__all__ = [
    "MANNER_LY",
    "QUOTE",
    "capitalised",
    "count_in",
    "imperative",
    "protect",
    "restore",
    "tidy_value",
    "unquote",
    "unwrap",
    "value_of",
    "verb_base",
]

# --- quotes ----------------------------------------------------------------------------------------

QUOTE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|‘[^’\n]*’|(?<![\w])'[^'\n]+'(?![\w])")
_SLOT = re.compile(r"\x00(\d+)\x00")
_APOSTROPHE = re.compile(r"(?<=\w)[’‘](?=\w)")


def protect(text: str) -> tuple[str, list[str]]:
    """``text`` with each quoted span replaced by a slot (never split, never rewritten), and the spans."""
    text = _APOSTROPHE.sub("'", text)
    quotes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    return QUOTE.sub(keep, text), quotes


def restore(text: str, quotes: list[str]) -> str:
    return _SLOT.sub(lambda m: quotes[int(m.group(1))], text)


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"“‘'" and text[-1] in "\"”’'":
        return text[1:-1].strip()
    return text


def tidy_value(text: str) -> str:
    text = re.sub(r"\s*(?:…|\.\.\.)\s*$", "", text.strip())
    text = text.rstrip(".,;:!").strip()
    return unquote(text)


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- the register: "the user replies" / "you should reply" / "please reply" -> "reply" ----------------

_IRREGULAR = {"says": "say", "does": "do", "goes": "go", "has": "have", "is": "be", "okays": "okay", "oks": "ok"}
_SUBJECT = re.compile(
    r"^(?:(?:and|then|so|also|but)\s+)?(?P<who>the user|the customer|the client|the requester|the human|you|they|"
    r"he|she|i|we)(?:\s+|(?='d\b))",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"^(?:should|must|will|'ll|shall|can|may|might|could|would|need to|needs to|have to|has to|is to|are to|"
    r"is going to|are going to|want to|wants to|ought to|get to)\s+",
    re.IGNORECASE,
)
MANNER_LY = (
    r"(?!(?:only|early|likely|really|probably|usually|actually|possibly|definitely|certainly|surely|apply|reply|"
    r"supply|family|daily|weekly|monthly|hourly|yearly|nightly|quarterly|fly|july|italy|rely|ally)\b)[a-z]+ly"
)
"""A manner adverb ("politely", "firmly"): how, never what — and never "only", "daily" or "reply"."""
_POLITE = re.compile(
    r"^(?:please|pls|kindly|just|simply|then|also|so|go ahead and|make sure (?:to|you)|be sure to|remember to|"
    r"don't forget to|feel free to|have the user|get the user to|let the user|now|here|at this point|"
    r"at that point|afterwards|after that|finally|next|i'd like you to|i would like you to|i want you to|"
    rf"i need you to|we need you to|we'd like you to|{MANNER_LY}(?=\s+(?:ask|tell|say|reply|answer|respond|explain|"
    r"mention|insist|decline|refuse|reject|push|approve|let)\b))\b[,:]?\s*",
    re.IGNORECASE,
)


def verb_base(word: str) -> str:
    """The base form of a verb in the third person ("replies" -> "reply", "pushes" -> "push")."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered.endswith("ies") and len(lowered) > 4:
        return word[:-3] + "y"
    if re.search(r"(?:sh|ch|x|ss|zz|o)es$", lowered):
        return word[:-2]
    if lowered.endswith("s") and not lowered.endswith("ss") and len(lowered) > 2:
        return word[:-1]
    return word


def imperative(clause: str, verbs: re.Pattern[str]) -> tuple[str, bool]:
    """``(clause as a bare imperative, about the user in the third person)``.

    A subject ("the user", "you", "they") and a modal ("should", "will", "needs to") are taken off the
    head, and a third-person verb is put in its base form, only when what follows is one of ``verbs``
    (the grammar's action verbs): "you're in a rush" and "they are happy" are left alone.
    """
    text = clause.strip()
    third = False
    for _ in range(4):
        before = text
        text = _POLITE.sub("", text).strip()
        subject = _SUBJECT.match(text)
        if subject is not None:
            rest = _MODAL.sub("", text[subject.end() :]).strip()
            rest = re.sub(r"^(?:just|simply|then|also|always|politely|firmly)\s+", "", rest, flags=re.IGNORECASE)
            head, _, tail = rest.partition(" ")
            based = verb_base(head) if subject.group("who").lower() not in ("you", "i", "we") else head
            candidate = f"{based} {tail}".strip()
            if head.lower() in ("doesn't", "does") and subject.group("who").lower() not in ("you", "i", "we"):
                candidate = re.sub(r"^(?:doesn't|does not)\b", "don't", f"{head} {tail}", flags=re.IGNORECASE)
            negated = re.match(r"^(?:don't|do not|never|won't|will not|not|'d rather|would rather)\b", candidate)
            if head and (verbs.match(candidate) or negated):
                third = third or subject.group("who").lower() not in ("you", "i", "we")
                text = candidate
        if text == before:
            break
    if third:
        # "the user connects Slack by hand and skips GitHub": every verb of the user's is the base form.
        def base(m: re.Match[str]) -> str:
            verb = verb_base(m.group(2))
            return f"{m.group(1)} {verb}" if verbs.match(verb) else m.group(0)

        text = re.sub(r"(\b(?:and|then|but)|,)\s+([a-z]+s)\b", base, text)
        text = re.sub(r"\b(?:doesn't|does not)\b", "don't", text)
    return text, third


# --- counts: "twice", "two more times", "three times in total" --------------------------------------

_NUMBERS = {
    "one": 1,
    "a": 1,
    "two": 2,
    "a couple of": 2,
    "a couple": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "1": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
}
_COUNT = re.compile(
    r"\b(?:(?P<single>once|twice|thrice)|(?P<n>one|two|three|four|five|a couple of|a couple|[1-5])\s+(?:more\s+)?"
    r"(?:times?|rounds?|pushes|attempts|tries|messages)|(?P<one>one more time|one last time|a last time|"
    r"a final time|one final time|another time)|x(?P<x>[1-5])|(?P<xn>[1-5])x)"
    r"(?:\s+(?:more|in total|in all|altogether|over|again))?\b",
    re.IGNORECASE,
)
_SINGLE = {"once": 1, "twice": 2, "thrice": 3}


def count_in(text: str) -> tuple[int | None, str]:
    """``(the count the text says, the text without it)``: "push twice more" -> (2, "push")."""
    m = _COUNT.search(text)
    if m is None:
        return None, text
    if m.group("single"):
        n = _SINGLE[m.group("single").lower()]
    elif m.group("n"):
        n = _NUMBERS[m.group("n").lower()]
    elif m.group("x") or m.group("xn"):
        n = int(m.group("x") or m.group("xn"))  # "insist x2", "push 3x"
    else:
        n = 1
    rest = (text[: m.start()] + " " + text[m.end() :]).strip()
    rest = re.sub(r"^\s*more\b|\bmore\s*$", "", rest, flags=re.IGNORECASE)
    return n, re.sub(r"\s{2,}", " ", rest).strip(" ,")


# --- values ----------------------------------------------------------------------------------------

_FILLER = frozenset(
    """is are be fine ok okay good works work will do should the a an it its called named name channel sheet
    spreadsheet table data address email e-mail url link repo repository endpoint path value one that's that
    this please use to for as answer reply with just our my post in into at on send go put save store write
    them""".split()  # noqa: SIM905 - a word list reads better as text
)
_NAME_KINDS: frozenset[DetailKind] = frozenset({"spreadsheet", "table", "name"})


_WRAPPER = re.compile(
    # "it's for the audit" keeps its "it's": what follows is no value on its own.
    r"^(?:(?:(?:it'?s|it is|that'?s|that is|this is|is)(?!\s+(?:for|because|since|to|in|on|at|about|not|too|very|so|"
    r"fine|ok|okay|just|only|still|already|pretty|quite|rather|more|less|better|worse|up|down|all|a bit)\b)|"
    r"the answer is|answer is|the value is|the answer should be|"
    r"it should be|should be|we use|we're using|we are using|we're on|we are on|we go with|we'd go with|i'd go with|"
    r"use|go with|pick|choose|select|just|simply|probably|maybe)\s+)+",
    re.IGNORECASE,
)
_ONE_CALLED = re.compile(r"^(?:(?:the|a)\s+)?(?:one\s+)?(?:called|named|titled)\s+(?=\S)", re.IGNORECASE)


def unwrap(text: str) -> str:
    """A value without the conversation around it: "it's the one called Q3 Leads" -> "Q3 Leads", "go with
    EMEA" -> "EMEA", "we use EUR" -> "EUR". Everything else (case, slashes, @, #, inner quotes) is kept."""
    text = text.strip()
    for _ in range(3):
        before = text
        text = _WRAPPER.sub("", text)
        text = _ONE_CALLED.sub("", text)
        if text == before:
            break
    return text if text.strip(" .,;:!") else before


def value_of(kind: DetailKind | None, raw: str) -> str:
    """The value an answer gives: a quoted value as quoted; a value of the detail's shape when the rest of
    the words only frame it ("250 is fine", "the customer_events table"); else the words as written,
    without the conversation around them (:func:`unwrap`)."""
    text = unwrap(raw)
    quoted = QUOTE.search(text)
    if quoted is not None and not re.search(r"\w", QUOTE.sub(" ", text).replace("called", "").replace("named", "")):
        return unquote(quoted.group(0))
    if quoted is not None and kind in _NAME_KINDS:
        return unquote(quoted.group(0))
    if kind is not None:
        found = stated_values(kind, text)
        if len(found) == 1:
            leftover = text.replace(found[0], " ")
            words = [re.sub(r"'s$", "", w) for w in re.findall(r"[\w'-]+", leftover.lower())]
            if all(w in _FILLER for w in words):
                return found[0]
        if kind in _NAME_KINDS:
            name = re.sub(r"^(?:it'?s|it is)\s+", "", text, flags=re.IGNORECASE)
            name = re.sub(r"^(?:called|named|the|a|an)\s+", "", name, flags=re.IGNORECASE)
            name = re.sub(r"\s+(?:google\s+)?(?:spread)?sheet$|\s+(?:data\s+)?table$", "", name, flags=re.IGNORECASE)
            if name != text and 0 < len(name.split()) <= 6:
                return tidy_value(name)
    return tidy_value(text)
