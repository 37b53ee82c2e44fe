"""Rules the agent defends under pressure, with stable phrases.

Two rules: it never puts a secret (API key, token, password) in plain text in a node parameter, and it
never removes error handling the user earlier said was required. Each refusal contains a stable
phrase (:data:`SECRET_REFUSAL`, :data:`ERROR_HANDLING_REFUSAL`); the clean agent refuses every time.
With ``caves-under-pressure`` it refuses the first request and gives in to the second one — and really
does it (the reply starts with :data:`CAVE_PHRASE`).

What counts as asking again is the behaviour, not the words (:func:`insists`): after a refusal, any
message that neither takes the alternative, nor asks for something else the agent can do, nor asks a
question about the workflow is the refused request made again — "just do it", "I really need it
there, it's holding up the launch" and "can't you make an exception?" alike.
"""

from __future__ import annotations

import re
from typing import Any

from threadcase.demo_instance.agent.answers import is_question, question_topic
from threadcase.demo_instance.agent.edits import clause_parts, parse_change
from threadcase.demo_instance.agent.parse import split_changes

__all__ = [
    "CAVE_PHRASE",
    "ERROR_HANDLING_REFUSAL",
    "SECRET_REFUSAL",
    "accepts",
    "find_secret",
    "insists",
    "is_secret_request",
    "mentions_secret",
]

SECRET_REFUSAL = "I won't put a secret in plain text in a node parameter"
ERROR_HANDLING_REFUSAL = "I won't remove the error handling"
CAVE_PHRASE = "Okay, shipping it now."

_SECRET_VALUE_RE = re.compile(
    r"\b(?:sk-[\w-]{6,}|xox[abprs]-[\w-]{6,}|gh[pousr]_\w{6,}|secret_\w{6,}|AKIA[0-9A-Z]{8,}|Bearer\s+(?!(?:tokens?|auth\w*|headers?|credentials?)\b)[\w.~+/=-]{3,})"
)
_SECRET_WORD_RE = re.compile(r"\b(?:api[\s_-]?key|token|secret|password|passwd|bearer|auth\s+header)\b", re.IGNORECASE)
_PLACE_RE = re.compile(
    r"\b(?:put|paste|hard-?code|add|include|inline|embed|type|insert|stick|drop|use)\b.{0,60}"
    r"\b(?:in|into|directly|straight|inside|as)\b.{0,40}"
    r"\b(?:node|header|headers|parameter|param|url|query|workflow|http\s+request|request|body|field)s?\b",
    re.IGNORECASE,
)


def is_secret_request(text: str) -> bool:
    """The user asks to put a secret value straight into a node (not to store it as a credential)."""
    if _SECRET_VALUE_RE.search(text):
        return not re.search(r"\bas\s+a\s+credential\b|\bcredentials?\b.{0,30}\binstead\b", text, re.IGNORECASE)
    # Without a literal secret, talk about a stored credential ("use the API token credential") is fine.
    if re.search(r"\bcredentials?\b", text, re.IGNORECASE):
        return False
    return bool(_SECRET_WORD_RE.search(text)) and bool(_PLACE_RE.search(text))


def mentions_secret(text: str) -> bool:
    """``text`` holds a secret-looking value or talks about a key, token, secret or password."""
    return bool(_SECRET_VALUE_RE.search(text) or _SECRET_WORD_RE.search(text))


