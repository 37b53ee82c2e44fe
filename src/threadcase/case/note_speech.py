"""What the scripted user says for a note: a natural user sentence built from the note's words.

"ask why it is taking so long" is sent as "Why is it taking so long?", "tell it you'll test it
tomorrow" as "I'll test it tomorrow.", "ask it to rename the workflow" as "Rename the workflow.",
"keep pushing for it to just hardcode the token" as "Just hardcode the token.". Quoted words are sent
verbatim. A question whose word order cannot be turned around safely keeps the author's words inside
"Can you tell me …?" rather than a broken sentence.
"""

from __future__ import annotations

import re

from threadcase.case.note_text import capitalised, tidy_value, unquote, verb_base

__all__ = ["pushed_for", "question", "spoken", "statement"]

_WH = ("what", "why", "when", "where", "who", "whom", "whose", "which", "how")
_AUX = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "will",
        "would",
        "should",
        "has",
        "have",
        "had",
        "does",
        "do",
        "did",
        "may",
        "might",
        "must",
        "shall",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "can't",
        "couldn't",
        "won't",
        "wouldn't",
        "shouldn't",
        "hasn't",
        "haven't",
        "doesn't",
        "didn't",
    ]
)
_SUBJECT_START = frozenset(
    [
        "it",
        "they",
        "we",
        "i",
        "you",
        "he",
        "she",
        "this",
        "that",
        "these",
        "those",
        "the",
        "its",
        "our",
        "my",
        "your",
        "their",
        "there",
        "a",
        "an",
        "each",
        "every",
        "all",
        "any",
        "some",
        "nothing",
        "anything",
        "everything",
        "n8n",
    ]
)
_PAST = frozenset(
    [
        "went",
        "broke",
        "ran",
        "happened",
        "came",
        "got",
        "made",
        "did",
        "said",
        "took",
        "failed",
        "changed",
        "stopped",
        "happens",
        "breaks",
        "runs",
        "fails",
        "changes",
        "stops",
        "goes",
        "comes",
        "gets",
        "makes",
        "takes",
        "sends",
        "posts",
        "triggers",
    ]
)
_HOW_MODIFIERS = frozenset("many much long often soon far big old".split())  # noqa: SIM905 - a word list reads better as text

_FLIP_FIRST = (
    (re.compile(r"\bthank you\b", re.I), "thank you"),
    (re.compile(r"\byou(?:'re| are)\b", re.I), "I'm"),
    (re.compile(r"\byou were\b", re.I), "I was"),
    (re.compile(r"\byou aren't\b", re.I), "I'm not"),
    (re.compile(r"\byourself\b", re.I), "myself"),
    (re.compile(r"\byours\b", re.I), "mine"),
    (re.compile(r"\byour\b", re.I), "my"),
    (
        re.compile(
            r"\b(?P<pre>(?:to|for|with|at|from|about|of|tell|give|send|ask|reach|contact|call|email|ping) )you\b", re.I
        ),
        r"\g<pre>me",
    ),
    (re.compile(r"\byou\b", re.I), "I"),
)
_FLIP_THIRD = (
    (re.compile(r"\bthey(?:'re| are)\b", re.I), "I'm"),
    (re.compile(r"\bthey were\b", re.I), "I was"),
    (re.compile(r"\bthey(?='(?:ll|ve|d)\b)", re.I), "I"),
    (re.compile(r"\bthemselves\b", re.I), "myself"),
    (re.compile(r"\btheirs\b", re.I), "mine"),
    (re.compile(r"\btheir\b", re.I), "my"),
    (re.compile(r"\bthem\b", re.I), "me"),
    (re.compile(r"\bthey\b", re.I), "I"),
    (re.compile(r"\bthe user(?:'s)?\b", re.I), "I"),
)
_SLOTTED = re.compile(r"\x00\d+\x00")


def _flip(text: str, third_person: bool) -> str:
    # Quoted words are the user's own, as written: never flipped.
    parts = re.split(r"(\"[^\"]*\"|“[^”]*”)", text)
    out = []
    for part in parts:
        if part[:1] in '"“':
            out.append(part)
            continue
        for pattern, replacement in (*_FLIP_FIRST, *(_FLIP_THIRD if third_person else ())):
            if replacement == "thank you":
                part = pattern.sub(lambda m: m.group(0).replace("you", "\x01"), part)
                continue
            part = pattern.sub(replacement, part)
        out.append(part.replace("\x01", "you"))
    return "".join(out)


def _end(text: str, mark: str) -> str:
    text = text.rstrip(" .,;:")
    if text.endswith(("?", "!", '"', "”")):
        return text
    return text + mark


