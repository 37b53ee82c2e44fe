"""Director notes: the ``[bracketed]`` text in a scripted user turn that says how the user behaves.

A note is never spoken. This module splits every authored user turn into what the user *says* and the
notes that *direct* them, keeps track of which scripted turns have been delivered, and answers the
questions the rest of the proxy asks about the notes:

- is a direction pending (an unsent scripted turn carries a note, or the opener carries standing
  notes)? — the deterministic short-circuits step aside for the proxy when one is;
- which questions does a note tell the user to decline (answer skipped, never an invented value)?
- does a note engage a credential card, naming which credential, and should it authenticate?
- is there an ordered list of changes to send one at a time?

The note interpretation here is deliberately keyword-based and conservative: it is what the scripted
(no-model) proxy follows, and the documented weaker sibling of the model proxy, which reads the notes
itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CredentialDirection",
    "Script",
    "ScriptTurn",
    "split_notes",
    "strip_notes",
]


class ScriptTurn(BaseModel):
    """One authored turn, split into spoken text and director notes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    """Position in the case's ``conversation``."""
    role: str
    raw: str
    spoken: str
    """The text with every note removed and whitespace tidied: what the user actually says."""
    notes: tuple[str, ...] = ()
    """The notes' inner text, without brackets."""

    @property
    def has_notes(self) -> bool:
        return bool(self.notes)


def split_notes(text: str) -> tuple[str, list[str]]:
    """Split ``text`` into (spoken, notes).

    Brackets nest (``[say [x] later]`` is one note). ``[label](url)`` is a markdown link, which is
    spoken, not a note. An unbalanced ``[`` is spoken as is (the schema rejects those at load).
    """
    spoken: list[str] = []
    notes: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "[":
            spoken.append(ch)
            i += 1
            continue
        depth = 0
        j = i
        while j < n:
            if text[j] == "[":
                depth += 1
            elif text[j] == "]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:  # unbalanced: keep verbatim
            spoken.append(text[i:])
            break
        if j + 1 < n and text[j + 1] == "(":  # markdown link
            spoken.append(text[i : j + 1])
        else:
            inner = text[i + 1 : j].strip()
            if inner:
                notes.append(inner)
        i = j + 1
    return _tidy("".join(spoken)), notes


def strip_notes(text: str) -> str:
    """``text`` with every director note removed (what may reach the agent)."""
    return split_notes(text)[0]


_RUNS_OF_BLANKS = re.compile(r"[ \t]{2,}")
_RUNS_OF_NEWLINES = re.compile(r"\n{3,}")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:!?])")


def _tidy(text: str) -> str:
    lines = [_RUNS_OF_BLANKS.sub(" ", line).strip() for line in text.splitlines()]
    out = "\n".join(lines)
    out = _RUNS_OF_NEWLINES.sub("\n\n", out)
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", out).strip()


# --- note interpretation ------------------------------------------------------------------------

