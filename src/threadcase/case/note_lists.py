"""Lists of changes to send one at a time: numbered, bulleted, or written as prose.

A list may stand in the turn's own words or inside the note, as

- one item per line: ``1. a`` / ``1) a`` / ``- a`` / ``* a`` / ``• a``;
- inline numbers: ``1. a 2. b`` / ``(1) a (2) b``;
- prose, only where a one-at-a-time note says a list is meant: items joined by ``;``, ", then",
  "and then", "first … second … finally", or a comma or "and" before a new change verb ("rename it
  to Nightly, move it to #ops and make it hourly"). "add Lisbon and Porto" stays one item: "Porto"
  is no change verb.
"""

from __future__ import annotations

import re

__all__ = ["CHANGE_VERBS", "note_list", "split_items", "split_prose"]

_LIST_ITEM = re.compile(r"^\s*(?:\(?\d+[.)]|[-*•])\s+(.+?)\s*$")
_INLINE_ITEMS = re.compile(r"(?:^|\s)\(?(\d+)[.)]\s+")

CHANGE_VERBS = (
    r"add|remove|drop|delete|change|switch|rename|move|make|set|use|run|send|post|email|update|replace|include|"
    r"turn|swap|put|schedule|limit|filter|call|name|append|insert|store|save|write|create|connect|attach|"
    r"enable|disable|increase|decrease|raise|lower|reduce|shorten|extend|fix|point|route|only|also|skip|keep|"
    r"ask|tell|notify|ping|alert|log|archive|copy|fetch|get|pull|trigger|start|stop|limit"
)
_ITEM_LEAD = re.compile(
    r"^(?:(?:and|then|and then|first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|next|after that|afterwards|"
    r"finally|lastly|last|also|plus)\b[,:]?\s*)+(?=\S)",
    re.IGNORECASE,
)
_ASK_LEAD = re.compile(
    r"^(?:ask(?: it| them)?(?: to| for)?|tell it to|have it|get it to|request)\s+(?=\S)", re.IGNORECASE
)
_PROSE_SPLIT = re.compile(
    rf"\s*;\s*(?:and\s+)?|\s*,\s*(?:and\s+)?(?:then\s+)?(?=(?:(?:and|then|next|finally|lastly|after that|"
    rf"second(?:ly)?|third(?:ly)?|fourth)\b[,\s]+)*(?:(?:ask|tell)\s+it\s+to\s+)?(?:{CHANGE_VERBS})\b)"
    rf"|\s+(?:and\s+)?then\s+|\s*,?\s+and\s+(?:then\s+|finally\s+|lastly\s+|also\s+)?(?=(?:{CHANGE_VERBS})\b)"
    rf"|\s*,\s*(?=(?:then|next|finally|lastly|after that|second(?:ly)?|third(?:ly)?|fourth)\b)",
    re.IGNORECASE,
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


def split_prose(text: str) -> list[str]:
    """The changes of a list written as prose (see the module docstring); [] when there are not two."""
    flat = " ".join(text.split()).strip().rstrip(".")
    if not flat:
        return []
    # Quoted names hold commas and "then" of their own: keep them whole.
    quotes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    protected = re.sub(r"\"[^\"]*\"|“[^”]*”", keep, flat)
    pieces = [p for p in _PROSE_SPLIT.split(protected) if p and p.strip()]
    items = []
    for piece in pieces:
        piece = _ITEM_LEAD.sub("", piece.strip()).strip(" ,")
        piece = _ASK_LEAD.sub("", piece)
        piece = re.sub(r"\x00(\d+)\x00", lambda m: quotes[int(m.group(1))], piece).strip()
        if piece:
            items.append(piece)
    return items if len(items) >= 2 else []


def note_list(note: str, one_at_a_time: re.Pattern[str]) -> tuple[str, tuple[str, ...]]:
    """``(the note's words without its list, the list's items)``; a list needs two items or more.

    A prose list counts only after a one-at-a-time instruction and a colon ("one at a time: rename it
    to X, then make it hourly"): elsewhere commas and "then" are the note's own sentence structure.
    """
    items = split_items(note)
    if items:
        lines = [line for line in note.splitlines() if not _LIST_ITEM.match(line)]
        text = "\n".join(lines)
        if text.strip() == note.strip():  # an inline list: cut from its first number
            first = next(m for m in _INLINE_ITEMS.finditer(note) if m.group(1) == "1")
            text = note[: first.start()]
        return text, tuple(items)
    said = one_at_a_time.search(note)
    colon = note.find(":", said.end()) if said is not None else -1
    if colon != -1:
        prose = split_prose(note[colon + 1 :])
        if prose:
            return note[:colon], tuple(prose)
    return note, ()