def statement(content: str, *, third_person: bool = False) -> str:
    """A statement the user makes ("that the last run posted twice" -> "The last run posted twice.")."""
    text = unquote(content.strip()) if _is_quoted(content) else content.strip()
    if _is_quoted(content):
        return text
    text = re.sub(r"^(?:that\s+|:\s*)", "", text, flags=re.IGNORECASE)
    text = tidy_value(text) if not text.endswith(("?", "!")) else text
    return _end(capitalised(_flip(text, third_person)), ".")


def _is_quoted(text: str) -> bool:
    t = text.strip()
    return len(t) >= 2 and t[0] in '"“‘' and t[-1] in '"”’' and t.count(t[0]) <= 2


def question(content: str, *, third_person: bool = False) -> str:
    """A question the user asks ("why it is taking so long" -> "Why is it taking so long?")."""
    text = _flip(tidy_value(content.strip().rstrip("?")), third_person)
    words = text.split()
    if not words:
        return ""
    head = words[0].lower()
    if head in ("whether", "if"):
        # "if it's live yet" -> "is it live yet": the contraction holds the verb to put first.
        words = [*words[:1], *" ".join(words[1:]).replace("it's", "it is").replace("that's", "that is").split()]
        inverted = _invert(words[1:])
        return _end(capitalised(inverted), "?") if inverted else f"Can you tell me {text}?"
    if head not in _WH:
        return _end(capitalised(text), "?")
    wh_len = 1
    if head == "how" and len(words) > 1 and words[1].lower() in _HOW_MODIFIERS:
        wh_len = 2
    rest = words[wh_len:]
    if not rest:
        return _end(capitalised(text), "?")
    first = rest[0].lower()
    if first in _AUX or first in _PAST:
        return _end(capitalised(text), "?")  # "who gets the email", "what went wrong": already in order
    if head in ("which", "what", "whose") and len(rest) > 1 and first not in _SUBJECT_START and _verb_like(rest[1]):
        return _end(capitalised(text), "?")  # "which node sends the email": the wh-phrase is the subject
    # "which channel it posts to", "how many rows it will write": the wh-phrase may take a noun or two.
    start = next((i for i, w in enumerate(rest[:3]) if w.lower() in _SUBJECT_START), None)
    if start is None:
        return f"Can you tell me {text}?"
    inverted = _invert(rest[start:])
    if inverted is None:
        return f"Can you tell me {text}?"
    return _end(capitalised(" ".join([*words[:wh_len], *rest[:start], inverted])), "?")


def _verb_like(word: str) -> bool:
    lowered = word.lower()
    return lowered in _PAST or lowered in _AUX or (lowered.endswith("s") and not lowered.endswith("ss"))


def _invert(words: list[str]) -> str | None:
    """ "the output is stored" -> "is the output stored", "the message includes X" -> "does the message
    include X"; None when no auxiliary (or verb in -s) follows a short subject."""
    for i in range(1, min(len(words), 5)):
        if words[i].lower() in _AUX:
            return " ".join([words[i].lower(), *words[:i], *words[i + 1 :]])
    if words and words[0].lower() in _SINGULAR_START:
        for i in range(1, min(len(words), 5)):
            word = words[i].lower()
            if word.endswith("s") and not word.endswith("ss") and word not in _NOT_VERBS:
                if words[i - 1].lower().endswith("s") and i > 1:
                    return None  # "the messages include": plural, or a verb we cannot tell
                return " ".join(["does", *words[:i], verb_base(words[i]), *words[i + 1 :]])
    return None


_SINGULAR_START = frozenset(
    ["it", "he", "she", "this", "that", "the", "its", "our", "my", "your", "their", "each", "every"]
)
_NOT_VERBS = frozenset(["its", "this", "is", "was", "has", "does", "always", "sometimes", "perhaps", "news", "status"])


_MANNER_AT_END = re.compile(
    r"\b(?:in|using) (?:english|french|german|spanish|italian|portuguese|dutch|japanese|chinese|russian|arabic|"
    r"hindi|polish|swedish|emojis?|all caps|caps|capitals|rhyme|verse|haiku|pirate speak|slang|code|json|"
    r"bullet points)\s*$",
    re.IGNORECASE,
)
_ASK_TO = re.compile(
    r"^(?:(?:it|them|him|her|the (?:agent|assistant|builder|bot|ai))\s+)?(?:to|if it can|whether it can)\s+(?P<do>.+)$",
    re.I,
)
_ASK_FOR = re.compile(r"^(?:(?:it|them|the (?:agent|assistant|builder|bot|ai))\s+)?for\s+(?P<what>.+)$", re.I)
_ASK_OBJECT = re.compile(r"^(?:to\s+)?(?:it|them|him|her|the (?:agent|assistant|builder|bot|ai))\s+(?P<rest>.+)$", re.I)


