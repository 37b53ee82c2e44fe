"""Credential notes: engage, defer or pick a credential card per service, or name one meant to fail.

A piece is about credentials when it says so ("credential", "connect", "account", "log in", "token")
or when the note is about credentials and the piece names a service (or "it", "both", "everything")
with something to do: engage ("connect", "hook up", "set up", "authorise", "do the Sheets one"),
defer ("later", "skip", "hold off on", "park", "can wait", "not now", "not ready to connect"), pick a
named one ("the one called Ops Slack", a quoted name), create a new one ("a fresh token"), or one
meant to fail ("expired", "revoked", "doesn't work", "on purpose", "the wrong key").

A service is any the note names (:func:`services_in`): the built-in names, and any other where a
service stands ("hold off on Typeform", "the wrong HubSpot key", "the card for Salesforce", "jira:
connect"), kept as its squashed name and matched against a card's credential type or node type. A
service named with nothing to do with it, or a card named only by a pronoun the note never explains
("leave that card for later"), is not understood — never "any service", never "engage".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from threadcase.case.details import detail_kind
from threadcase.case.directives import Credential, Directive, Trigger
from threadcase.case.note_phrasings import RATIONALE, SERVICE, SERVICE_TYPES, VERB_START
from threadcase.case.note_text import QUOTE, unquote

__all__ = ["is_credential", "read_credential", "services_in"]

CARD_WORDS = re.compile(
    r"\b(?:card|credentials?|creds?|connect\w*|account|sign[- ]?in|log[- ]?in|oauth|auth\w*|set ?up wizard|tokens?)\b",
    re.IGNORECASE,
)
ENGAGE = re.compile(
    r"\b(?:engage\w*|set (?:[\w'-]+ )?up|setup|connect\w*|use|pick|select|choose|create|add|fill(?: it)?(?: in)?|"
    r"hook (?:[\w'-]+ )?up|link|authori[sz]e|sign (?:in|up)|log ?in|provide|enter|complete|accept|configure|"
    r"go through|do|make)\b",
    re.IGNORECASE,
)
_STRICT_ENGAGE = re.compile(
    r"\b(?:engage|connect\w*|hook (?:[\w'-]+ )?up|set (?:[\w'-]+ )?up|configure|authori[sz]e|link|log ?in|sign in|"
    r"defer)\b",
    re.IGNORECASE,
)
DEFER = re.compile(
    r"\b(?:later|defer\w*|skip\w*|not now|postpone\w*|for now|for the moment|ignore|dismiss|hold off|put off|"
    r"can wait|wait|not yet|another time|come back to|park|no (?:[\w-]+ ){0,2}(?:creds?|credentials?)|(?<=\s)no\s*$|"
    r"(?:not|aren't|are not|isn't|is not) ready to (?:connect|set|add|link|hook)|no need to (?:connect|set|add)|"
    r"(?:leave|keep) (?:[\w'-]+ ){0,3}?(?:unconnected|disconnected|alone|for later|for now|unset|empty|blank|"
    r"open|out|aside)|(?:don't|do not|won't|will not|never|refuse to|decline to) (?:bother|set|connect|engage|use|"
    r"add|create|provide|link|hook|fill))\b",
    re.IGNORECASE,
)
NEW = re.compile(
    r"\b(?:new|fresh|another|brand[- ]new|separate|second)\s+(?:[\w-]+\s+)?(?:one|credential|account|connection|"
    r"token|key|login)\b|"
    r"\bcreate (?:one|a credential|it|a new)\b|\bmake it a new one\b",
    re.IGNORECASE,
)
BROKEN = re.compile(
    r"\b(?:should ?n[o']t (?:authenticate|work|connect|pass)|(?:does|do|will|would) ?n[o']t (?:authenticate|work)|"
    r"does not (?:authenticate|work)|not authenticate|invalid|broken|expired|revoked|bad|wrong|should fail|"
    r"meant to fail|supposed to fail|expected to fail|designed to fail|fails?|failing|on purpose|deliberately|"
    r"intentionally|outdated|stale|dead|rejected|won't work|will not work|doesn't work|not work(?:ing)?|"
    r"(?:not|no longer|isn't|is not) valid)\b",
    re.IGNORECASE,
)
AUTO = re.compile(r"\b(?:auto(?:matic(?:ally)?)?[- ]?(?:setup|set ?up)|automatic(?:ally)?|auto|one[- ]click)\b", re.I)
NAMED = re.compile(r"\b(?:named|called)\s+([A-Z][\w-]*(?:\s+[A-Z0-9(][\w)-]*)*)")
PRONOUN = re.compile(
    r"\b(?:it|them|both|all|everything|anything|each|one|the card|the ones?|(?:that|this) (?:card|one|credential))\b",
    re.IGNORECASE,
)
_ABOUT = re.compile(
    r"\b(?:credential\w*|creds?|connect\w*|unconnected|account|sign[- ]?in|log[- ]?in|oauth|tokens?)\b", re.IGNORECASE
)
_THAT = re.compile(
    r"\b(?:(?:that|this|those|these) (?:card|one|credential|account|token)s?|it|them|that|this)\b", re.IGNORECASE
)
_SECRET = re.compile(r"\b(?:keys?|secrets?|passwords?)\b", re.IGNORECASE)

# --- services a note names: the built-in names, and any other the note gives in a credential's place ---

_GENERIC = frozenset(
    """it them that this these those one ones both all everything anything each existing new fresh another separate
    second same other wrong bad broken invalid expired expire revoked outdated stale dead deliberately intentionally
    real working test their our my your a an the its his her any some every credential credentials cred creds token
    tokens key keys api account accounts card cards login connection connections details secret password access
    integration service services oauth setup it's shared team default usual old current right proper valid
    personal company work main prod production staging sandbox dummy fake sample expected given brand-new
    brandnew yourself myself ourselves themselves himself herself you me us him""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words that never name a service ("the wrong key", "our existing credential")."""
_NAME_TOKEN = r"[A-Za-z][\w.+-]*"
_CONNECTING = r"(?:connect(?:ing)?|hook(?:ing)? up|link(?:ing)?|authori[sz]e|log ?in to|sign in to|sign into)"
_ACTING = r"(?:set(?:ting)? up|engage|defer|skip|postpone|park|hold off on|holding off on|put off|leave|configure)"
_NAMES = (
    # "connect jira": a connecting verb's object is a service, in any casing
    re.compile(
        rf"\b(?i:{_CONNECTING})\s+(?i:(?:the|my|our|your|their|a|an)\s+)?(?P<name>{_NAME_TOKEN}(?:\s+[A-Z][\w.+-]*){{0,2}})"
    ),
    # "hold off on Typeform", "park Mailchimp for now", "set up Postgres": a name, capitalised ("set up a
    # daily report" sets up no service)
    re.compile(
        rf"\b(?i:{_ACTING})\s+(?i:(?:the|my|our|your|their|a|an)\s+)?(?P<name>[A-Z][\w.+-]*(?:\s+[A-Z][\w.+-]*){{0,2}})"
    ),
    # "the card for Salesforce", "no creds for gmail", "not now for confluence"
    re.compile(
        rf"\b(?i:card|credentials?|creds?|token|key|account|login|connection|not now|later|no)\s+(?i:for|to|with)\s+"
        rf"(?i:(?:the|my|our|your|their)\s+)?(?P<name>{_NAME_TOKEN}(?:\s+[A-Z][\w.+-]*){{0,2}})",
    ),
    # "typeform: wrong key on purpose", "hubspot later", "slack: connect"
    re.compile(
        rf"^(?P<name>{_NAME_TOKEN}(?:\s+[A-Z][\w.+-]*)?)\s*(?::|->|→|=|\s(?=(?i:later|now|not now|skip|defer|"
        rf"connect|yes|no)\s*$))",
    ),
)
_BEFORE_CARD_WORD = re.compile(
    r"\b(?:credentials?|creds?|key|api key|token|account|login|connection|card|oauth|integration)\b", re.IGNORECASE
)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _service(name: str) -> str | None:
    """A name's service key: a built-in alias ("sheets" -> ``googlesheets``), else the name squashed
    (spaces and punctuation out: "Google Sheets" ~ ``googleSheetsOAuth2Api``); None for generic words."""
    words = [w for w in re.split(r"[\s]+", name.strip(" .,;:!?'\"")) if w]
    while words and (words[0].lower() in _GENERIC or re.fullmatch(r"[a-z]+ing", words[0])):
        words = words[1:]
    while words and words[-1].lower() in _GENERIC:
        words = words[:-1]
    if not words or any(w.lower() in _GENERIC for w in words):
        return None
    joined = " ".join(words)
    if VERB_START.match(joined) and not SERVICE.fullmatch(joined):
        return None  # "approve later": a verb, not a service
    known = SERVICE.fullmatch(joined)
    if known is not None:
        return SERVICE_TYPES[joined.lower()]
    squashed = _squash(joined)
    if len(squashed) < 3 or detail_kind(joined) is not None or squashed in _NOT_SERVICES:
        return None
    return squashed


_NOT_SERVICES = frozenset(
    """later now yes no skip defer connect manually automatically hand them it that first""".split()  # noqa: SIM905 - a word list reads better as text
)


def services_in(text: str) -> tuple[str, ...]:
    """The services a piece names: the built-in names anywhere, and any other name where a credential's
    service stands ("connect Jira", "the Typeform key", "the card for Salesforce", "hubspot: later")."""
    found = {SERVICE_TYPES[s.lower()] for s in SERVICE.findall(text)}
    for pattern in _NAMES:
        for m in pattern.finditer(text):
            service = _service(m.group("name"))
            if service is not None:
                found.add(service)
    for m in _BEFORE_CARD_WORD.finditer(text):
        # "the wrong Typeform key", "a deliberately invalid Stripe key": the words just before it.
        before = re.findall(_NAME_TOKEN, text[: m.start()])[-3:]
        taken: list[str] = []
        for word in reversed(before):
            if word.lower() in _GENERIC or (taken and not word[:1].isupper()):
                break
            taken.insert(0, word)
        service = _service(" ".join(taken)) if taken else None
        if service is not None:
            found.add(service)
    return tuple(sorted(found))


_SERVICE_OBJECT = re.compile(
    r"\b(?:skip|defer|postpone|hold off on|put off|leave|engage|do)\s+(?:the\s+)?(?:"
    + SERVICE.pattern[3:-3]
    + r")\b(?!\s+(?:step|node|post|message|part|branch|notification))",
    re.IGNORECASE,
)


def credential_note(protected: str) -> bool:
    """Whether a note is about credentials: "skip Gmail" in it is a credential deferral."""
    if CARD_WORDS.search(protected) or _SERVICE_OBJECT.search(protected):
        return True
    return bool(services_in(protected) and _STRICT_ENGAGE.search(protected))


_SAYING = re.compile(r"^(?:mention|say|explain|point out|note|remark|complain|ask)\b", re.IGNORECASE)


def is_credential(piece: str, trigger: Trigger, in_credential_note: bool) -> bool:
    if _SAYING.match(piece) and not BROKEN.search(piece):
        return False  # "mention that the API needs a bearer token": words to say
    if _SECRET.search(piece) and BROKEN.search(piece) and services_in(piece):
        return True  # "give it the wrong Typeform key": a credential meant to fail
    if trigger.event == "question" and not _ABOUT.search(piece):
        return False  # "if it asks for the token, say you'll add it later": the question's answer
    if RATIONALE.match(piece) and not BROKEN.search(piece) and not DEFER.search(piece):
        return False  # "we'll connect it ourselves": why, not what the user does now
    if _ABOUT.search(piece) and (
        services_in(piece) or ENGAGE.search(piece) or DEFER.search(piece) or BROKEN.search(piece)
    ):
        return True
    if not (trigger.event == "credential-card" or in_credential_note):
        return False
    if detail_kind(piece) is not None and not services_in(piece) and not PRONOUN.search(piece):
        return False  # "fill in the channel with #ops" on a setup card is an answer, not a credential
    about = services_in(piece) or PRONOUN.search(piece) or trigger.event == "credential-card"
    return bool(about and (ENGAGE.search(piece) or DEFER.search(piece) or BROKEN.search(piece)))


def read_credential(
    piece: str,
    trigger: Trigger,
    clause: str,
    text: Callable[[str], str],
    directives: list[Directive],
) -> Credential | Literal[True] | None:
    """The credential directive a piece says; True when it only adds to the one before ("…, but the
    credential does not authenticate"); None when it points at a card the note never named ("leave that
    card for later" with no service before it)."""
    words = text(piece)
    names = tuple(unquote(q) for q in QUOTE.findall(words)) + tuple(m.group(1) for m in NAMED.finditer(words))
    services = services_in(piece) or services_in(" ".join(names))
    previous = next((d for d in reversed(directives) if isinstance(d, Credential)), None)
    if not services:
        card = trigger.topic if trigger.event == "credential-card" else ()
        services = previous.services if previous is not None and previous.services else card
        if not services and previous is None and trigger.event != "credential-card" and _THAT.search(piece):
            return None
    broken = bool(BROKEN.search(piece))
    defer = bool(DEFER.search(re.sub(r"\b(?:wait(?:ing)? for|until later)\b", " ", piece, flags=re.I))) or bool(
        re.search(r"\buntil later\b", piece, re.I)
    )
    # "it should fail the connection test" names no action: "connection" is not "connect".
    acting = re.sub(r"\bconnection tests?\b", " ", piece, flags=re.IGNORECASE)
    engage = bool(ENGAGE.search(acting)) and not defer
    if (
        not services_in(piece)
        and NEW.search(piece)
        and previous is not None
        and previous.action == "engage"
        and not previous.new
    ):
        updated = previous.model_copy(update={"new": True, "clause": f"{previous.clause}, {clause}"})
        directives[directives.index(previous)] = updated
        return True
    if broken and not services_in(piece) and not names and previous is not None and previous.action == "engage":
        # "connect Sheets, but use a credential that will fail": a property of the one just engaged.
        engage = False
    if broken and not engage and not defer and previous is not None and previous.action == "engage":
        updated = previous.model_copy(update={"working": False, "clause": f"{previous.clause}, {clause}"})
        directives[directives.index(previous)] = updated
        return True
    required = trigger.required if trigger.event == "credential-card" else False
    auto = bool(AUTO.search(piece)) and not re.search(r"\bmanual|\bby hand\b", piece, re.I)
    if not (engage or defer or broken or names or auto or NEW.search(piece)):
        return None  # a credential named with nothing to do with it: engaging it would be a guess
    return Credential(
        clause=clause,
        trigger=Trigger(event="credential-card", topic=services, required=required),
        services=services,
        action="defer" if defer else "engage",
        option="auto" if auto else "manual",
        names=names,
        new=bool(NEW.search(piece)),
        working=not broken,
    )
