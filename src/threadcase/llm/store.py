"""Recorded model answers: ``--record-models DIR`` stores each call's answer under its request's hash,
``--replay-models DIR`` answers from them and never calls the live model.

A suite graded once with a real model then re-runs in CI deterministically and at no cost, and a prompt
change shows up as a miss (the request hash changed) naming the role and the case.

The hash covers everything the request asks (role, model, messages, answer schema, temperature, seed,
max_tokens) after the per-run identifiers in it are replaced by their order of first appearance
(``<id1>``, ``<id2>``, ...) and timestamps by ``<time>``: a fresh thread, workflow, widget or
run-suffix id, or a ``createdAt``, every run must not make the same conversation a different request,
while two requests that differ in anything else still differ. One file per answer
(``<hash>.json``, written atomically), so concurrent cases never share a write; the file holds the
role, the case, the redacted request (to see what changed after a miss) and the answer (content and
usage), redacted like every other output.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from threadcase.errors import ConfigError, ModelError
from threadcase.instance.redact import Redactor, environment_secrets
from threadcase.models import ROLE_LABELS, ModelSettings, ModelUsage, Role

__all__ = ["AnswerStore", "RecordedAnswer", "RecordedAnswerMissing", "request_key"]

_VOLATILE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    # Tokens of 8+ letters and digits with a digit among them: n8n-style ids (``aB3dE5fG7hJ9kL1m``), hex
    # digests and run suffixes (``3f9a1c2e``, and ``40318527``: random hex may be all digits), ``mock-<hex>``.
    r"|(?<![A-Za-z0-9])(?=[A-Za-z]*[0-9])[A-Za-z0-9]{8,}(?![A-Za-z0-9])"
    # ...or eight hex letters, a run suffix without a digit (``fadebcae``)
    r"|(?<![A-Za-z0-9])[a-f]{8}(?![A-Za-z0-9])"
    # n8n-style ids drawn from letters alone: 16 of them, both cases (``rnlZSwsnfAxtCOpV``).
    r"|(?<![A-Za-z0-9])(?=[A-Za-z]{16}(?![A-Za-z0-9]))(?=[A-Za-z]*[a-z])(?=[A-Za-z]*[A-Z])[A-Za-z]{16}"
)


_MOMENT = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    # epoch milliseconds (n8n's run debug) and seconds, 2001 onwards
    r"|(?<![0-9])1\d{12}(?![0-9])|(?<![0-9.])1\d{9}(?:\.\d+)?(?![0-9])"
)
"""Timestamps: when something was created or ran differs every run and says nothing about the request."""


_ID_VALUE = re.compile(r'[A-Za-z]*(?:Id|ID|_id|\bid)\\*"\s*:\s*\\*"([^"\\]{8,})')
"""The value of an id-named key (``"versionId": "cAlVCCTkrjsA"``, JSON or JSON inside a string): ids of
any shape, letters only included, which the token rules alone would miss."""


def _looks_generated(value: str) -> bool:
    return any(c.isdigit() for c in value) or (any(c.isupper() for c in value) and any(c.islower() for c in value))


def _normalise(text: str, seen: dict[str, str]) -> str:
    def placeholder(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in seen:
            seen[token] = f"<id{len(seen) + 1}>"
        return seen[token]

    text = _MOMENT.sub("<time>", text)
    named = {v for v in _ID_VALUE.findall(text) if _looks_generated(v)}
    if named:
        # An id met under its key is replaced wherever it appears (prose included), longest first.
        alternatives = "|".join(re.escape(v) for v in sorted(named, key=len, reverse=True))
        pattern = re.compile(f"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])|{_VOLATILE.pattern}")
        return pattern.sub(placeholder, text)
    return _VOLATILE.sub(placeholder, text)


def request_key(role: Role, request: dict[str, Any]) -> str:
    """The sha256 of the role and the request, per-run identifiers normalised (see the module doc)."""
    text = json.dumps({"role": role, "request": request}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(_normalise(text, {}).encode("utf-8")).hexdigest()


class RecordedAnswer(BaseModel):
    """One stored answer: what was asked (redacted), by whom, and what the model said."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """The request hash (the file's name)."""
    role: Role
    """``proxy``, ``judge`` or ``verifier``."""
    case: str
    """The case (and iteration) or calibration item the call was made for."""
    model: str
    """The model that answered."""
    content: str | None
    """The answer's text (the structured output's JSON); None: every attempt failed."""
    errors: list[str] = Field(default_factory=list)
    """Why the attempts failed, when ``content`` is None (replayed as the same failure)."""
    usage: ModelUsage = Field(default_factory=ModelUsage)
    """What the answer cost when it was recorded."""
    request: dict[str, Any] = Field(default_factory=dict)
    """The request as sent (redacted), for a person comparing it with a request that missed."""


class RecordedAnswerMissing(ModelError):
    """``--replay-models``: no answer was recorded for this request; the live model is never called."""


class AnswerStore:
    """The directory of recorded answers of one run (``record`` or ``replay``)."""

    def __init__(self, directory: Path, *, replay: bool, secrets: list[str] | None = None) -> None:
        self.directory = directory
        self.replay = replay
        self._redactor = Redactor(secrets or [])

    @classmethod
    def of(cls, models: ModelSettings) -> AnswerStore | None:
        """The store ``models`` names (replay wins over record); None when answers are neither."""
        if models.replay_dir is not None:
            if not models.replay_dir.is_dir():
                raise ConfigError(
                    f"--replay-models {str(models.replay_dir)!r} is not a directory of recorded answers; "
                    "record one first with --record-models DIR"
                )
            return cls(models.replay_dir, replay=True)
        if models.record_dir is not None:
            secrets = [*environment_secrets(os.environ)]
            if models.api_key is not None:
                secrets.append(models.api_key.get_secret_value())
            return cls(models.record_dir, replay=False, secrets=secrets)
        return None

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, key: str, *, role: Role, case: str) -> RecordedAnswer:
        """The answer recorded for ``key``; :class:`RecordedAnswerMissing` naming role and case when none."""
        path = self._path(key)
        try:
            return RecordedAnswer.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            pass
        except (OSError, ValidationError) as exc:
            raise RecordedAnswerMissing(
                f"recorded answer {path} for the {ROLE_LABELS[role]} call of {case} is unreadable ({exc}); "
                "record it again with --record-models"
            ) from None
        same_case = self._recorded_for(role, case)
        why = (
            f"{same_case} other {ROLE_LABELS[role]} answer(s) are recorded for {case}, so the request changed "
            "since (a prompt, the case or the agent's answers)"
            if same_case
            else f"nothing is recorded for the {ROLE_LABELS[role]} of {case}"
        )
        raise RecordedAnswerMissing(
            f"no recorded answer for the {ROLE_LABELS[role]} call of {case} (request {key[:12]}) in "
            f"{self.directory}: {why}; the live model was not called — record again with --record-models DIR"
        )

    def _recorded_for(self, role: Role, case: str) -> int:
        count = 0
        for path in self.directory.glob("*.json"):
            try:
                head = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(head, dict) and head.get("role") == role and head.get("case") == case:
                count += 1
        return count

    def save(self, answer: RecordedAnswer) -> None:
        """Write one answer atomically (temporary file, then rename), redacted."""
        redacted = self._redactor.data(answer.model_dump(mode="json"))
        text = json.dumps(redacted, indent=1, ensure_ascii=False) + "\n"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".answer.", suffix=".tmp", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self._path(answer.key))
        except OSError as exc:
            where = f"--record-models {str(self.directory)!r}"
            raise ConfigError(f"{where}: cannot write ({exc.strerror or exc})") from None