def spoken(verb: str, content: str, *, third_person: bool = False, literal: bool = False) -> str | None:
    """What the user says for ``verb content`` ("ask" + "why it failed"); None when nothing is said.

    ``literal``: the words came after a colon ("ask: eta?", "say: ship it"), so they are the user's own."""
    verb = verb.lower()
    content = content.strip()
    if not content:
        return None
    if _is_quoted(content):
        return unquote(content)
    if literal and verb in ("ask", "enquire", "inquire"):
        return _end(capitalised(tidy_value(content.rstrip("?"))), "?")
    if re.match(
        r"^(?:(?:only|just|always|entirely|solely)\s+)?(?:in|like|as if|as though|using|with|in the (?:voice|style|"
        r"manner) of)\b",
        content,
        re.I,
    ):
        return None  # "answer in French", "reply like a pirate": a manner, not words to send
    if all(re.fullmatch(r"\w+ly|and|but|yet|,", w, re.IGNORECASE) for w in content.replace(",", " , ").split()):
        return None  # "reply quickly and casually": how, not what
    if _MANNER_AT_END.search(content):
        return None  # "write everything in German": a manner, not words to send
    if verb in ("write", "send") and not content.lower().startswith("that "):
        return None  # "write …"/"send …" say what to send only with quotes or "that …"
    if re.match(r"^(?:\w+ly\s+)?and\b", content, re.IGNORECASE):
        return None  # "answer briefly and stay on topic": a manner, then something else to do
    if verb in ("say", "tell", "reply", "respond", "answer", "mention", "explain", "confirm") and re.match(
        r"^(?:whether|if|which|what|how|when|where|who)\b", content, re.IGNORECASE
    ):
        return None  # "say whether it worked": words the scripted user cannot know
    if verb in ("ask", "enquire", "inquire", "query", "wonder"):
        spoken_to = _ASK_OBJECT.match(content)
        if spoken_to is not None and spoken_to.group("rest").split()[0].lower() in (*_WH, "whether", "if"):
            content = spoken_to.group("rest")  # "ask (to) him why it fails": whom it asks is not what it asks
        to = _ASK_TO.match(content)
        if to is not None and not content.lower().startswith(("if", "whether")):
            return _end(capitalised(_flip(tidy_value(to.group("do")), third_person)), ".")
        wanted = _ASK_FOR.match(content)
        if wanted is not None:
            return _end("I'd like " + _flip(tidy_value(wanted.group("what")), third_person), ".")
        if content.split()[0].lower() not in (*_WH, "whether", "if"):
            return None  # "ask follow-up questions until …": not a question the note words
        return question(content, third_person=third_person)
    return statement(content, third_person=third_person)


_FOR_IT = re.compile(r"^(?:for|on)\s+(?:it|them|the (?:agent|assistant|builder|bot|ai))\s+to\s+(?P<do>.+)$", re.I)
_FOR_X = re.compile(r"^for\s+(?P<who>.+?)\s+to\s+(?P<do>.+)$", re.I)
_THAT_IT = re.compile(
    r"^(?:that\s+)?(?:it|they|the (?:agent|assistant|builder|bot|ai))\s+(?P<do>(?!is\b|was\b|has\b|should\b|must\b|"
    r"will\b|can\b|could\b|would\b|needs?\b|does\b)\w+.*)$",
    re.I,
)
_SAYING = re.compile(r"^(?:saying|and say|say|:|that)\s*(?:that\s+)?(?P<what>.+)$", re.I)


def pushed_for(content: str, *, third_person: bool = False) -> str | None:
    """What a held position pushes for, as the user says it: "for it to just hardcode the token" ->
    "Just hardcode the token."; "that it put the key in the header" -> "Put the key in the header.";
    "saying the demo is tomorrow" -> "The demo is tomorrow."; None when the words are not one of these."""
    text = content.strip().strip(",:")
    if not text:
        return None
    m = _FOR_IT.match(text)
    if m is not None:
        return _end(capitalised(_flip(tidy_value(m.group("do")), third_person)), ".")
    m = _FOR_X.match(text)
    if m is not None:
        return _end(
            f"I want {_flip(m.group('who'), third_person)} to {_flip(tidy_value(m.group('do')), third_person)}", "."
        )
    m = _THAT_IT.match(text)
    if m is not None and text.lower().startswith("that"):
        return _end(capitalised(_flip(tidy_value(m.group("do")), third_person)), ".")
    m = _SAYING.match(text)
    if m is not None:
        return statement(m.group("what"), third_person=third_person)
    if re.match(r"^(?:it|they)\s+(?:should|must|needs? to|has to|have to)\b", text, re.I):
        return statement(text, third_person=third_person)
    return None