_DECLINE = re.compile(
    r"\b(declin\w*|refus\w*|withhold\w*|rather not|prefer not|not (?:to )?(?:say|tell|give|share|provide|answer)"
    r"|(?:don'?t|do not|won'?t|will not|never) (?:say|tell|give|share|provide|answer|know|reveal)"
    r"|without (?:giving|saying|sharing|providing)|skip(?:s|ped)? (?:the |that |this )?question)\b",
    re.IGNORECASE,
)
_CREDENTIAL_TOPIC = re.compile(
    r"\b(credential\w*|connect\w*|account\w*|sign[- ]?in|log[- ]?in|authenticat\w*|oauth|api key|token"
    r"|card|auth)\b",
    re.IGNORECASE,
)
_ENGAGE = re.compile(
    r"\b(engage\w*|set (?:it |them |this |that )?up|connect|use|pick|select|choose|create|add|fill|manual\w*"
    r"|provide|enter)\b",
    re.IGNORECASE,
)
_DEFER = re.compile(
    r"\b(later|defer\w*|skip\w*|not now|postpone\w*|(?:don'?t|do not|won'?t|never|refuse to) "
    r"(?:set|connect|engage|use|add|create|provide))\b",
    re.IGNORECASE,
)
_NOT_WORKING = re.compile(
    r"\b(should ?n[o']t (?:authenticate|work)|not authenticate|does ?n[o']t (?:work|authenticate)"
    r"|invalid|broken|expired|revoked|wrong|fails?|failing|bad)\b",
    re.IGNORECASE,
)
_AUTO = re.compile(r"\b(auto(?:matic(?:ally)?)?[- ]?setup|automatic\w*|auto)\b", re.IGNORECASE)
_ONE_AT_A_TIME = re.compile(
    r"\b(one (?:at a time|by one|after (?:the )?(?:other|another))|each (?:after|once)|separately"
    r"|in separate messages|one per message)\b",
    re.IGNORECASE,
)
_SAY = re.compile(
    r"(?:^|[:;.,]\s*|\bthen\s+|\band\s+)(?:say|reply|respond|tell (?:it|them|the assistant|the agent))\s+"
    r"(?:that\s+)?[\"“']?(?P<text>[^\"”.;\]]+)",
    re.IGNORECASE,
)
_RUN_WORKFLOW = re.compile(
    r"\b(?:run|execute|trigger)s?\b[^.;\]]*?\b(?:workflow|it)\b[^.;\]]*?"
    r"\b(?:yourself|myself|themselves|for real|before (?:answering|replying|you answer|you reply))",
    re.IGNORECASE,
)
_REPEATS = {"twice": 2, "two times": 2, "three times": 3, "thrice": 3}
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$")
_INLINE_ITEMS = re.compile(r"(?:^|\s)(\d+)[.)]\s+")
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]{2,80})[\"'”’]")
_STOP = frozenset(
    """a an the if when asked ask asks for to of and or but it them they this that these those is are be
    about user users agent assistant say said says tell give share provide answer know reveal question
    questions should would will won't don't do not never any value values decline declines declined refuse
    refuses refused withhold withholds rather prefer without giving saying sharing providing skip skipped
    what which who whom where how their there then than just only also again re-asked reasked re asked
    firm hold holds holding insist insists even time times first second later keep keeps""".split()  # noqa: SIM905 - a word list reads better as text
)

# Service words a note may use, mapped to a fragment of the credential type they mean.
_SERVICE_TYPES: dict[str, str] = {
    "slack": "slack",
    "gmail": "gmail",
    "email": "gmail",
    "notion": "notion",
    "github": "github",
    "sheet": "googlesheets",
    "sheets": "googlesheets",
    "drive": "googledrive",
    "teams": "microsoftteams",
    "openai": "openai",
    "gemini": "googlepalm",
    "whatsapp": "whatsapp",
    "bearer": "httpbearer",
    "header": "httpheader",
    "basic": "httpbasic",
}


class CredentialDirection(BaseModel):
    """What a note says about one credential card."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engage: bool
    """True: set the credential up (manual); False: defer it."""
    auto: bool = False
    """The note asks for automatic setup (inert without a browser: the run stalls)."""
    working: bool = True
    """False when the note says the credential should not authenticate."""
    names: tuple[str, ...] = ()
    """Quoted credential names the note mentions (pick the matching existing one)."""
    services: tuple[str, ...] = ()
    """Type fragments the note is about (lower-case); empty = any type."""
    note: str = ""

    def applies_to(self, credential_type: str) -> bool:
        t = credential_type.lower()
        return not self.services or any(s in t for s in self.services)


def _repeats(note: str) -> int:
    lowered = note.lower()
    return next((n for word, n in _REPEATS.items() if word in lowered), 1)


def _sentences(note: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?;])\s+|\n", note) if p.strip()]
    return parts or [note]


def _topic_words(note: str) -> list[str]:
    words = re.findall(r"[a-zA-Z][a-zA-Z0-9_-]{2,}", note.lower())
    return [w for w in words if w not in _STOP and not _DECLINE.fullmatch(w)]


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 4 else word


def is_credential_note(note: str) -> bool:
    return bool(_CREDENTIAL_TOPIC.search(note))


def is_run_note(note: str) -> bool:
    """The note tells the user to run the saved workflow themselves ("[run the workflow yourself
    before answering]"): the scripted user runs the last saved one before that turn's message."""
    return bool(_RUN_WORKFLOW.search(note))


