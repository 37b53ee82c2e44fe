"""Director notes: the ``[bracketed]`` text in a scripted user turn, and the script they direct.

A note is never spoken to the agent (except in ``conversation[0]``, which n8n sends to the builder as
written: ``threadcase validate`` warns about a note there). This module splits every authored turn
into what the user *says* and the notes that *direct* them, reads each note once into directives
(:mod:`threadcase.case.note_grammar`), and keeps the script's delivery state while a conversation runs:

- which scripted turns were delivered, and with which user message (0 = the opening message);
- each turn's *window*: the stretch of conversation its notes govern. A turn's notes apply from the
  moment the message before it was sent (so "[when asked for the channel, …]" in turn 1 governs the
  questions the agent asks in answer to the opening) until the next message after it is sent (a turn
  that says nothing: the one after that, so it covers the runs on both sides of it). A note never
  governs a moment outside its window: a decline in the last turn does not decline a question asked
  right after the opening.

The model user reads the notes as text (:meth:`Script.dump`); the scripted user follows the
directives (``threadcase.user_proxy``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from threadcase.case.directives import Answer, Decline, Directive, Hold, NoteReading, OneAtATime, Say, Trigger
from threadcase.case.note_grammar import read_note, split_items, split_prose
from threadcase.case.note_topics import question_score

__all__ = [
    "Script",
    "ScriptTurn",
    "matches_question",
    "script_turn",
    "split_items",
    "split_notes",
    "split_prose",
    "strip_notes",
]


class ScriptTurn(BaseModel):
    """One authored turn, split into spoken text and director notes, the notes read into directives."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    """Position in the case's ``conversation``."""
    role: str
    raw: str
    """The text as authored (what ``conversation[0]`` sends to the builder)."""
    spoken: str
    """The text with every note removed and whitespace tidied: what the user actually says."""
    notes: tuple[str, ...] = ()
    """The notes' inner text, without brackets."""
    readings: tuple[NoteReading, ...] = ()
    """Each note read into directives (user turns only; assistant turns are reference)."""
    list_missing: bool = False
    """A one-at-a-time note with no list of two or more items in the note or in the turn's words."""

    @property
    def has_notes(self) -> bool:
        return bool(self.notes)

    @property
    def directives(self) -> tuple[Directive, ...]:
        return tuple(d for reading in self.readings for d in reading.directives)

    @property
    def loose_notes(self) -> tuple[str, ...]:
        """The notes without the values they give to a question they name: a value given for "the
        timezone" ("Europe/Lisbon") is never taken, by its shape, as the answer to another question."""
        loose = []
        for reading in self.readings:
            text = reading.note
            for d in reading.directives:
                if isinstance(d, Answer) and (d.trigger.topic or d.trigger.detail):
                    text = text.replace(d.value, " ")
            loose.append(text)
        return tuple(loose) if self.readings else self.notes

    @property
    def not_understood(self) -> list[tuple[str, str]]:
        """``(note, what in it the scripted user cannot follow)``, one pair per part not understood."""
        found = [(r.note, part) for r in self.readings for part in r.not_understood]
        if self.list_missing:
            note = next(r.note for r in self.readings if any(isinstance(d, OneAtATime) for d in r.directives))
            found.append((note, "one item at a time, but neither the note nor the turn holds a list of two or more"))
        return found

    @property
    def list_items(self) -> list[str]:
        """The list a one-at-a-time note sends: the note's own, else the turn's words as a numbered,
        bulleted or prose list ("rename it, then make it hourly"); [] without such a note."""
        listed = next((d for d in self.directives if isinstance(d, OneAtATime)), None)
        if listed is None:
            return []
        return list(listed.items) or split_items(self.spoken) or split_prose(self.spoken)

    @property
    def held(self) -> Hold | None:
        """The held position this turn pushes, when its note says how often or what for."""
        return next((d for d in self.directives if isinstance(d, Hold) and (d.times or d.text)), None)

    @property
    def utterances(self) -> list[str]:
        """What the scripted user says for this turn, in order (one message each).

        - A one-at-a-time note over a list: the list's items, one per message — the list may be
          spoken or sit inside the note itself; only the items are said, never the instructions.
        - Otherwise the spoken text; a held position "N times" sends N messages, the first the turn's
          words, the next what the note pushes for (else the words again).
        - A note-only turn says what its note tells the user to say, as often as asked, or pushes
          what its held position is for (see :meth:`Script.utterances` for one that says neither).
        """
        if self.role != "user":
            return []
        items = self.list_items
        if len(items) >= 2:
            return items
        held = self.held
        if self.spoken:
            if held is not None and held.times:
                return [self.spoken] + [held.text or self.spoken] * (held.times - 1)
            return [self.spoken]
        said = [d.text for d in self.directives if isinstance(d, Say) for _ in range(d.times)]
        if not said and held is not None and held.text:
            said = [held.text] * (held.times or 1)
        return said


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


