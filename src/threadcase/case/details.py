"""Details a builder asks its user for: what kind a question is about, and the values a script states.

One vocabulary serves three readers: the director-note grammar (what a note's topic is: "the
recipient address" is an ``email``), the scripted user (which value answers "Which email address
should it send to?", or a setup card's ``sendTo`` parameter), and the audit of what the user answered.

A *stated* value is one the script's own words give ("post it to #deploys", "our Webinar attendees
2026 spreadsheet"). When the script states none, the scripted user answers with a value that is
plainly a placeholder (:func:`placeholder_for`: ``#placeholder-channel``, ``placeholder@example.com``)
and records it as invented, so an invented value is never mistaken for, nor equal to, one a builder
might invent on its own.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "DETAIL_KINDS",
    "STOP_WORDS",
    "DetailKind",
    "detail_kind",
    "kind_words",
    "placeholder_for",
    "stated_values",
    "topic_words",
]

DetailKind = Literal["channel", "email", "url", "repo", "spreadsheet", "table", "schedule", "path", "name", "number"]

DETAIL_KINDS: tuple[DetailKind, ...] = (
    "channel",
    "email",
    "url",
    "repo",
    "spreadsheet",
    "table",
    "schedule",
    "path",
    "name",
    "number",
)

# Order matters: the first kind whose words appear wins ("the channel for the email alerts" asks for
# a channel; "spreadsheet" is checked before "table" and "name").
_KIND_WORDS: tuple[tuple[DetailKind, re.Pattern[str]], ...] = (
    ("channel", re.compile(r"\bchannels?\b|(?<![\w#])#\w", re.IGNORECASE)),
    (
        "url",
        re.compile(r"\b(?:urls?|endpoints?|links?|web ?address|api address|web ?hook url|https?)\b", re.IGNORECASE),
    ),
    (
        "email",
        re.compile(
            r"\b(?:e-?mail(?: address)?|mail ?box|inbox|recipients?|addresse?s?|send ?to|sendto|to whom|whom|"
            r"who should (?:get|receive)|mailing list|destination)\b|@",
            re.IGNORECASE,
        ),
    ),
    # "owner" alone is the report's or the sheet's owner as often as a GitHub owner: only "owner/repo".
    ("repo", re.compile(r"\b(?:repo(?:sitory|sitories|s)?|owner/repo)\b", re.IGNORECASE)),
    ("spreadsheet", re.compile(r"\b(?:spread ?sheets?|sheets?|documentid|google sheets?)\b", re.IGNORECASE)),
    ("table", re.compile(r"\b(?:data ?tables?|tables?|datatableid|datatablename)\b", re.IGNORECASE)),
    (
        "schedule",
        re.compile(
            # "time zone" is a zone, not a time ("which time zone?" is no schedule question).
            r"\b(?:schedule|when|time(?![\s-]?zones?\b)|timing|cadence|how often|frequency|trigger|"
            r"start (?:this|the) workflow|cron|interval)\b",
            re.IGNORECASE,
        ),
    ),
    ("path", re.compile(r"\bpath\b", re.IGNORECASE)),
    ("number", re.compile(r"\b(?:threshold|amount|how many|limit|number|minimum|maximum|count)\b", re.IGNORECASE)),
    ("name", re.compile(r"\b(?:name[ds]?|title[ds]?|called|what to call|call it)\b", re.IGNORECASE)),
)


def kind_words(words: tuple[str, ...] | list[str], kind: DetailKind) -> set[str]:
    """The words among ``words`` (a phrase, in order) that name ``kind`` ("recipient", "address" for an
    ``email``; "how" and "often" for a ``schedule``): in a question of that kind they are there already."""
    text = " ".join(words)
    pattern = next(p for k, p in _KIND_WORDS if k == kind)
    spans = [m.span() for m in pattern.finditer(text)]
    covered: set[str] = set()
    at = 0
    for word in words:
        start, end = at, at + len(word)
        if any(s < end and start < e for s, e in spans):
            covered.add(word)
        at = end + 1
    return covered


def detail_kind(text: str) -> DetailKind | None:
    """The kind of detail ``text`` asks about or names (a question, a parameter, a note's topic)."""
    # camelCase parameter names ("sendTo", "documentId") read as words.
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    for kind, pattern in _KIND_WORDS:
        if pattern.search(spaced) or pattern.search(text):
            return kind
    return None


_CHANNEL = re.compile(r"(?<![\w#/])#[a-z0-9][\w-]*", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://[^\s,;)\]\"'”’<>]+")
_REPO = re.compile(r"(?<![\w./:@-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?![\w/])")
_QUOTED = r"[\"“‘']([^\"”’']{1,60})[\"”’']"
_NAME_WORDS = r"((?:[\w&'+-]+ ){0,4}?[\w&'+-]+)"
_SHEET = re.compile(
    rf"(?:sheet|spreadsheet)\s+(?:called|named)\s+{_QUOTED}"
    rf"|(?:sheet|spreadsheet)\s+(?:called|named)\s+{_NAME_WORDS}(?=$|[,;.!?]|\s+(?:and|then|with|for|in)\b)"
    rf"|(?:sheet|spreadsheet)\s+{_QUOTED}"
    rf"|\b(?:the|a|my|our|their|your)\s+{_QUOTED}\s+(?:google\s+)?(?:spread)?sheet\b"
    rf"|\b(?:the|a|my|our|their|your)\s+{_NAME_WORDS}\s+(?:google\s+)?(?:spread)?sheet\b",
    re.IGNORECASE,
)
_TABLE = re.compile(
    rf"(?:data ?)?table\s+(?:called|named)\s+{_QUOTED}"
    rf"|(?:data ?)?table\s+(?:called|named)\s+{_NAME_WORDS}(?=$|[,;.!?]|\s+(?:and|then|with|for|in)\b)"
    rf"|\b(?:the|a|my|our|their|your)\s+{_QUOTED}\s+data ?table\b"
    rf"|\b(?:the|a|my|our|their|your)\s+{_NAME_WORDS}\s+data ?table\b",
    re.IGNORECASE,
)
_NAMED = re.compile(rf"\b(?:called|named|titled|name it|call it)\s+{_QUOTED}", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w.:/])/[a-z0-9][\w/-]*", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.#/:-])\d+(?:\.\d+)?(?![\w:/-])")
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:am|pm)?|noon|midnight"
_SCHEDULE = re.compile(
    rf"\b(?:every|each)\s+(?:\d+\s+)?(?:minute|hour|day|morning|afternoon|evening|night|weekday|workday|week|"
    rf"monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?(?:\s+at\s+(?:{_TIME}))?"
    rf"|\b(?:hourly|daily|nightly|weekdays?)(?:\s+at\s+(?:{_TIME}))?"
    rf"|\bwhen (?:a|the) (?:webhook|form|request)\b[\w ]*?(?:called|submitted|received|arrives)"
    rf"|\bmanually\b",
    re.IGNORECASE,
)
# Words a loose name match may start with ("append a row to the Leads sheet" matches from "a"): the
# name is what follows the last of them.
_BEFORE_A_NAME = frozenset(
    "a an the my our their your this that its to into in of from for on onto with each every".split()  # noqa: SIM905 - a word list reads better as text
)
_NOT_A_NAME = frozenset(
    "it new same google data row rows one first second sheet spreadsheet table".split()  # noqa: SIM905 - a word list reads better as text
)