def is_decline_note(note: str) -> bool:
    return bool(_DECLINE.search(note)) and not is_credential_note(note)


def credential_direction(note: str) -> CredentialDirection | None:
    """Interpret one note as a credential direction, or None when it is not about credentials."""
    if not is_credential_note(note):
        return None
    lowered = note.lower()
    services = tuple(sorted({frag for word, frag in _SERVICE_TYPES.items() if re.search(rf"\b{word}\b", lowered)}))
    names = tuple(m.group(1).strip() for m in _QUOTED.finditer(note))
    auto = bool(_AUTO.search(note)) and "manual" not in lowered
    engage = bool(_ENGAGE.search(note)) and not _DEFER.search(note)
    return CredentialDirection(
        engage=engage or auto,
        auto=auto,
        working=not _NOT_WORKING.search(note),
        names=names,
        services=services,
        note=note,
    )


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


@functools.lru_cache(maxsize=4096)
def _script_turn(index: int, role: str, text: str) -> ScriptTurn:
    # Every iteration of a case parses the same authored turns: parsed once, the frozen turn is shared
    # (keyed by its whole content, so it cannot go stale; a Script only ever replaces its own list's items).
    spoken, notes = split_notes(text)
    return ScriptTurn(index=index, role=role, raw=text, spoken=spoken, notes=tuple(notes))