def matches_question(trigger: Trigger, asked: str) -> bool:
    """Whether a question (or a setup-card parameter and its issue) is one ``trigger`` waits for: by the
    words the note names, its kind of detail, or any question when it names none
    (:func:`~threadcase.case.note_topics.question_score`)."""
    return question_score(trigger, asked) > 0


@functools.lru_cache(maxsize=4096)
def _script_turn(index: int, role: str, text: str) -> ScriptTurn:
    # Every iteration of a case parses the same authored turns: parsed once, the frozen turn is shared
    # (keyed by its whole content, so it cannot go stale; a Script only ever replaces its own list's items).
    spoken, notes = split_notes(text)
    if role != "user":
        return ScriptTurn(index=index, role=role, raw=text, spoken=spoken, notes=tuple(notes))
    readings = tuple(read_note(note) for note in notes)
    listed = [d for r in readings for d in r.directives if isinstance(d, OneAtATime)]
    missing = bool(listed) and not listed[0].items and len(split_items(spoken) or split_prose(spoken)) < 2
    return ScriptTurn(
        index=index, role=role, raw=text, spoken=spoken, notes=tuple(notes), readings=readings, list_missing=missing
    )


def script_turn(index: int, role: str, text: str) -> ScriptTurn:
    """One authored turn, split and read (cached by its content)."""
    return _script_turn(index, role, text)


