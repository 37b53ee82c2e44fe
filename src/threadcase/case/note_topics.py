"""What a question is about, in the note's own words, and which of the agent's questions that is.

A note names the question it answers or declines as its author says it: "the timezone", "the alert
channel", "the Jira project key", "who should receive the report", "how often it should run". The
topic is kept as written — never replaced by a kind guessed from the value ("Europe/Lisbon" looks like
``owner/repo``, and is still the answer to the timezone question) — and read as

- its **words** (content words, in order);
- its **head**: the words of the noun phrase the question is about, before a preposition, a clause or
  a determiner ("timezone" in "the timezone for the schedule", "alert channel" in "the alert channel
  to use"); empty when the phrase is a wh-clause whose kind says it all ("who should receive the
  report" asks for an e-mail address);
- its **detail** kind (channel, email, url, …), when the head noun names one ("the destination
  spreadsheet" is a spreadsheet; "the email subject" is no address).

A question matches (:func:`question_score`) when the kinds do not conflict and

- it asks for the same kind of detail (channel, email, url, repo, spreadsheet, table, path, schedule):
  the note's other words only rank it ("the finance inbox address" answers "Which email address …?");
- or every word the head needs is in it — as written, by its stem ("alerts" ~ "alert", "scheduled" ~
  "schedule"), its spelling variant ("e-mail", "organisation"), or as a compound ("time zone" ~
  "timezone"); a word naming the detail's kind is there already in a question of that kind. This is
  the rule for a topic no vocabulary knows ("the timezone"), and for kinds whose word says little
  ("the phone number", "the sender name": a threshold or a workflow name is not what they mean).

Generic words (verbs such as send/post/use, service names, "workflow") never decide. Of several
questions in one widget, a note goes to the one it matches best (:func:`governing`: "the alert
channel" answers the failure-alert question, not the post-channel question beside it); a question
close to the topic that lacks the note's own words is a *near miss* (:func:`near_miss`): the scripted
user cannot tell whether the note meant it, and says so rather than guess.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from threadcase.case.details import STOP_WORDS as _STOP_WORDS
from threadcase.case.details import DetailKind, detail_kind, kind_words, topic_words
from threadcase.case.directives import Trigger

__all__ = ["Topic", "governing", "near_miss", "question_score", "read_topic", "stem"]

_LEAD = frozenset(
    """about for regarding concerning on of to the a an any its their our my your which what whose know
    re q question questions tell give share provide specify""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words before a topic's head ("about the", "for a", "which")."""
