"""Digests of a case file: the file's bytes, and the parts that shaped a conversation.

A journal line records them (:class:`~threadcase.verdicts.CaseHashes`) so that later tools can tell
whether the case on disk is still the case that was run: ``threadcase regrade`` refuses a case whose
seed, conversation, scenarios or run set-up changed, and a LangSmith example is versioned by the file
digest. The parts are hashed from the file's own JSON (canonical: sorted keys, no whitespace), never
from the validated model, so a threadcase upgrade that adds a defaulted field changes no digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from threadcase.case.loader import LoadedCase
from threadcase.errors import ConfigError
from threadcase.verdicts import CaseHashes

__all__ = ["GRADING_ONLY_KEYS", "case_hashes", "changed_parts", "part_digest", "suite_hash"]

GRADING_ONLY_KEYS = frozenset(
    {
        "description",
        "complexity",
        "tags",
        "datasets",
        "triggerType",
        "processExpectations",
        "outcomeExpectations",
        "checks",
    }
)
"""Top-level keys that only grading, selection or reports read: changing them changes no conversation."""

_PART_KEYS = {"seed": "seed", "conversation": "conversation", "scenarios": "executionScenarios"}


def part_digest(value: Any) -> str:
    """The digest of one part of a case document (canonical JSON: sorted keys, no whitespace)."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def case_hashes(loaded: LoadedCase) -> CaseHashes:
    """The digests of a loaded case's file (read again: the loader keeps only the validated model)."""
    try:
        raw = loaded.path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{loaded.path}: cannot read the case file again ({exc.strerror or exc})") from None
    document = json.loads(raw.decode("utf-8-sig"))
    if not isinstance(document, dict):  # the loader validated it; a file swapped since is not a case
        raise ConfigError(f"{loaded.path}: no longer holds a case object; run `threadcase validate` on it")
    setup = {k: v for k, v in document.items() if k not in GRADING_ONLY_KEYS and k not in _PART_KEYS.values()}
    return CaseHashes(
        file=hashlib.sha256(raw).hexdigest(),
        seed=part_digest(document.get("seed")),
        conversation=part_digest(document.get("conversation")),
        scenarios=part_digest(document.get("executionScenarios")),
        setup=part_digest(setup),
    )


def changed_parts(recorded: CaseHashes, current: CaseHashes) -> list[str]:
    """The conversation-shaping parts whose digest differs (``seed``, ``conversation``, ``scenarios``, ``setup``)."""
    parts = ("seed", "conversation", "scenarios", "setup")
    return [part for part in parts if getattr(recorded, part) != getattr(current, part)]


def suite_hash(hashes: Iterable[tuple[str, CaseHashes]]) -> str:
    """One digest over ``(slug, hashes)`` pairs, in slug order: the identity of a selected suite."""
    return part_digest(sorted((slug, h.file) for slug, h in hashes))