class Script:
    """The case's authored conversation as the simulated user's script, with delivery tracking.

    The opener (``conversation[0]``) is delivered by the harness before the proxy starts. Assistant
    turns are reference for the proxy only and are never sent.
    """

    def __init__(self, turns: Sequence[ScriptTurn]) -> None:
        if not turns:
            raise ValueError("a script needs at least the opening turn")
        self.turns: list[ScriptTurn] = list(turns)
        self._sent: set[int] = {self.turns[0].index}
        self._queue: list[str] = []
        """Items of a one-at-a-time change list still to send."""
        self._run_requested = False
        """A delivered turn's note asked the user to run the workflow; not yet acted on."""

    @classmethod
    def from_texts(cls, turns: Sequence[tuple[str, str]]) -> Script:
        """Build from ``(role, text)`` pairs, the first being the opener."""
        return cls([_script_turn(index, role, text) for index, (role, text) in enumerate(turns)])

    # --- delivery ------------------------------------------------------------------------------

    @property
    def opener(self) -> ScriptTurn:
        return self.turns[0]

    def unsent_user_turns(self) -> list[ScriptTurn]:
        return [t for t in self.turns[1:] if t.role == "user" and t.index not in self._sent]

    def mark_sent(self, index: int) -> None:
        self._sent.add(index)

    def utterances(self, turn: ScriptTurn) -> list[str]:
        """What the scripted user says for ``turn``, in order (one message each).

        - A one-at-a-time note over a numbered list: the list's items, one per message — the list may
          be spoken or sit inside the note itself (n8n cases often write "[ask for these changes one
          at a time: 1. ... 2. ...]"); only the items are said, never the note's instructions.
        - Otherwise the spoken text.
        - A note-only turn whose note tells the user to say something ("...: say it is blocking the
          release", "twice") says that, as often as asked.
        """
        if any(_ONE_AT_A_TIME.search(n) for n in turn.notes):
            items = split_items(turn.spoken)
            if len(items) < 2:
                items = next((found for n in turn.notes if len(found := split_items(n)) >= 2), [])
            if len(items) >= 2:
                return items
        if turn.spoken:
            return [turn.spoken]
        said: list[str] = []
        for note in turn.notes:
            for clause in _SAY.finditer(note):
                text = clause.group("text").strip().rstrip(",")
                if text:
                    said.extend([text[0].upper() + text[1:] + "."] * _repeats(note))
        return said

    def consume_remaining(self) -> list[str]:
        """Deliver every remaining scripted user turn at once; returns what the user would have said."""
        texts = list(self._queue)
        self._queue.clear()
        for turn in self.unsent_user_turns():
            self._deliver(turn)
            texts.extend(self.utterances(turn))
        return [t for t in texts if t]

    def _deliver(self, turn: ScriptTurn) -> None:
        self._sent.add(turn.index)
        if any(is_run_note(n) for n in turn.notes):
            self._run_requested = True

    def take_run_request(self) -> bool:
        """Whether a delivered turn's note asked the user to run the workflow themselves (once: it is
        cleared). A note-only turn's request carries over to the next message said."""
        requested, self._run_requested = self._run_requested, False
        return requested

    def remaining_spoken(self) -> list[str]:
        """What the user would still say, without delivering it."""
        texts = list(self._queue)
        for turn in self.unsent_user_turns():
            texts.extend(self.utterances(turn))
        return texts

    @property
    def has_more(self) -> bool:
        return bool(self.remaining_spoken())

    def next_scripted_message(self) -> tuple[str, ScriptTurn | None] | None:
        """The next thing the scripted user says, delivering it; None when the script is exhausted.

        A turn with several utterances (see :meth:`utterances`) queues the rest, one per call — each
        sent only after the previous run finished, i.e. after the agent applied it. A turn with
        nothing to say is delivered silently (its notes stay in force) and the next one is tried.
        """
        if self._queue:
            return self._queue.pop(0), None
        for turn in self.unsent_user_turns():
            self._deliver(turn)
            said = self.utterances(turn)
            if said:
                self._queue = said[1:]
                return said[0], turn
        return None

    # --- directions ----------------------------------------------------------------------------

    @property
    def notes(self) -> list[str]:
        return [n for t in self.turns if t.role == "user" for n in t.notes]

    @property
    def pending_direction(self) -> bool:
        """A note still governs what comes: an unsent scripted turn carries one, a change list is being
        delivered, or the opener carries standing notes (it is sent, but its notes were never spoken)."""
        return bool(self._queue) or self.opener.has_notes or any(t.has_notes for t in self.unsent_user_turns())

    def declines(self, question: str) -> bool:
        """A note tells the user to decline answering this question."""
        q = question.lower()
        q_words = {_stem(w) for w in re.findall(r"[a-z][a-z0-9_-]+", q)}
        for note in self.notes:
            if not is_decline_note(note):
                continue
            topics = _topic_words(note)
            if not topics:
                return True
            if any(_stem(t) in q_words or t in q for t in topics):
                return True
        return False

    def credential_directions(self) -> list[CredentialDirection]:
        """Credential directions, one per note sentence: "Connect Slack manually. Leave GitHub for
        later." engages Slack and says nothing about GitHub (which stays deferred by default)."""
        return [d for n in self.notes for part in _sentences(n) if (d := credential_direction(part)) is not None]

    def credential_direction_for(self, credential_type: str) -> CredentialDirection | None:
        """The last note about credentials that applies to this type (later notes win)."""
        matching = [d for d in self.credential_directions() if d.applies_to(credential_type)]
        return matching[-1] if matching else None

    def delivered_spoken(self) -> str:
        """What the user has said so far (delivered scripted turns), for requirement checks."""
        return "\n".join(t.spoken for t in self.turns if t.role == "user" and t.index in self._sent and t.spoken)

    def spoken_corpus(self) -> str:
        """Everything the user says across the script, for value lookup (never the notes)."""
        return "\n".join(t.spoken for t in self.turns if t.role == "user" and t.spoken)

    def dump(self) -> list[dict[str, object]]:
        """The script for a prompt: each user turn's words, directions and delivery state; assistant
        turns only as the reply the author expected (reference, never sent)."""
        out: list[dict[str, object]] = []
        for t in self.turns:
            if t.role != "user":
                out.append({"turn": t.index, "role": "assistant", "expected_reply": t.spoken})
                continue
            out.append(
                {
                    "turn": t.index,
                    "role": "user",
                    "says": t.spoken,
                    "directions": list(t.notes),
                    "delivered": t.index in self._sent,
                }
            )
        return out