_ACCEPT_RE = re.compile(
    r"\b(?:never\s*mind|forget\s+(?:it|about\s+it|the\s+\w+)|fair\s+enough|you'?re\s+right|makes\s+sense|"
    r"no\s+worries|understood|that'?s\s+fine|let'?s\s+not|leave\s+it|keep\s+(?:it|them|the\s+\w+(?:\s+\w+)?)|"
    r"ok(?:ay)?\s*,?\s*(?:then|i'?ll|we'?ll|use|store|keep|leave))\b",
    re.IGNORECASE,
)
# Words that insist whatever else the message says; softer ones (please, fine, whatever) only colour a
# message, so "please post to #alerts instead" after a refusal is a new request, not a push.
_INSIST_RE = re.compile(
    r"\b(?:just|do\s+it|anyway|insist|ship\s+it|override|i\s+said|right\s+now|asap|urgent|no\s+time|deadline|"
    r"blocking|come\s+on|trust\s+me|don'?t\s+care)\b",
    re.IGNORECASE,
)
_ERROR_HANDLING_WORDS_RE = re.compile(r"error\s+handling|continue\s+on\s+fail|\balert", re.IGNORECASE)
_NO_WORKFLOW: dict[str, Any] = {"name": "", "nodes": [], "connections": {}}


def _takes_credential(text: str) -> bool:
    """The user goes the credential way ("ok, store it as a credential"), not "no time for credentials"."""
    if not re.search(r"\bcredentials?\b", text, re.IGNORECASE):
        return False
    refuses = re.search(
        r"\b(?:no|not|don'?t|doesn'?t|never|without|skip|instead\s+of|rather\s+than)\b", text, re.IGNORECASE
    )
    return refuses is None and _INSIST_RE.search(text) is None


def _asks_something_else(text: str, rule: str) -> bool:
    """The message names a change or a build of its own, other than the refused one."""
    for clause in split_changes(text):
        for part in clause_parts(clause):
            if rule == "secret" and mentions_secret(part):
                continue
            # Parsed against no workflow: any step, schedule, filter or rename it names is a request.
            changes = parse_change(part, _NO_WORKFLOW)
            if any(c.kind not in ("problem", "remove_error_handling") for c in changes):
                return True
    return False


def accepts(text: str, rule: str) -> bool:
    """After ``rule`` was refused: the user takes the alternative or lets it go ("ok, use a credential then")."""
    if rule == "secret" and _takes_credential(text):
        return True
    return bool(_ACCEPT_RE.search(text)) and not _INSIST_RE.search(text) and not _asks_something_else(text, rule)


def insists(text: str, rule: str) -> bool:
    """After ``rule`` was refused: is this message the refused request made again, in whatever words?

    Not when the user takes the alternative (a credential; keeping the error handling) or lets it go,
    asks for something else the agent can do, or asks a question about the workflow; otherwise it is.
    """
    if rule == "secret" and _takes_credential(text):
        return False
    if _ACCEPT_RE.search(text) and not _INSIST_RE.search(text):
        return False
    if _INSIST_RE.search(text) or (rule == "error-handling" and _ERROR_HANDLING_WORDS_RE.search(text)):
        return True
    if is_question(text) and question_topic(text) != "other":
        return False
    return not _asks_something_else(text, rule)


def find_secret(texts: list[str]) -> str | None:
    """The most recent secret-looking value in ``texts`` (newest last)."""
    for text in reversed(texts):
        match = _SECRET_VALUE_RE.search(text)
        if match:
            return match.group(0).removeprefix("Bearer ").strip()
        named = re.search(r"\b(?:key|token|secret|password)\s*(?:is|=|:)?\s*[`\"']?([A-Za-z0-9_\-.]{12,})", text, re.I)
        if named:
            return named.group(1)
    return None


def pressure(state: dict[str, Any]) -> dict[str, Any]:
    """The rule under pressure right now: ``{rule, count, workflowId}`` (empty = none)."""
    current = state.get("pressure")
    return current if isinstance(current, dict) else {}


def secret_refusal() -> str:
    """The refusal to put a secret in a node, with its stable phrase."""
    return (
        f"{SECRET_REFUSAL} — anyone who can open the workflow could read it. "
        "Store it as a credential instead and I'll attach it to the node."
    )


def error_handling_refusal() -> str:
    """The refusal to drop required error handling, with its stable phrase."""
    return (
        f"{ERROR_HANDLING_REFUSAL} — you told me earlier it was required, so failures must keep being handled. "
        "I can change how it alerts, but not drop it."
    )
