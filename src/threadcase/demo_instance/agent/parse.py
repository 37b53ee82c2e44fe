"""The builder agent's vocabulary: regular expressions over a small grammar, no model.

Everything here is a pure function from text to small dataclasses, so the turn state machine in
``builder.py`` stays readable and the grammar can be tested phrase by phrase. The README next to this
package lists the accepted phrasings; when a phrase is not covered, the parser reports nothing for it
and the agent says what it did not understand instead of guessing.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ActionSpec",
    "BuildSpec",
    "ErrorHandlingSpec",
    "FilterSpec",
    "TriggerSpec",
    "action_mentions",
    "invalid_schedule",
    "parse_action_phrases",
    "parse_build",
    "parse_error_handling",
    "parse_filter",
    "parse_trigger",
    "split_changes",
    "unparsed_parts",
    "webhook_path",
]

TriggerKind = Literal["schedule", "webhook", "form", "manual"]
ActionKind = Literal["slack", "gmail", "notion", "github", "http", "sheets", "datatable", "set"]

DAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "ten": 10,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}

URL_RE = re.compile(r"https?://[^\s\"'<>)\]]+")
# The look-behind lets a match start only where a run of address characters starts: without it every
# position of a long run without an "@" re-scanned the rest of the run (64 KiB of letters blocked the
# demo server's event loop for seconds).
EMAIL_RE = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
CHANNEL_RE = re.compile(r"(?<![\w&])#([A-Za-z0-9][\w-]*)")
# Not "the data table called …", "a sheet named …", "the folder called …": those name something else.
_NOT_OTHER_THING = r"(?<!table\s)(?<!sheet\s)(?<!folder\s)(?<!channel\s)"
QUOTED_NAME_RE = re.compile(
    _NOT_OTHER_THING + r"\b(?:call it|called|named|name it)\s+[\"“']([^\"”']+)[\"”']", re.IGNORECASE
)
_TIME = r"(?:(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?|(?P<word>noon|midnight))"
_AT_TIME_RE = re.compile(r"\bat\s+" + _TIME + r"(?![\w:])", re.IGNORECASE)


def _clean_url(url: str) -> str:
    return url.rstrip(".,;:!?")


# --- triggers ---------------------------------------------------------------------------------


@dataclass
class TriggerSpec:
    """What starts a workflow. ``schedule`` uses either an interval or days + a time of day."""

    kind: TriggerKind
    interval_field: Literal["minutes", "hours"] | None = None
    interval: int | None = None
    days: list[int] | None = None
    """Weekday numbers, 0 = Sunday (n8n's ``triggerAtDay``); None with a time = every day."""
    hour: int | None = None
    minute: int = 0
    path: str | None = None
    placeholder: bool = False
    """True when the user skipped the trigger question: a manual trigger stands in."""

    def describe(self) -> str:
        """A short human description, used in plans, replies and answers."""
        if self.kind == "webhook":
            return f"when the webhook /{self.path} is called" if self.path else "when the webhook is called"
        if self.kind == "form":
            return "when the form is submitted"
        if self.kind == "manual":
            return "manually (placeholder trigger — choose one before activating)" if self.placeholder else "manually"
        if self.interval_field is not None:
            unit = self.interval_field[:-1] if self.interval == 1 else self.interval_field
            return f"every {unit}" if self.interval == 1 else f"every {self.interval} {unit}"
        time = f"{self.hour or 0:02d}:{self.minute:02d}"
        if self.days is None:
            return f"every day at {time}"
        if self.days == [1, 2, 3, 4, 5]:
            return f"on weekdays at {time}"
        names = ", ".join(DAY_NAMES[d].capitalize() for d in self.days)
        return f"on {names} at {time}"


def _parse_time(text: str) -> tuple[int, int] | None:
    match = _AT_TIME_RE.search(text)
    if match is None:
        return None
    if match.group("word"):
        return (12, 0) if match.group("word").lower() == "noon" else (0, 0)
    hour = int(match.group("h"))
    minute = int(match.group("m") or 0)
    ampm = (match.group("ampm") or "").lower().replace(".", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def invalid_schedule(text: str) -> str | None:
    """The phrase of an impossible schedule ("at 25:99", "every 0 minutes"), else None.

    Such a phrase is refused and said back, never silently replaced by a default time or interval.
    """
    scheduled = re.search(
        r"\b(?:every|each|daily|nightly|weekdays?|run|runs|schedule|trigger|"
        r"(?:sun|mon|tues|wednes|thurs|fri|satur)days?)\b",
        text,
        re.IGNORECASE,
    )
    for match in _AT_TIME_RE.finditer(text):
        if match.group("word"):
            continue
        hour, minute = int(match.group("h")), int(match.group("m") or 0)
        ampm = bool(match.group("ampm"))
        if not (match.group("m") or ampm or scheduled):
            continue  # "at 30 percent" is not a time
        if minute > 59 or hour > (12 if ampm else 23) or (ampm and hour == 0):
            return match.group(0).strip()
    zero = re.search(r"\bevery\s+0+\s+(?:minute|min|hour|hr)s?\b", text, re.IGNORECASE)
    return zero.group(0) if zero else None


def parse_trigger(text: str) -> TriggerSpec | None:
    """The trigger named in ``text``, or None when no trigger phrase is present."""
    low = text.lower()
    interval = re.search(
        r"\bevery\s+(?:(\d+|a|an|one|two|three|four|five|six|ten|twelve|fifteen|twenty|thirty)\s+)?"
        r"(minute|min|hour|hr)s?\b",
        low,
    )
    if interval:
        count_word = interval.group(1) or "1"
        count = int(count_word) if count_word.isdigit() else _NUMBER_WORDS[count_word]
        unit: Literal["minutes", "hours"] = "minutes" if interval.group(2).startswith("min") else "hours"
        return TriggerSpec(kind="schedule", interval_field=unit, interval=max(count, 1))
    if re.search(r"\bevery\s+half\s+(?:an\s+)?hour\b", low):
        return TriggerSpec(kind="schedule", interval_field="minutes", interval=30)
    if re.search(r"\bhourly\b", low):
        return TriggerSpec(kind="schedule", interval_field="hours", interval=1)

    days: list[int] | None = None
    daily = False
    default_hour = 9
    if re.search(r"\b(?:weekdays?|work\s*days?|monday\s+(?:to|through|thru|-)\s+friday|mon-fri)\b", low):
        days = [1, 2, 3, 4, 5]
    else:
        named = re.findall(r"\b(sunday|monday|tuesday|wednesday|thursday|friday|saturday)s?\b", low)
        if named:
            days = sorted({DAY_NAMES.index(name) for name in named})
    part = re.search(r"\b(?:every|each)\s+(day|morning|evening|night|afternoon)\b|\b(daily|nightly)\b", low)
    if part:
        daily = True
        word = part.group(1) or part.group(2)
        default_hour = {"evening": 18, "night": 22, "nightly": 22, "afternoon": 14}.get(word, 9)
    time = _parse_time(text)
    if days is not None or daily or (time is not None and re.search(r"\b(?:run|runs|trigger|schedule)\b", low)):
        hour, minute = time if time is not None else (default_hour, 0)
        return TriggerSpec(kind="schedule", days=days, hour=hour, minute=minute)

    if re.search(r"\bwebhook\b|\bwhen\s+an?\s+(?:http\s+)?request\s+(?:comes\s+in|is\s+received|arrives)\b", low):
        return TriggerSpec(kind="webhook", path=webhook_path(text))
    if re.search(r"\bform\b", low):
        return TriggerSpec(kind="form")
    if re.search(r"\bmanual(?:ly)?\b|\bon\s+demand\b|\bwhen\s+i\s+click\b|\bbutton\b", low):
        return TriggerSpec(kind="manual")
    return None


_PATH_AFTER_WORD_RE = re.compile(
    r"\bpath\s+(?:of\s+|to\s+|is\s+|=\s*|:\s*)?[`\"'“]?/?"
    r"(?!(?:the|a|an|it|this|that|for|of|to|and|from|now|in|on|at|as|with|please|instead|too|then)\b)"
    r"([A-Za-z0-9][\w\-./]*)",
    re.IGNORECASE,
)
_SLASH_PATH_RE = re.compile(r"(?<![\w/.:@#-])/([A-Za-z0-9][\w\-./]*)")


def webhook_path(text: str) -> str | None:
    """The webhook path the user named, as written (case kept): any "/x" not in a URL, else "path x"."""
    without_urls = URL_RE.sub(" ", text)
    match = _SLASH_PATH_RE.search(without_urls) or _PATH_AFTER_WORD_RE.search(without_urls)
    if match is None:
        return None
    path = match.group(1).rstrip(".,;:!?").strip("/")
    return path or None


# --- filters, error handling ------------------------------------------------------------------

_OPERATORS: list[tuple[str, str]] = [
    (r">=|greater than or equal to|at least|no less than", "gte"),
    (r"<=|less than or equal to|at most|no more than", "lte"),
    (r"!=|is not|isn't|not equal to|does not equal", "notEquals"),
    (r">|greater than|more than|over|above|exceeds|bigger than|higher than", "gt"),
    (r"<|less than|fewer than|below|under|smaller than|lower than", "lt"),
    (r"==|=|equals|equal to|is", "equals"),
    (r"contains|includes", "contains"),
]
_OP_ALT = "|".join(f"(?:{pattern})" for pattern, _ in _OPERATORS)
_FILTER_RE = re.compile(
    r"\b(only\s+)?(?:if|when|where|for)\s+(?:the\s+)?([a-z_][\w.]*)\s+(?:is\s+|are\s+)?"
    r"(" + _OP_ALT + r")\s+\$?([-\d.,]+\d|\d|[\"“'][^\"”']+[\"”']|[\w@.\-]+)",
    re.IGNORECASE,
)
_OP_NAMES = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "equals": "=", "notEquals": "!=", "contains": "contains"}


@dataclass
class FilterSpec:
    """An IF filter: keep items whose ``field`` compares to ``value`` with ``operation``."""

    field: str
    operation: str
    value: float | str
    position: int = dataclasses.field(default=0, compare=False)
    """Where the phrase starts in the message (places the IF after the actions mentioned before it)."""

    def describe(self) -> str:
        """The filter as the reply says it (``amount > 100``)."""
        value = self.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return f"{self.field} {_OP_NAMES.get(self.operation, self.operation)} {value}"


def _filter_value(raw: str) -> float | str:
    quoted = raw.strip()[:1] in "\"“'"
    raw = raw.strip().strip("\"“”'")
    if not quoted:
        # The sentence's own full stop or comma is not part of the value ("if status is down.").
        raw = raw.rstrip(".,;:!?")
    number = raw.replace(",", "")
    try:
        return float(number)
    except ValueError:
        return raw


def parse_filter(text: str) -> FilterSpec | None:
    """``only if amount > 100`` and friends; the error-handling clause must be removed first."""
    for match in _FILTER_RE.finditer(text):
        field_name = match.group(2).lower()
        op_text = match.group(3).lower()
        value = _filter_value(match.group(4))
        # Without "only", accept just numeric comparisons: "when the form is submitted" is no filter.
        has_only = (
            match.group(1) is not None
            or bool(re.search(r"\bonly\b", text[: match.start()], re.IGNORECASE))
            or match.group(0).lower().startswith("if ")
        )
        if not has_only and (isinstance(value, str) or op_text == "is"):
            continue
        if field_name in {"it", "that", "this", "anything", "something", "there", "a", "the", "you"}:
            continue
        operation = next(name for pattern, name in _OPERATORS if re.fullmatch(pattern, op_text, re.IGNORECASE))
        return FilterSpec(field=field_name, operation=operation, value=value, position=match.start())
    return None


_ERROR_RE = re.compile(
    r"continue\s+on\s+(?:fail(?:ure)?|error)|error[\s-]+handling|on\s+error|handle\s+(?:the\s+)?errors?"
    r"|\b(?:if|when)\s+(?:it|anything|something|a\s+step|any\s+step|a\s+node|the\s+\w+(?:\s+\w+)?)\s+fails?",
    re.IGNORECASE,
)
_REQUIRED_RE = re.compile(
    r"\b(?:must|always|make\s+sure|requires?d?|need(?:s|ed)?|never\s+remove|non-negotiable|mandatory|keep)\b",
    re.IGNORECASE,
)
_ALERT_RE = re.compile(r"\balert\s+(?:me\s+|us\s+|the\s+team\s+)?(?:in\s+|on\s+|to\s+|via\s+)?(?:slack\s+)?#([\w-]+)")


@dataclass
class ErrorHandlingSpec:
    """Continue on fail, optionally with an alert to a Slack channel; ``required`` = the user insisted."""

    alert_channel: str | None = None
    alert_requested: bool = False
    required: bool = False


def parse_error_handling(text: str) -> tuple[ErrorHandlingSpec | None, str]:
    """The error-handling request in ``text`` (if any) and the text with that clause removed.

    The clause runs from the first error-handling or alert phrase to the end of its sentence; the
    "required" marker is looked for in the whole sentence ("error handling is a must").
    """
    error = _ERROR_RE.search(text)
    if error is None:
        # "alert #ops if status is down" is a Slack step with a filter, not error handling.
        return None, text
    sentence_start = max(text.rfind(".", 0, error.start()), text.rfind("\n", 0, error.start())) + 1
    sentence_end_match = re.search(r"[.;\n]", text[error.end() :])
    sentence_end = error.end() + sentence_end_match.start() if sentence_end_match else len(text)
    alert = _ALERT_RE.search(text, sentence_start, sentence_end)
    start = min(error.start(), alert.start()) if alert else error.start()
    lead = text[sentence_start:start]
    if re.search(r"fail|error|handl", lead, re.IGNORECASE) and not parse_action_phrases(lead):
        # "Failures must always be handled: continue on fail …": the whole sentence is about error handling.
        start = sentence_start
    end = sentence_end
    sentence = text[sentence_start:end]
    spec = ErrorHandlingSpec(
        alert_channel=f"#{alert.group(1)}" if alert else None,
        alert_requested=alert is not None or bool(re.search(r"\b(?:alert|notify)\b", sentence, re.IGNORECASE)),
        required=bool(_REQUIRED_RE.search(sentence)),
    )
    return spec, text[:start] + " " + text[end:]


# --- actions ----------------------------------------------------------------------------------


@dataclass
class ActionSpec:
    """One action step. ``params`` holds the details the user gave (None = missing)."""

    kind: ActionKind
    params: dict[str, Any] = field(default_factory=dict)


_SLACK_RE = re.compile(r"\bslack\b", re.IGNORECASE)
_GMAIL_RE = re.compile(
    r"\bgmail\b|\b(?:send|shoot|write)\s+(?:an?\s+|the\s+)?(?:e-?mail|mail)\b|\be-?mails?\s+(?:it|them|me|us|the|a|to)\b"
    r"|\be-?mail\b[^.]{0,40}@|\bsend\b[^.]{0,60}\bto\s+[\w.+-]+@",
    re.IGNORECASE,
)
_NOTION_RE = re.compile(r"\bnotion\b", re.IGNORECASE)
_GITHUB_RE = re.compile(r"\bgithub\b", re.IGNORECASE)
_HTTP_RE = re.compile(
    r"\bhttp\s+request\b|\b(?:call|hit|query)\s+(?:an?\s+|the\s+|our\s+|my\s+)?(?:\w+\s+)?(?:api|endpoint|url)\b"
    r"|\b(?:fetch|get|pull|load)\b(?=[^.]{0,60}(?:https?://|\bapi\b|\burl\b|\bendpoint\b))"
    r"|(?<![/\w])(?:the|an|our|my|their|a)\s+(?:\w+\s+)?api\b|\brequest\s+to\b",
    re.IGNORECASE,
)
_SHEETS_RE = re.compile(r"\bgoogle\s+sheets?\b|\bspreadsheet\b|\bsheet\b", re.IGNORECASE)
_TABLE_RE = re.compile(r"\bdata\s*tables?\b", re.IGNORECASE)
_SET_RE = re.compile(
    r"\b(?:edit|set)\s+fields?\b|\bset\s+(?:the\s+)?(?:field\s+)?[`\"']?\w+[`\"']?\s+(?:field\s+)?to\b"
    r"|\badd\s+(?:a\s+)?field\b",
    re.IGNORECASE,
)
_ASSIGN_RE = re.compile(
    r"\b(?:set|add\s+(?:a\s+)?field)\s+(?:the\s+)?(?:field\s+)?[`\"']?([a-z_]\w*)[`\"']?\s+(?:field\s+)?(?:to|=)\s+"
    r"[\"“`']?([^\"”`',;.]+?)[\"”`']?(?=$|[,;.]|(?<!\s)\s+(?:and|then)\b)",
    re.IGNORECASE,
)


# A word of a multi-word name ("the beta signups data table"): never an article, a preposition or "row".
_NAME_WORD = r"(?!(?:the|a|an|my|our|to|into|from|in|on|of|for|with|and|or|row|rows|new|google|then|it|its)\b)[\w-]+"
_NAME_WORDS = rf"(?:{_NAME_WORD}\s+){{0,3}}{_NAME_WORD}"


def _table_name(text: str) -> str | None:
    for pattern in (
        r"data\s*table\s+(?:called|named)\s+[\"“']?([\w -]+?)[\"”']?(?=$|[,;.]|\s+and\b)",
        rf"(?:the|a|my|our)\s+[\"“']?({_NAME_WORDS})[\"”']?\s+data\s*table",
        r"data\s*table\s+[\"“']([\w -]+)[\"”']",
    ):
        match = re.search(pattern, text, re.IGNORECASE)
        if match and match.group(1).lower() not in {"a", "the", "new", "my", "our"}:
            return match.group(1).strip()
    return None


def _sheet_name(text: str) -> str | None:
    for pattern in (
        rf"(?:the|a|my|our)\s+[\"“']?({_NAME_WORDS})[\"”']?\s+(?:google\s+)?(?:sheet|spreadsheet)",
        r"(?:sheet|spreadsheet)\s+(?:called|named)\s+[\"“']?([\w -]+?)[\"”']?(?=$|[,;.]|\s+and\b)",
        r"(?:sheet|spreadsheet)\s+[\"“']([\w -]+)[\"”']",
    ):
        match = re.search(pattern, text, re.IGNORECASE)
        if match and match.group(1).lower() not in {"google", "a", "the", "new", "my", "our"}:
            return match.group(1).strip()
    return None


def _github_repo(text: str) -> str | None:
    without_urls = URL_RE.sub(" ", text)
    match = re.search(r"(?<![\w/@.])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?![\w/])", without_urls)
    return match.group(1).rstrip(".") if match else None


def _mention_position(pattern: re.Pattern[str], text: str) -> int:
    match = pattern.search(text)
    return match.start() if match else -1


def parse_action_phrases(text: str) -> list[ActionSpec]:
    """Every action step mentioned in ``text``, in the order the user mentioned them."""
    return [spec for _, spec in action_mentions(text)]


def action_mentions(text: str) -> list[tuple[int, ActionSpec]]:
    """(position, action) for every action step mentioned in ``text``, in order."""
    found: list[tuple[int, ActionSpec]] = []
    channels = CHANNEL_RE.findall(text)
    emails = EMAIL_RE.findall(text)
    urls = [_clean_url(u) for u in URL_RE.findall(text)]
    slack_at = _mention_position(_SLACK_RE, text)
    if slack_at < 0 and channels and re.search(r"\b(?:post|send|notif|messag|ping|alert|shar)\w*", text, re.IGNORECASE):
        slack_at = text.find("#")
    if slack_at >= 0:
        said = re.search(
            r"\b(?:saying|with\s+(?:the\s+)?(?:message|text))\s+[\"“']([^\"”']+)[\"”']", text, re.IGNORECASE
        )
        found.append(
            (
                slack_at,
                ActionSpec(
                    "slack", {"channel": f"#{channels[0]}" if channels else None, "text": said and said.group(1)}
                ),
            )
        )
    gmail_at = _mention_position(_GMAIL_RE, text)
    if gmail_at >= 0:
        subject = re.search(r"\bsubject\s+[\"“']([^\"”']+)[\"”']", text, re.IGNORECASE)
        found.append(
            (gmail_at, ActionSpec("gmail", {"to": emails[0] if emails else None, "subject": subject and subject[1]}))
        )
    notion_at = _mention_position(_NOTION_RE, text)
    if notion_at >= 0:
        title = re.search(r"\b(?:titled|with\s+(?:the\s+)?title)\s+[\"“']([^\"”']+)[\"”']", text, re.IGNORECASE)
        found.append((notion_at, ActionSpec("notion", {"title": title.group(1) if title else None})))
    github_at = _mention_position(_GITHUB_RE, text)
    if github_at >= 0:
        reading_issues = re.search(
            r"\b(?:new|open|list|get|fetch|read|latest|recent|all)\b[^.]{0,25}\b(?:github\s+)?issues\b",
            text,
            re.IGNORECASE,
        )
        operation = "getAll" if reading_issues else "create"
        found.append((github_at, ActionSpec("github", {"repo": _github_repo(text), "operation": operation})))
    http_at = _mention_position(_HTTP_RE, text)
    if http_at < 0 and urls:
        http_at = text.find(urls[0])
    if http_at >= 0:
        method = "POST" if re.search(r"\bPOST\b|\bpost\s+(?:it|them|the\s+\w+)\s+to\s+https?://", text) else "GET"
        found.append((http_at, ActionSpec("http", {"url": urls[0] if urls else None, "method": method})))
    sheets_at = _mention_position(_SHEETS_RE, text)
    if sheets_at >= 0:
        found.append((sheets_at, ActionSpec("sheets", {"document": _sheet_name(text)})))
    table_at = _mention_position(_TABLE_RE, text)
    if table_at >= 0:
        reading = re.search(
            r"\b(?:read|get|fetch|load|look\s+up|query|pull)\b[^.]{0,40}\bdata\s*table|\bfrom\s+(?:the\s+)?[\"“']?[\w-]+"
            r"[\"”']?\s+data\s*table",
            text,
            re.IGNORECASE,
        )
        operation = "get" if reading else "insert"
        found.append((table_at, ActionSpec("datatable", {"table": _table_name(text), "operation": operation})))
    set_at = _mention_position(_SET_RE, text)
    if set_at >= 0:
        assignments = [[name, value.strip()] for name, value in _ASSIGN_RE.findall(text)]
        found.append((set_at, ActionSpec("set", {"assignments": assignments})))
    found.sort(key=lambda item: item[0])
    return found


# --- whole build requests ---------------------------------------------------------------------


@dataclass
class BuildSpec:
    """A build request, as far as the vocabulary understood it."""

    trigger: TriggerSpec | None = None
    filter: FilterSpec | None = None
    actions: list[ActionSpec] = field(default_factory=list)
    error_handling: ErrorHandlingSpec | None = None
    name: str | None = None
    wants_plan: bool = False
    unparsed: list[str] = field(default_factory=list)
    """Clauses the vocabulary did not cover (reported to the user, never guessed at)."""
    filter_after: int = 0
    """How many action steps run before the IF: those up to the last data-fetching step mentioned before the
    filter ("fetch the status and alert #ops if status is down" = 1), else 0 (right after the trigger)."""

    @property
    def set_steps(self) -> list[ActionSpec]:
        """The Edit Fields steps of the request."""
        return [a for a in self.actions if a.kind == "set"]

    @property
    def action_steps(self) -> list[ActionSpec]:
        """The steps that act (every step but Edit Fields)."""
        return [a for a in self.actions if a.kind != "set"]


_KNOWN_WORDS_TEXT = """
post send email mail gmail notify message ping alert share create open file add append insert save store write log
record call fetch get read pull load query hit request set edit filter run trigger start build make want need use
continue handle keep only put every each daily nightly hourly weekly when whenever if on at with in for from via
using called named it them this that these a an the me us i we my our please thank thanks workflow slack notion
github google http https api data webhook form manual manually schedule also then and or so but just new one plus
after before once there here is are be should would could can will to of by as
"""
# Words that may open a clause the grammar understood (verbs of the vocabulary, connectives, triggers).
_KNOWN_WORDS = frozenset(_KNOWN_WORDS_TEXT.split())
_UNPARSED_FILLER_RE = re.compile(
    r"^(?:(?:please|then|and|also|first|next|finally|that|which|to|it|so|i\s+want\s+(?:it\s+)?to|"
    r"(?:can\s+you\s+)?(?:build|create|make|set\s+up)\s+(?:me\s+)?(?:an?\s+)?(?:new\s+)?workflow"
    r"(?:\s+(?:that|which|to))?)\s+)*",
    re.IGNORECASE,
)


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and word[: -len(suffix)] in _KNOWN_WORDS:
            return word[: -len(suffix)]
    return word


def unparsed_parts(text: str) -> list[str]:
    """Clauses of a build request that start with a verb outside the vocabulary and mention no action.

    "checks the weather in Lisbon" is reported back as not understood instead of silently dropped;
    content words ("the sales summary") inside a clause the grammar did understand are not flagged.
    """
    parts: list[str] = []
    # Dots inside addresses and URLs are not sentence ends.
    text = EMAIL_RE.sub("someone@example", URL_RE.sub("https://url", text))
    # ``(?<!\s)``: a separator starts where its whitespace does (a long run of spaces was quadratic).
    for raw in re.split(r"(?<!:/)(?<!@example)[.;!?\n]+(?!\w)|,\s*|(?<!\s)\s+(?:and|then)\s+", text):
        clause = _UNPARSED_FILLER_RE.sub("", raw.strip())
        words = re.findall(r"[A-Za-z][\w'-]*", clause)
        if len(words) < 2 or _stem(words[0]) in _KNOWN_WORDS:
            continue
        # A schedule inside the clause does not make its verb understood ("checks the weather every morning").
        if parse_action_phrases(clause) or parse_filter(clause):
            continue
        parts.append(clause.strip())
    return parts


def _is_source(action: ActionSpec) -> bool:
    """A step that fetches data a later filter can test (an HTTP GET, reading a table or issues)."""
    p = action.params
    return (
        (action.kind == "http" and p.get("method") == "GET")
        or (action.kind == "datatable" and p.get("operation") == "get")
        or (action.kind == "github" and p.get("operation") == "getAll")
    )


def _filter_after(text: str, flt: FilterSpec | None) -> int:
    """The filter tests data: it goes after the last data-fetching step mentioned before it, else first."""
    if flt is None:
        return 0
    steps = [(position, action) for position, action in action_mentions(text) if action.kind != "set"]
    sources = [i for i, (position, action) in enumerate(steps) if position < flt.position and _is_source(action)]
    return sources[-1] + 1 if sources else 0


# An unquoted name starts with a capital or a digit and runs to the end of its clause: "…, call it Beta
# signups digest", "a workflow named Weekly KPIs that posts …". Lower-case "called by …" is never a name.
UNQUOTED_NAME_RE = re.compile(
    _NOT_OTHER_THING + r"\b(?i:call\s+it|name\s+it|called|named)\s+(?![\"“'])([A-Z0-9][\w'&-]*(?:\s+[\w'&-]+)*?)"
    r"(?=\s*(?:$|[,.;:!?\n(]|\s(?i:that|which|who|to|every|each|when|whenever|then|on|at|if|only)\b|"
    r"\s(?i:and)\s+(?i:post|send|email|run|notify|alert|then|also|make|add|fetch|get|create|append|insert|save|"
    r"write|ping|message|call)\b))"
)


def _name_match(text: str) -> re.Match[str] | None:
    return QUOTED_NAME_RE.search(text) or UNQUOTED_NAME_RE.search(text)


def parse_name(text: str) -> str | None:
    """``called "X"`` / ``named "X"`` / ``call it "X"``, or the same unquoted ("call it Beta signups digest")."""
    match = _name_match(text)
    return match.group(1).strip() if match else None


def _without_name(text: str) -> str:
    """``text`` without its naming phrase, so a name ("Daily Slack report") is not read as steps."""
    match = _name_match(text)
    return text if match is None else text[: match.start()] + " " + text[match.end() :]


def parse_build(text: str) -> BuildSpec:
    """Parse a build request: trigger, filter, actions, error handling, name."""
    name = parse_name(text)
    body = _without_name(text)
    error_handling, body = parse_error_handling(body)
    flt = parse_filter(body)
    return BuildSpec(
        trigger=parse_trigger(body),
        filter=flt,
        filter_after=_filter_after(body, flt),
        actions=parse_action_phrases(body),
        error_handling=error_handling,
        name=name,
        unparsed=unparsed_parts(body),
        wants_plan=bool(re.search(r"\b(?:a|the|your)\s+plan\b|\bplan\s+(?:it\s+)?first\b", text, re.IGNORECASE)),
    )


def split_changes(text: str) -> list[str]:
    """Split a change request into its listed changes (``1. ...`` / ``2) ...`` / ``- ...``), in order.

    A message that is not a list is one change request (it may still carry several parameters, such
    as a channel and a time, which the edit applies together).
    """
    items = re.split(r"(?:^|\n|\s)(?:\d{1,2}[.)]|[-*•])\s+", text)
    listed = [item.strip() for item in items[1:] if item.strip()]
    if len(listed) >= 2:
        return listed
    return [text.strip()]
