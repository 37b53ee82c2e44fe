"""An assistant turn's text, assembled from n8n's text events, live or replayed.

n8n streams a response's text live as ``text-delta`` events without an SSE id, and stores it as one
durable ``text-block`` per response (keyed by run, agent and ``responseId``) that is never sent live.
After a reconnect the stream replays the blocks of responses that ended while the client was away,
and sends one ``text-delta`` with *everything already emitted* of a response still open. So a text
segment is replaced (not extended) by its block, and by the first delta after a reconnect; otherwise
deltas append. Segments join in the order they first appeared.
"""

from __future__ import annotations

__all__ = ["SegmentKey", "TurnText"]

SegmentKey = tuple[str | None, str | None, str | None]
"""(run id, agent id, response id) of one response's text."""


class TurnText:
    """The text of one assistant turn, one segment per model response."""

    def __init__(self) -> None:
        self._segments: dict[SegmentKey, list[str]] = {}
        self._resync: set[SegmentKey] = set()

    def delta(self, key: SegmentKey, text: str) -> None:
        """A live ``text-delta``: appended, unless it is the first of its segment since a reconnect."""
        if key in self._resync:
            self._resync.discard(key)
            self._segments[key] = [text]
        else:
            self._segments.setdefault(key, []).append(text)

    def block(self, key: SegmentKey, text: str) -> None:
        """A replayed ``text-block``: the whole text of its response, replacing whatever deltas gave."""
        self._resync.discard(key)
        self._segments[key] = [text]

    def reconnected(self) -> None:
        """The stream was re-opened: the next delta of each known segment carries its whole text so far."""
        self._resync = set(self._segments)

    @property
    def text(self) -> str:
        """The segments in order; two that would run into each other are set apart by a blank line."""
        out = ""
        for parts in self._segments.values():
            piece = "".join(parts)
            if out and piece and not out[-1].isspace() and not piece[0].isspace():
                out += "\n\n"
            out += piece
        return out