_BOUNDARY = frozenset(
    """for of to in on at from with by into about via per than as the a an it its they them their this that
    these those we you i he she our my your us me him her should would will can could is are was were be
    been does do did must has have had shall may might and or but if when whether then so""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words that end a topic's head (a preposition, a determiner, an auxiliary, a conjunction)."""
_WH = frozenset({"who", "whom", "where", "when", "why", "how", "whose", "whether"})
_WEAK = frozenset(
    """send sends sent sending post posts posted posting go goes going gone use uses used using get gets got
    put set run runs call called receive receives deliver delivered write writes store save pick choose want
    wants need needs know include included workflow workflows automation flow it name names title id value
    values detail details info information thing things stuff one ones something setting settings field
    slack gmail google github notion http https api webhook request teams microsoft sheets drive openai
    right correct exact exactly again also else other answer answers reply response""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words that never decide a match: generic verbs and nouns, and service names (the kind carries them:
"the Slack channel" is answered in "Which channel should I post to?")."""
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'_-]*")


@dataclass(frozen=True)
class Topic:
    """A question's topic as a note names it."""

    words: tuple[str, ...]
    head: tuple[str, ...]
    detail: DetailKind | None


def _tokens(text: str, *, camel: bool = True) -> list[str]:
    # A question's camelCase parameter names read as words ("sendTo"); a note's names stay whole
    # ("BigQuery" is one word, matched against "big query" as a compound).
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text) if camel else text
    return [t.strip("'") for t in _TOKEN.findall(spaced.replace("/", " ").lower())]


def read_topic(text: str) -> Topic:
    """The topic a note's words name ("the timezone for the schedule", "who should receive it")."""
    tokens = _tokens(text, camel=False)
    words = tuple(topic_words(" ".join(tokens)))
    if tokens and tokens[0] in ("whether", "if"):
        return Topic(words, (), None)  # a yes/no question: its words, never a kind
    at = 0
    while at < len(tokens) and tokens[at] in _LEAD:
        at += 1
    head: list[str] = []
    while at < len(tokens) and tokens[at] not in _BOUNDARY:
        head.append(tokens[at])
        at += 1
    if any(w not in _WH and w not in _WEAK and w not in _STOP_WORDS for w in head):
        return Topic(words, tuple(head), _head_kind(head))
    # "who should receive the report", "where the alerts should go", "what to call it": a wh-clause or
    # generic words, whose kind is said by all of it.
    kind = detail_kind(" ".join(tokens))
    return Topic(words, () if kind else tuple(head), kind)


def _head_kind(head: list[str]) -> DetailKind | None:
    """The kind the head's own noun names: its last word ("the destination spreadsheet", "the alert
    channel"), or the word before a generic one ("the sheet name", "the channel ID"); never a modifier's
    ("the email subject" asks for a subject, not an address)."""
    if head and head[0] in _WH:
        return detail_kind(" ".join(head))  # "how many reps", "how often"
    generic: DetailKind | None = None
    for at in range(len(head) - 1, -1, -1):
        pair = " ".join(head[at - 1 : at + 1]) if at else head[at]
        kind = detail_kind(pair) if at and detail_kind(pair) != detail_kind(head[at - 1]) else None
        kind = kind or detail_kind(head[at])
        if head[at] in _WEAK or head[at] in _STOP_WORDS:
            generic = generic or kind  # "name" in "the sheet name": the sheet's kind, if it has one
            continue
        return kind or (generic if at == len(head) - 1 else None)
    return generic


def stem(word: str) -> str:
    """A word reduced so variants compare equal: case, hyphens, plurals, -ing/-ed, British -ise/-our."""
    w = word.lower().replace("-", "").replace("’", "'")
    w = re.sub(r"'s$", "", w)
    w = re.sub(r"is(ation|ing|ed|es|e)$", r"iz\1", w) if len(w) > 5 else w
    w = re.sub(r"our$", "or", w) if len(w) > 5 else w
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _word_set(text: str) -> set[str]:
    """Stems of a question's words, of its hyphenated words' parts, and of adjacent pairs joined."""
    tokens = _tokens(text)
    parts = [p for t in tokens for p in t.split("-") if p]
    found = {stem(t) for t in tokens} | {stem(p) for p in parts}
    found |= {stem(a + b) for a, b in itertools.pairwise(parts)}
    return found


def _found(word: str, phrase: Sequence[str], asked: set[str]) -> bool:
    if stem(word) in asked:
        return True
    at = phrase.index(word)
    before = phrase[at - 1] + word if at > 0 else None
    after = word + phrase[at + 1] if at + 1 < len(phrase) else None
    return any(joined is not None and stem(joined) in asked for joined in (before, after))


def _needed(trigger: Trigger) -> list[str]:
    """The words a question must hold: the head's deciding words; else the topic's; else its generic ones."""
    head = [w for w in trigger.head if w not in _STOP_WORDS]
    strong = [w for w in head if w not in _WEAK and w not in _WH]
    if strong:
        return strong
    topic = [w for w in trigger.topic if w not in _STOP_WORDS]
    if trigger.detail is not None and not trigger.head:
        return [w for w in topic if w not in _WEAK and w not in _WH and w not in kind_words(topic, trigger.detail)]
    return (
        [w for w in topic if w not in _WEAK and w not in _WH]
        or [w for w in head + topic if w not in _WH]
        or head
        or topic
    )


def question_score(trigger: Trigger, asked: str) -> int:
    """How well a question matches a question trigger: 0 = not this question; 1 = any question (the note
    names none); higher = more of the note's words are in it."""
    if trigger.event != "question":
        return 0
    if not trigger.topic and not trigger.head and trigger.detail is None:
        return 1
    asked_kind = detail_kind(asked)
    if trigger.detail is not None and asked_kind is not None and trigger.detail != asked_kind:
        return 0
    same_kind = trigger.detail is not None and asked_kind == trigger.detail
    need = _needed(trigger)
    words = _word_set(asked)
    phrase = list(dict.fromkeys([*trigger.head, *trigger.topic, *need]))
    shared = sum(1 for w in trigger.topic if _found(w, phrase, words))
    if same_kind and trigger.detail not in _LOOSE_KINDS:
        # "the finance inbox address" is the address "Which email address should it send to?" asks for;
        # its other words rank it against a sibling ("the alert channel" beside the post channel).
        return 3 + shared
    if same_kind:
        assert trigger.detail is not None
        covered = kind_words([*trigger.head, *need], trigger.detail)
        need = [w for w in need if w not in covered]
    elif not need:
        return 0
    if not all(_found(w, phrase, words) for w in need):
        return 0
    return 2 + int(same_kind) + shared


_LOOSE_KINDS: frozenset[DetailKind | None] = frozenset({"number", "name"})
"""Kinds whose word says little ("the phone number", "the sender name"): the note's other words decide."""


def near_miss(trigger: Trigger, asked: str) -> bool:
    """The question is not the trigger's, but close enough that the note may have meant it: of the same
    kind, or sharing a deciding word, without all of the note's own words."""
    if trigger.event != "question" or question_score(trigger, asked) > 0:
        return False
    if not trigger.topic and trigger.detail is None:
        return False
    asked_kind = detail_kind(asked)
    if trigger.detail is not None and asked_kind is not None:
        return trigger.detail == asked_kind
    words = _word_set(asked)
    phrase = list(trigger.topic)
    return any(_found(w, phrase, words) for w in phrase if w not in _WEAK and w not in _WH and w not in _STOP_WORDS)


def governing(triggers: Sequence[Trigger], asked: str, siblings: Sequence[str] = ()) -> int | None:
    """The index of the trigger that governs ``asked``: the best match; a trigger that matches another
    question of the same widget (``siblings``) better is left to that one ("the alert channel" answers
    the alert-channel question, not the post-channel question beside it). Ties go to the first."""
    best: int | None = None
    best_score = 0
    for index, trigger in enumerate(triggers):
        score = question_score(trigger, asked)
        if score <= best_score:
            continue
        if any(question_score(trigger, other) > score for other in siblings if other != asked):
            continue
        best, best_score = index, score
    return best