def _clean_name(name: str) -> str | None:
    words = name.strip().strip("\"“”‘’'").split()
    cut = max((i for i, w in enumerate(words) if w.lower() in _BEFORE_A_NAME), default=-1)
    words = words[cut + 1 :]
    if not words or all(w.lower() in _NOT_A_NAME for w in words):
        return None
    return " ".join(words)


def stated_values(kind: DetailKind, text: str) -> list[str]:
    """Values of ``kind`` the text states, in order of appearance (duplicates once)."""
    found: list[str] = []
    if kind == "channel":
        found = [m.group(0) for m in _CHANNEL.finditer(text)]
    elif kind == "email":
        found = [m.group(0).rstrip(".") for m in _EMAIL.finditer(text)]
    elif kind == "url":
        found = [m.group(0).rstrip(".") for m in _URL.finditer(text)]
    elif kind == "repo":
        without_urls = _URL.sub(" ", text)
        found = [
            m.group(1).rstrip(".") for m in _REPO.finditer(without_urls) if not re.fullmatch(r"[\d/]+", m.group(1))
        ]
    elif kind in ("spreadsheet", "table"):
        pattern = _SHEET if kind == "spreadsheet" else _TABLE
        for m in pattern.finditer(text):
            raw = next((g for g in m.groups() if g), None)
            name = _clean_name(raw) if raw else None
            if name:
                found.append(name)
    elif kind == "name":
        found = [m.group(1).strip() for m in _NAMED.finditer(text)]
    elif kind == "path":
        found = [m.group(0) for m in _PATH.finditer(_URL.sub(" ", text))]
    elif kind == "number":
        found = [m.group(0) for m in _NUMBER.finditer(_URL.sub(" ", text))]
    elif kind == "schedule":
        found = [m.group(0).strip() for m in _SCHEDULE.finditer(text)]
    unique: list[str] = []
    for value in found:
        if value and value not in unique:
            unique.append(value)
    return unique


_PLACEHOLDERS: dict[DetailKind | None, str] = {
    "channel": "#placeholder-channel",
    "email": "placeholder@example.com",
    "url": "https://placeholder.example.com/api",
    "repo": "placeholder-owner/placeholder-repo",
    "spreadsheet": "Placeholder spreadsheet",
    "table": "placeholder_table",
    "schedule": "every day at 9am (placeholder)",
    "path": "/placeholder",
    "name": "Placeholder name",
    "number": "100",
    None: "placeholder value",
}


def placeholder_for(kind: DetailKind | None) -> str:
    """A value that is plainly a placeholder, for a detail the script never states."""
    return _PLACEHOLDERS[kind]


_STOP = frozenset(
    """a an the if when whenever once asked ask asks asking for to of and or but it its them they this that these
    those is are be about user users agent assistant builder say said says tell give share provide answer know
    reveal question questions should would will won't don't do not never any value values what which who whom
    where how their there then than just only also again you your yours yourself me my i we our us one ones
    it's there's with without from in on at by so as up please some""".split()  # noqa: SIM905 - a word list reads better as text
)


STOP_WORDS: frozenset[str] = _STOP
"""Words no topic is about ("the", "which", "should", "it", …)."""


def topic_words(text: str) -> list[str]:
    """The content words of a topic ("the recipient address" -> ["recipient", "address"])."""
    words = re.findall(r"[a-z][a-z0-9_-]{1,}", text.lower())
    return [w for w in words if w not in _STOP]
