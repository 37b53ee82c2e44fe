"""The two base shapes: requests are closed, responses and events are open."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Request(BaseModel):
    """A request body: closed (``extra="forbid"``), so the demo instance answers a field it does not know
    with a 422, which catches client typos."""

    model_config = ConfigDict(extra="forbid")


class _Response(BaseModel):
    """An answer or event: open (``extra="allow"``), because a real instance may send more than we read."""

    model_config = ConfigDict(extra="allow")
