"""``--shard I/N``: a deterministic, balanced I-th of N parts of the selected cases.

Cases, not case-iterations, are split: every iteration of a case runs in the same shard, so its
statistics (pass@k, flip rate) and its lane discipline stay whole. The assignment is a bounded-load
rendezvous hash: each case prefers the shards in the order of ``sha256(slug, shard)`` and takes the
first one with room, cases taken in the order of ``sha256(slug)``; shard ``j`` has room for
``n // N`` cases, one more for the first ``n % N`` shards. So:

- it is a pure function of the selected slugs and N: every machine of a CI matrix computes the same
  split, whatever order the files were listed in, and the same case lands in the same shard run
  after run;
- shard sizes differ by at most one case;
- adding or removing a case moves only the few cases whose preferred shard filled up differently,
  not every case after it (as numbering the cases round robin would).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from threadcase.errors import ConfigError

__all__ = ["Shard", "assign_shards", "select_shard"]

T = TypeVar("T")

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(BaseModel):
    """One part of N: ``index`` counts from 1, as CI matrices and people do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    """Which part, 1..count."""
    count: int = Field(ge=1)
    """How many parts the selection is split into."""

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> the second of four parts; raises :class:`ConfigError` naming the value."""
        match = _SPEC.match(text)
        if match is None:
            raise ConfigError(f"--shard {text!r}: expected I/N, e.g. 2/4 (the second of four parts, counting from 1)")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ConfigError(f"--shard {text!r}: I must be between 1 and N (N >= 1), e.g. 1/{max(count, 1)}")
        return cls(index=index, count=count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _score(*parts: str) -> bytes:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).digest()


def assign_shards(slugs: Sequence[str], count: int) -> dict[str, int]:
    """Slug -> shard index (1..count) for every slug (see the module docstring)."""
    n = len(slugs)
    room = [n // count + (1 if j < n % count else 0) for j in range(count)]
    assigned: dict[str, int] = {}
    for slug in sorted(set(slugs), key=lambda s: _score(s)):
        preferences = sorted(range(count), key=lambda j: _score(slug, str(j)), reverse=True)
        chosen = next(j for j in preferences if room[j] > 0)
        room[chosen] -= 1
        assigned[slug] = chosen + 1
    return assigned


def select_shard(items: Sequence[T], shard: Shard, *, slug: Callable[[T], str]) -> list[T]:
    """The items of ``shard`` in their given order; a shard left empty is a :class:`ConfigError`."""
    assigned = assign_shards([slug(item) for item in items], shard.count)
    chosen = [item for item in items if assigned[slug(item)] == shard.index]
    if not chosen:
        raise ConfigError(
            f"--shard {shard}: this shard holds no case (the selection holds {len(items)}); "
            f"use at most {len(items)} shard(s)"
        )
    return chosen