class Script:
    """The case's authored conversation as the simulated user's script, with delivery tracking.

    The opener (``conversation[0]``) is delivered by the harness before the proxy starts (message 0).
    Assistant turns are reference for the proxy only and are never sent. Positions are *message
    ordinals*: 0 is the opening message, 1 the first follow-up, and so on; :meth:`advance` counts a
    follow-up once it was sent.
    """

    def __init__(self, turns: Sequence[ScriptTurn]) -> None:
        if not turns:
            raise ValueError("a script needs at least the opening turn")
        self.turns: list[ScriptTurn] = list(turns)
        self._sent_at: dict[int, int] = {self.turns[0].index: 0}
        """Turn index -> the message ordinal that delivered it (speaking turns only)."""
        self._pending: list[int] = []
        """Turns delivered with the follow-up being prepared: their ordinal is set by :meth:`advance`."""
        self._messages = 0
        """Ordinal of the last message sent."""
        self._queue: list[str] = []
        """Items of a one-at-a-time change list still to send."""
        self._queue_turn: int | None = None
        self._passed: set[int] = set()
        """Turns with nothing to say that the scripted user went past."""
        self._run_turns: list[ScriptTurn] = []
        """Delivered turns whose note asks the user to run the workflow; not yet acted on."""

    @classmethod
    def from_texts(cls, turns: Sequence[tuple[str, str]]) -> Script:
        """Build from ``(role, text)`` pairs, the first being the opener."""
        return cls([_script_turn(index, role, text) for index, (role, text) in enumerate(turns)])

    # --- delivery ------------------------------------------------------------------------------

    @property
    def opener(self) -> ScriptTurn:
        return self.turns[0]

    @property
    def message(self) -> int:
        """The ordinal of the last message sent (the one the agent is answering now)."""
        return self._messages

    @property
    def user_turns(self) -> list[ScriptTurn]:
        """Every user turn, the opener first."""
        return [t for t in self.turns if t.role == "user"]

    def utterances(self, turn: ScriptTurn) -> list[str]:
        """What the scripted user says for ``turn`` (:attr:`ScriptTurn.utterances`); a note-only turn
        that only holds a position a number of times ("[push twice more]") repeats the last request."""
        said = turn.utterances
        held = turn.held
        if said or turn.spoken or held is None:
            return said
        users = self.user_turns
        before = next((t for t in reversed(users[: users.index(turn)]) if t.spoken), None)
        return [before.spoken] * (held.times or 1) if before is not None else []

    def speaks(self, turn: ScriptTurn) -> bool:
        return turn is self.opener or bool(self.utterances(turn))

    def _handled(self, turn: ScriptTurn) -> bool:
        """Sent (or being sent), or passed over by the scripted user: n8n's notion of a delivered turn."""
        return turn.index in self._sent_at or turn.index in self._pending or turn.index in self._passed

    def unsent_user_turns(self) -> list[ScriptTurn]:
        """User turns not yet sent nor passed over (a note-only turn stays here until the scripted user
        goes past it: the model user keeps its notes pending, as n8n does)."""
        return [t for t in self.turns[1:] if t.role == "user" and not self._handled(t)]

    def sent_at(self, turn: ScriptTurn) -> int | None:
        """The message ordinal that delivered a speaking turn (its first message), or None."""
        return self._sent_at.get(turn.index)

    def delivered(self, turn: ScriptTurn) -> bool:
        """A speaking turn is delivered once its first message was prepared; a note-only turn once its
        window opened (it has nothing to say: its notes governed from then on)."""
        if self._handled(turn):
            return True
        return not self.speaks(turn) and self.window(turn)[0] is not None

    def _position(self, index: int) -> int | None:
        """The ordinal of the message that delivers a turn: recorded, or the one being prepared."""
        if index in self._sent_at:
            return self._sent_at[index]
        return self._messages + 1 if index in self._pending else None

    def mark_sent(self, index: int) -> None:
        """A turn was delivered by a message not taken from the script (the model user's)."""
        if index not in self._sent_at and index not in self._pending:
            self._pending.append(index)

    def advance(self) -> None:
        """A follow-up message was sent: it is the next ordinal, and delivers what was prepared for it."""
        self._messages += 1
        for index in self._pending:
            self._sent_at.setdefault(index, self._messages)
        self._pending.clear()

    @property
    def list_in_progress(self) -> tuple[int, int] | None:
        """``(turn index, items still to send)`` while a one-at-a-time list is half sent."""
        if self._queue and self._queue_turn is not None:
            return self._queue_turn, len(self._queue)
        return None

    def next_scripted_message(self) -> tuple[str, ScriptTurn | None] | None:
        """The next thing the scripted user says, delivering it; None when the script is exhausted.

        A turn with several utterances (see :attr:`ScriptTurn.utterances`) queues the rest, one per
        call — each sent only after the previous run finished, i.e. after the agent applied it. A turn
        with nothing to say is passed (its window closes with this message) and the next one is tried.
        """
        if self._queue:
            return self._queue.pop(0), None
        for turn in self.user_turns[1:]:
            if turn.index in self._sent_at or turn.index in self._pending or turn.index in self._passed:
                continue
            if not self.speaks(turn):
                # Passed over: its window closes with this message; a run it asks for goes with it.
                self._passed.add(turn.index)
                self._note_run(turn)
                continue
            self._deliver(turn)
            said = self.utterances(turn)
            self._queue = said[1:]
            self._queue_turn = turn.index if self._queue else None
            return said[0], turn
        return None

    def _deliver(self, turn: ScriptTurn) -> None:
        self.mark_sent(turn.index)
        self._note_run(turn)

    def _note_run(self, turn: ScriptTurn) -> None:
        if any(d.kind == "run-workflow" for d in turn.directives) and turn not in self._run_turns:
            self._run_turns.append(turn)

    def take_run_request(self) -> list[ScriptTurn]:
        """The delivered turns whose note asks the user to run the workflow themselves, once (cleared
        by taking); empty when none. A note-only turn's request goes with the next message said."""
        turns, self._run_turns = self._run_turns, []
        return turns

    def remaining_spoken(self) -> list[str]:
        """What the user would still say, without delivering it."""
        texts = list(self._queue)
        for turn in self.unsent_user_turns():
            texts.extend(self.utterances(turn))
        return texts

    @property
    def has_more(self) -> bool:
        return bool(self.remaining_spoken())

    def replay(self, sent_at: dict[int, int], messages: int) -> None:
        """Set the delivery state a finished run recorded (turn index -> message ordinal), to ask
        afterwards which notes governed which moment."""
        self._sent_at = {self.turns[0].index: 0, **sent_at}
        self._messages = messages
        self._pending.clear()

    # --- windows -------------------------------------------------------------------------------

    def _speaking_neighbours(self, turn: ScriptTurn) -> tuple[ScriptTurn | None, ScriptTurn | None]:
        users = self.user_turns
        at = users.index(turn)
        before = next((t for t in reversed(users[:at]) if self.speaks(t)), None)
        after = next((t for t in users[at + 1 :] if self.speaks(t)), None)
        return before, after

    def window(self, turn: ScriptTurn) -> tuple[int | None, int | None]:
        """``[open, close)`` in message ordinals: the stretch of conversation ``turn``'s notes govern.

        It opens when the speaking turn before it was sent (the opener's at message 0) and closes when
        the speaking turn after it is sent: the run that leads up to the turn and the run answering it.
        A turn that says nothing stands between two messages, so it governs the runs answering both:
        it closes when the second speaking turn after it is sent. ``None`` = not yet opened / closed.
        """
        if turn is self.opener:
            opened: int | None = 0
        else:
            before, _ = self._speaking_neighbours(turn)
            opened = None if before is None else self._position(before.index)
        _, after = self._speaking_neighbours(turn)
        if after is not None and not self.speaks(turn):
            _, after = self._speaking_neighbours(after)
        closed = None if after is None else self._position(after.index)
        return opened, closed

    def active_turns(self, message: int | None = None) -> list[ScriptTurn]:
        """The user turns whose notes govern the run answering ``message`` (default: the current one)."""
        at = self._messages if message is None else message
        active = []
        for turn in self.user_turns:
            opened, closed = self.window(turn)
            if opened is not None and opened <= at and (closed is None or at < closed):
                active.append(turn)
        return active

    # --- what the notes say, for the model user and the fallbacks ------------------------------

    @property
    def notes(self) -> list[str]:
        return [n for t in self.turns if t.role == "user" for n in t.notes]

    @property
    def pending_direction(self) -> bool:
        """A note still governs what comes: an unsent scripted turn carries one, a change list is being
        delivered, or the opener carries standing notes (n8n's content-agnostic rule, which the model
        user keeps: the deterministic short-circuits step aside for it)."""
        return bool(self._queue) or self.opener.has_notes or any(t.has_notes for t in self.unsent_user_turns())

    def declines(self, question: str) -> bool:
        """Some note of the script declines this question (any turn: the model user reads them all)."""
        return any(
            isinstance(d, Decline) and matches_question(d.trigger, question)
            for t in self.user_turns
            for d in t.directives
        )

    def delivered_spoken(self) -> str:
        """What the user has said so far (delivered scripted turns), for requirement checks."""
        return "\n".join(t.spoken for t in self.user_turns if self.delivered(t) and t.spoken)

    def spoken_corpus(self) -> str:
        """Everything the user says across the script (never the notes)."""
        return "\n".join(t.spoken for t in self.user_turns if t.spoken)

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
                    "delivered": self._handled(t),
                }
            )
        return out
