"""The run journal: one :class:`CaseResult` JSON line per case-iteration, appended and flushed at once.

The journal is the run's source of truth: every report is rebuilt from it (``threadcase report``), so
a crash or Ctrl-C loses nothing that finished. Lines are written whole (one ``write`` of a complete
line, then a flush) and only from the event loop's thread, so concurrent cases never interleave.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

from pydantic import ValidationError

from threadcase.errors import ConfigError
from threadcase.verdicts import CaseResult

__all__ = ["JOURNAL_NAME", "JournalWriter", "journal_path", "read_journal"]

JOURNAL_NAME = "journal.jsonl"

_LINE_END = os.linesep.encode()
"""What a text-mode file ends each line with (the journal was written in text mode before)."""


class JournalWriter:
    """Append-only writer of ``journal.jsonl``; a context manager that closes the file on exit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[bytes] | None = None
        # Writes happen on the event loop, but on_result callbacks may come from anywhere; a lock keeps
        # each line whole whatever the caller.
        self._lock = threading.Lock()
        self.count = 0

    def __enter__(self) -> JournalWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("ab")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def append(self, result: CaseResult) -> None:
        """Write one result as one line and flush it to the OS before returning."""
        # The serializer's UTF-8 bytes as they are: model_dump_json decodes them, and a text file
        # encodes them again.
        line = result.__pydantic_serializer__.to_json(result) + _LINE_END
        with self._lock:
            if self._file is None:
                raise RuntimeError("journal is not open")
            self._file.write(line)
            self._file.flush()
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def journal_path(path: Path) -> Path:
    """The journal of a run: ``path`` itself, or the ``journal.jsonl`` inside a run directory."""
    return path / JOURNAL_NAME if path.is_dir() else path


def read_journal(path: Path) -> list[CaseResult]:
    """Every result in a journal (or in a run directory's journal), in the order written.

    A torn last line (the process died mid-write) is skipped: everything before it finished and is
    kept. A bad line anywhere else means the file is not a threadcase journal, which is a usage error
    naming the line.
    """
    path = journal_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: journal not found; pass the journal.jsonl of a run") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read journal ({exc.strerror})") from None
    lines = text.split("\n")
    results: list[CaseResult] = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            results.append(CaseResult.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            torn = number == last and not text.endswith("\n")
            if torn:
                break
            first = str(exc).splitlines()[0]
            raise ConfigError(
                f"{path}:{number + 1}: not a threadcase journal line ({first}); "
                "pass the journal.jsonl a `threadcase run` wrote"
            ) from None
    return results
