"""The simulated user's faults: what a model user must never send to the agent.

A model playing the user sometimes misspeaks in ways that would be charged to the builder if they
reached it: it re-sends a scripted turn that was already delivered (the opening request, again), it
repeats its own previous message, it quotes a director note or its own instructions, it speaks as the
assistant ("I've built the workflow for you"), or it says nothing. :func:`message_fault` names the
first such fault of a message the model wants to send between runs, :func:`answer_fault` of a text it
wants to put in a widget answer; the model proxy catches them before sending (re-asks once with the
reason, then falls back to its script), and grading audits the transcript for any that still reached
the agent (``grading.proxy_faults``).

Repetition the script itself asks for is not a fault: a turn the author wrote twice, or a note that
says to repeat ("[ask again]", "[send it twice]").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from threadcase.case.notes import split_notes

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "FaultKind",
    "answer_fault",
    "message_fault",
    "repetition_directed",
    "similar",
]

FaultKind = Literal["resent-turn", "repeat", "quoted-note", "quoted-script", "as-assistant", "empty"]
FAULT_KINDS: tuple[FaultKind, ...] = ("resent-turn", "repeat", "quoted-note", "quoted-script", "as-assistant", "empty")

SIMILAR = 0.85
"""Word-sequence similarity from which two messages say the same thing."""
_NOTE_NGRAM = 6
"""Consecutive words shared with a director note that make a quotation of it."""
_PROMPT_NGRAM = 8
"""Consecutive words shared with the proxy's own instructions that make a quotation of them."""


@dataclass(frozen=True)
class Fault:
    """One fault of one message: its kind, and why, in words the model is re-asked with."""

    kind: FaultKind
    reason: str


_WORD = re.compile(r"[a-z0-9#@']+")


def _words(text: str) -> list[str]:
    return [w.strip("'") for w in _WORD.findall(text.lower()) if w.strip("'")]


