"""The run journal: one :class:`CaseResult` JSON line per case-iteration, appended and flushed at once.

The journal is the run's source of truth: every report is rebuilt from it (``threadcase report``), so
a crash or Ctrl-C loses nothing that finished. Lines are written whole (one ``write`` of a complete
line, then a flush) and only from the event loop's thread, so concurrent cases never interleave.

Besides results it holds :class:`~threadcase.leftovers.LeftoverReport` lines (what a case-iteration's
cleanup left on the instance) and :class:`~threadcase.leftovers.CleanupReport` lines (what
``threadcase cleanup`` deleted later), told apart by their ``record_type``.

Every line passes through the run's :class:`~threadcase.redaction.Redactor` before it is written, and
the reports are rebuilt from these lines, so no secret reaches any of them.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from threadcase.errors import ConfigError
from threadcase.leftovers import CleanupReport, Leftover, LeftoverReport, outstanding_leftovers
from threadcase.redaction import Redactor
from threadcase.verdicts import CaseResult

__all__ = [
    "JOURNAL_NAME",
    "Journal",
    "JournalWriter",
    "journal_path",
    "read_journal",
    "read_journal_entries",
    "redacted_line",
]

JOURNAL_NAME = "journal.jsonl"

_LINE_END = os.linesep.encode()
"""What a text-mode file ends each line with (the journal was written in text mode before)."""


class JournalWriter:
    """Append-only writer of ``journal.jsonl``; a context manager that closes the file on exit.

    ``redactor``: the run's; every line passes through it (by default one that knows the secrets of the
    process environment, besides token shapes, secret headers and URL userinfo).
    """

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = path
        self.redactor = redactor or Redactor.from_environment(os.environ)
        self._file: IO[bytes] | None = None
        # Writes happen on the event loop, but on_result callbacks may come from anywhere, and the exit on
        # a third Ctrl-C writes from a signal's callback: a re-entrant lock keeps each line whole.
        self._lock = threading.RLock()
        self.count = 0

    def __enter__(self) -> JournalWriter:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Open the file for appending (creating it and its directory)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("ab")

    def append(self, result: CaseResult) -> CaseResult:
        """Write one result as one redacted line, flushed to the OS before returning; returns what was written.

        The returned result is ``result`` itself unless redaction changed something, in which case it is
        the redacted one: reports must be built from it, never from the original.
        """
        text, redacted = redacted_line(result, self.redactor)
        self._write(text)
        self.count += 1
        return redacted

    def append_line(self, line: LeftoverReport | CleanupReport) -> None:
        """Write a leftover or cleanup line (redacted, flushed)."""
        self._write(redacted_line(line, self.redactor)[0])

    def _write(self, text: str) -> None:
        data = text.encode("utf-8") + _LINE_END
        with self._lock:
            if self._file is None:
                raise RuntimeError("journal is not open")
            self._file.write(data)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


M = TypeVar("M", bound=BaseModel)


def redacted_line(model: M, redactor: Redactor) -> tuple[str, M]:
    """``model`` as one JSON line with every secret redacted, and the model that line holds.

    A scan of the whole line tells whether anything needs redacting (most lines hold nothing); only then
    is the document redacted value by value and validated again, so a secret that equals a key's name can
    never break the line's shape.
    """
    text = _json_text(model)
    if redactor.text(text) == text:
        return text, model
    cleaned = type(model).model_validate(redactor.json_values(json.loads(text)))
    return _json_text(cleaned), cleaned


def _json_text(model: BaseModel) -> str:
    """The model as one JSON line; lone surrogates (which UTF-8 cannot encode) survive to be replaced."""
    try:
        return model.__pydantic_serializer__.to_json(model).decode("utf-8")
    except PydanticSerializationError:
        # A lone surrogate from an escaped "\udfff" (a case text, an instance's answer): the serializer
        # refuses to encode it, so the line goes through the standard encoder and the redactor replaces it.
        return json.dumps(model.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


@dataclass
class Journal:
    """Everything a journal holds: the results, and the leftovers still outstanding."""

    results: list[CaseResult] = field(default_factory=list)
    leftover_reports: list[LeftoverReport] = field(default_factory=list)
    cleanups: list[CleanupReport] = field(default_factory=list)

    @property
    def leftovers(self) -> list[Leftover]:
        """Leftovers reported by the run, less those a later ``threadcase cleanup`` deleted."""
        return outstanding_leftovers(self.leftover_reports, self.cleanups)


def journal_path(path: Path) -> Path:
    """The journal of a run: ``path`` itself, or the ``journal.jsonl`` inside a run directory."""
    return path / JOURNAL_NAME if path.is_dir() else path


def read_journal(path: Path) -> list[CaseResult]:
    """Every result in a journal, in the order written (see :func:`read_journal_entries` for the rest)."""
    return read_journal_entries(path).results


def read_journal_entries(path: Path) -> Journal:
    """Every line of a journal: results, leftover reports and cleanup reports, in the order written.

    A torn last line (the process died mid-write) is skipped: everything before it finished and is
    kept. A bad line anywhere else means the file is not a threadcase journal, which is a usage error
    naming the line.
    """
    path = journal_path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: journal not found; pass the journal.jsonl of a run") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory; pass the journal.jsonl inside it") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read journal ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not a threadcase journal (not UTF-8 text at byte {exc.start}); "
            "pass the journal.jsonl a `threadcase run` wrote"
        ) from None
    lines = text.split("\n")
    journal = Journal()
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            kind = data.get("record_type") if isinstance(data, dict) else None
            if kind == "leftovers":
                journal.leftover_reports.append(LeftoverReport.model_validate(data))
            elif kind == "cleanup":
                journal.cleanups.append(CleanupReport.model_validate(data))
            else:
                journal.results.append(CaseResult.model_validate(data))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and ValidationError are ValueErrors
            torn = number == last and not text.endswith("\n")
            if torn:
                break
            first = " ".join((str(exc).splitlines() or ["?"])[0].split())[:200]
            raise ConfigError(
                f"{path}:{number + 1}: not a threadcase journal line ({first}); "
                "pass the journal.jsonl a `threadcase run` wrote"
            ) from None
    return journal
