"""The one exception tree of threadcase.

::

    ThreadcaseError                 base of everything threadcase raises on purpose
    ├── UsageError                  "you gave me something wrong" -> exit code 2
    │   ├── CaseSchemaError         a case file breaks a rule (file, case, JSON path, value)
    │   └── ConfigError             a flag, environment variable or settings value is wrong
    ├── ExportError                 finished results could not be recorded elsewhere (LangSmith)
    └── RunError                    "the run failed" -> recorded as a result, attribution framework_issue
        ├── InstanceError           the instance under test answered badly or not at all
        │   ├── ProviderError       the instance's model provider is missing or failed (not the agent)
        │   └── MissingRouteError   the instance has no such route (an older or newer n8n)
        ├── SeedingError            a seed could not be stood up on the instance
        ├── ReplayError             a replay seed could not be rebuilt from its trace
        ├── ModelError              a model call (user proxy or judge) failed
        │   └── JudgeError          the judge or verifier produced no usable verdict
        └── ConversationError       the conversation loop could not continue

A ``UsageError`` stops the run before anything slow happens. A ``RunError`` inside one case is
recorded for that case and the others keep running (see ``harness.runner``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CaseProblem",
    "CaseSchemaError",
    "ConfigError",
    "ConversationError",
    "ExportError",
    "InstanceError",
    "JudgeError",
    "MissingRouteError",
    "ModelError",
    "ProviderError",
    "ReplayError",
    "RunError",
    "SeedingError",
    "ThreadcaseError",
    "UsageError",
    "printable",
]


class ThreadcaseError(Exception):
    """Base class of every error threadcase raises on purpose."""


class UsageError(ThreadcaseError):
    """Something the user supplied is wrong; the CLI prints one line and exits with code 2."""


MAX_PROBLEM_LENGTH = 2000
"""Longest line a problem renders to (a 10 MB key in a case file must not print a 10 MB line)."""


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with control characters escaped as Python would (``\\n``, ``\\x1b``) and cut to ``limit``."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


@dataclass(frozen=True)
class CaseProblem:
    """One broken rule in one case file.

    ``path`` is the JSON path inside the file (``conversation[0].attach.workflow``), empty for the
    file as a whole; ``message`` says what is wrong and what would be valid.
    """

    file: str
    path: str
    message: str
    case: str | None = None
    line: int | None = None
    column: int | None = None

    def render(self) -> str:
        """The one-line form used by ``threadcase validate``: ``file.json: path: message``.

        Always one line, however odd the file name (a newline in it is shown as ``\\n``), and never
        longer than :data:`MAX_PROBLEM_LENGTH`.
        """
        where = self.file
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        line = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        return printable(line, MAX_PROBLEM_LENGTH)


class CaseSchemaError(UsageError):
    """One or more case files break the schema; carries every problem found, not just the first."""

    def __init__(self, problems: list[CaseProblem]) -> None:
        self.problems = problems
        first = problems[0].render() if problems else "invalid case"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first + more)


class ConfigError(UsageError):
    """A flag, environment variable or settings value is wrong."""


class ExportError(ThreadcaseError):
    """Finished results could not be recorded where they were sent (a LangSmith experiment or dataset).

    The run's own journal and reports are written by then; the message says how to send them again.
    """


class RunError(ThreadcaseError):
    """Something failed while running a case; recorded as that case's result, never a crash."""

    attribution: str = "framework_issue"


class InstanceError(RunError):
    """The instance answered with an error status, malformed data, or not at all.

    ``status`` is None when no HTTP answer arrived (connection refused, timeout, dropped stream).
    The body excerpt is short and already redacted of secrets.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str = "",
        path: str = "",
        status: int | None = None,
        excerpt: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.excerpt = excerpt
        where = f" ({method} {path}" + (f" -> {status}" if status is not None else "") + ")" if path else ""
        super().__init__(message + where + (f": {excerpt}" if excerpt else ""))

    @property
    def transient(self) -> bool:
        """True for answers worth retrying: no answer at all, 429, 502, 503, 504."""
        return self.status is None or self.status in (429, 502, 503, 504)


class ProviderError(InstanceError):
    """The builder's model could not answer: the instance has no model configured, or its provider
    refused or failed the call. Nothing the agent did (or did not do) is evidence after this.

    ``reason`` is the instance's own message (what a report shows as the reason), already redacted.
    """

    def __init__(
        self, message: str, *, reason: str, method: str = "", path: str = "", status: int | None = None
    ) -> None:
        self.reason = reason
        super().__init__(message, method=method, path=path, status=status)


class MissingRouteError(InstanceError):
    """The instance does not have the route at all (Express's ``Cannot GET ...`` 404), as opposed to a
    route that answered "not found" for one id."""


class SeedingError(RunError):
    """A seed could not be restored (or a prior run could not be staged) on the instance."""


class ReplayError(RunError):
    """A replay seed could not be rebuilt from LangSmith or an exported trace file."""


class ModelError(RunError):
    """A call to the proxy or judge model failed after its retries."""


class JudgeError(ModelError):
    """The judge or the scenario verifier returned nothing usable."""


class ConversationError(RunError):
    """The conversation loop could not continue (an unanswerable widget, a broken event stream)."""