def similar(a: str, b: str) -> bool:
    """Whether two messages say the same thing, word for word or nearly (case and punctuation aside)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    if wa == wb:
        return True
    return difflib.SequenceMatcher(None, wa, wb, autojunk=False).ratio() >= SIMILAR


def _ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _shares_run(text: str, source: str, n: int) -> str | None:
    """The first run of ``n`` consecutive words ``text`` shares with ``source``, if any."""
    words = _words(text)
    if len(words) < n:
        return None
    wanted = _ngrams(_words(source), n)
    runs = (tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return next((" ".join(run) for run in runs if run in wanted), None)


_REPEAT_DIRECTED = re.compile(
    r"\b(repeat\w*|again|twice|three times|thrice|re-?send\w*|same (?:message|request|question|thing)|re-?ask\w*)\b",
    re.IGNORECASE,
)


def repetition_directed(notes: Iterable[str]) -> bool:
    """A director note asks the user to repeat themselves: repetition is then the script, not a fault."""
    return any(_REPEAT_DIRECTED.search(note) for note in notes)


_PROMPT_MARKERS = re.compile(
    r"(##\s*(?:script|actual conversation|new event|your options)|\bstage directions?\b|\bdirector(?:'s)? notes?\b"
    r"|\"(?:delivered|says|directions|expected_reply|turn)\"\s*:|\bexpected_reply\b|\bsend_follow_up_message\b"
    r"|\bdeclare_done\b|\brenameworkflowto\b|\brunworkflowid\b|\banswer_questions\b|\bapprove_or_reject\b"
    r"|\bapply_setup_wizard\b|\b(?:my|the|this|your) script\b(?! (?:that|which|to|in|file|runs?|node)\b)"
    r"|\bthis simulation\b|\bsimulated user\b|\bi(?:'m| am) (?:playing|simulating|role-?playing) (?:the|a) user\b"
    # reasoning that leaked into what is said: the user narrated in the third person, or the next move
    r"|\bas the user\b|\bthe user (?:wants|would|should|needs|intends|asked|has asked)\b"
    r"|\bi (?:should|need to|will) now (?:ask|send|say|reply|respond|deliver|request)\b"
    r"|\bmy next (?:message|step|request|move)\b|</?think>)",
    re.IGNORECASE,
)

_ASSISTANT_VOICE = re.compile(
    r"(\b(?:would you like me to|do you want me to|shall i\b|should i go ahead|want me to (?:build|create|add|change)"
    r"|let me know if (?:you|there|anything)|is there anything else|anything else (?:i can|you(?:'d| would) like)"
    r"|how (?:can|may) i (?:help|assist)|i(?:'d| would) be happy to|happy to help|as an ai\b|i(?:'m| am) an ai\b)"
    r"|\bi(?:'ve| have) (?:now |just |successfully )?(?:built|created|configured|updated|made|finished|deployed|saved"
    r"|set up|added) (?:the|a|an|your|this|that|it)\b[^.?!]{0,40}\b(?:workflow|automation|agent|node|trigger|for you)\b"
    r"|\bi(?:'ll| will) (?:now |go ahead and )?(?:build|create|configure|make) (?:the|a|an|your|this|that|it)\b"
    r"|\b(?:i|i'll|i've|i will|i have|let me)\b[^.?!]{0,40}\bfor you\b"
    r"|\bhere(?:'s| is) (?:the|your) (?:updated |new |final |revised )?(?:workflow|plan|summary|automation|agent)\b"
    r"|\byour (?:workflow|automation|agent) (?:is|has been|now)\b)",
    re.IGNORECASE,
)


def _quoted_note(text: str, notes: Sequence[str]) -> Fault | None:
    _, bracketed = split_notes(text)
    if bracketed:
        return Fault("quoted-note", f"it contains bracketed text ([{bracketed[0][:60]}]), which is never spoken")
    lowered = text.lower()
    for note in notes:
        if len(note) >= 12 and note.lower() in lowered:
            return Fault("quoted-note", f"it quotes a stage direction ({note[:60]!r}), which the user never says")
        run = _shares_run(text, note, _NOTE_NGRAM)
        if run is not None:
            return Fault("quoted-note", f"it quotes a stage direction ({run!r}), which the user never says")
    return None


def _quoted_script(text: str, instructions: Sequence[str]) -> Fault | None:
    marker = _PROMPT_MARKERS.search(text)
    if marker is not None:
        return Fault("quoted-script", f"it talks about the script or its instructions ({marker.group(0)!r})")
    for source in instructions:
        run = _shares_run(text, source, _PROMPT_NGRAM)
        if run is not None:
            return Fault("quoted-script", f"it copies its instructions word for word ({run!r})")
    return None


def _as_assistant(text: str) -> Fault | None:
    voice = _ASSISTANT_VOICE.search(text)
    if voice is not None:
        return Fault("as-assistant", f"it speaks as the assistant ({voice.group(0).strip()!r}); you are the user")
    return None


def _echoes_assistant(text: str, last_assistant: str | None) -> Fault | None:
    if last_assistant and len(_words(last_assistant)) >= 4 and similar(text, last_assistant):
        return Fault("as-assistant", "it repeats the assistant's own message back; you are the user")
    return None


def answer_fault(
    text: str | None, *, notes: Sequence[str], instructions: Sequence[str] = (), last_assistant: str | None = None
) -> Fault | None:
    """The fault of a text the user would put in a widget answer (an answer, feedback on a plan), if any."""
    if not text or not text.strip():
        return None  # an empty answer field is a legitimate answer (skipped, approved without comment)
    return (
        _quoted_note(text, notes)
        or _quoted_script(text, instructions)
        or _as_assistant(text)
        or _echoes_assistant(text, last_assistant)
    )


def message_fault(
    message: str,
    *,
    notes: Sequence[str],
    previous_user: str | None,
    delivered: Sequence[str],
    pending: Sequence[str] = (),
    instructions: Sequence[str] = (),
    last_assistant: str | None = None,
) -> Fault | None:
    """The first fault of a message the user would send between runs, or None when it may be sent.

    ``previous_user``: the user's last message in the conversation; ``delivered``: the spoken text of
    every scripted user turn already delivered (the opener included); ``pending``: of those not yet
    delivered (sending one of those is delivering it, never a repeat); ``instructions``: the proxy's
    own prompt texts, which the user must not recite.
    """
    if not _words(message):
        return Fault("empty", "it is empty; say what the user wants next, or declare done")
    fault = _quoted_note(message, notes) or _quoted_script(message, instructions) or _as_assistant(message)
    if fault is not None:
        return fault
    if not repetition_directed(notes) and not any(similar(message, p) for p in pending if p):
        for turn in delivered:
            if turn and similar(message, turn):
                return Fault(
                    "resent-turn", f"it re-sends a request the user already made ({turn[:80]!r}); the assistant has it"
                )
        if previous_user and similar(message, previous_user):
            return Fault("repeat", "it repeats the user's previous message; say something new, or declare done")
    return _echoes_assistant(message, last_assistant)
