"""The verdict model: every graded unit is pass, fail or not judged, with a reason and an attribution.

A unit is one process or outcome expectation, one deterministic check, one execution scenario, or
one ``review`` criterion (never counted as passed). Only builder-attributed failures count against
the agent. :class:`CaseResult` is one line of the run journal; its :class:`CaseHashes` and
:class:`RunContext` say what was run and how, so a journal can be re-graded, merged and compared on
its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.models import ModelRole, ModelUsage
from threadcase.records import RunRecord, utc_now

__all__ = [
    "Attribution",
    "CaseHashes",
    "CaseResult",
    "CaseStatus",
    "ErrorCause",
    "ErrorInfo",
    "PremiseResult",
    "RunContext",
    "UnitKind",
    "UnitStatus",
    "UnitVerdict",
    "case_status",
]

UnitStatus = Literal["pass", "fail", "not_judged", "reviewed"]
UnitKind = Literal["process", "outcome", "check", "scenario", "review"]
Attribution = Literal["builder_issue", "proxy_issue", "mock_issue", "framework_issue", "verification_gap", "timeout"]
"""Who is to blame: the agent under test (``builder_issue``, the only one that counts against it), the
simulated user (``proxy_issue``: it answered what the script did not say, ignored a note, re-sent a
turn), the execution mock, the harness or instance, missing evidence, or a budget that ran out."""
CaseStatus = Literal["pass", "fail", "not_judged", "errored"]

JOURNAL_SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UnitVerdict(_Model):
    """The verdict on one unit of one case-iteration."""

    unit: str
    """A key stable across iterations and runs: ``process#0``, ``outcome#1``, ``check:mustContain#0``,
    ``check:transcriptRules:<name>``, ``scenario:<name>``, ``review#0``."""
    kind: UnitKind
    label: str
    """What was asserted, in words: the expectation text, or a description of the check."""
    status: UnitStatus
    reason: str
    """One sentence: why, quoting evidence where there is some."""
    attribution: Attribution | None = None
    """Who is to blame for a fail or a not-judged; None on a pass."""
    turn_index: int | None = None
    """Where in the transcript the verdict points, when it points somewhere."""

    @property
    def counts_against_builder(self) -> bool:
        return self.status == "fail" and self.attribution in (None, "builder_issue")


class PremiseResult(_Model):
    """Whether one premise of the case held (compaction happened, seed restored, ...)."""

    name: str
    held: bool
    reason: str
    units: list[str] = Field(default_factory=list)
    """The units that depend on this premise alone (e.g. the token expectations); empty = every unit of the case."""
    attribution: Attribution | None = None
    """Who is to blame when it did not hold (None: the harness or the instance, ``framework_issue``)."""


class ErrorCause(_Model):
    """One leaf exception behind a case's error (an exception group is unwrapped to its leaves)."""

    type: str
    message: str
    traceback: str | None = None
    """Only under ``THREADCASE_DEBUG=1`` (redacted)."""


class ErrorInfo(_Model):
    """A failure inside a case, recorded as a result (never a crash of the run).

    For an exception group, ``type`` and ``message`` are its one leaf's (or name how many failed), and
    ``causes`` lists every leaf: the outer "unhandled errors in a TaskGroup" says nothing.
    """

    type: str
    message: str
    attribution: Attribution = "framework_issue"
    causes: list[ErrorCause] = Field(default_factory=list)
    """The leaf exceptions (one for a plain exception), each with its traceback under debug."""


class CaseHashes(_Model):
    """SHA-256 digests of a case as it was run: the file, and the parts that shaped the conversation.

    Re-grading refuses a case whose ``seed``, ``conversation``, ``scenarios`` or ``setup`` digest no
    longer matches (the stored conversation answers another case); the ``file`` digest versions the
    case's LangSmith example. Grading-only fields (expectations, ``checks``, description, tags,
    datasets, complexity) are in none of the part digests, so changing them is what re-grading is for.
    """

    file: str
    """The case file's bytes."""
    seed: str
    """The ``seed`` object (null when the case has none)."""
    conversation: str
    """The authored ``conversation`` turns, director notes included."""
    scenarios: str
    """The ``executionScenarios``, with their data setup and seeded tables."""
    setup: str
    """Every other field that shapes the run: credentials, budgets, compaction, build mode, ..."""


class RunContext(_Model):
    """How a run was made: what it selected, from which suite, with which settings.

    Every journal line carries it, so ``threadcase report --merge`` can refuse journals of different
    suites or settings, ``threadcase compare`` can say what changed besides the agent, and a re-grade
    or a merge says what it was made from.
    """

    suite: str = ""
    """The suite path as given to the run."""
    suite_hash: str = ""
    """SHA-256 over the selected cases' slugs and file digests, before sharding: equal across the
    shards of one run, different as soon as one selected case file differs."""
    selection: dict[str, str | None] = Field(default_factory=dict)
    """``filter``, ``exclude``, ``tier``, ``tag`` as given."""
    iterations: int = 1
    shard: str | None = None
    """``I/N`` when the run was one shard of N; None for a whole run."""
    settings: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    """The settings that change what a verdict means (instance kind, demo misbehaviour and faults,
    models, prompt versions, budgets); never URLs, keys or passwords."""
    regrade_of: str | None = None
    """The run id this run re-graded (``threadcase regrade``); None for a run that conversed."""
    merged_from: list[str] = Field(default_factory=list)
    """The run ids this journal was merged from (``threadcase report --merge``)."""


class CaseResult(_Model):
    """One case-iteration, graded: one line of ``journal.jsonl``."""

    schema_version: int = JOURNAL_SCHEMA_VERSION
    run_id: str
    case_slug: str
    case_file: str = ""
    iteration: int = 0
    lane: str = ""
    started_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None
    seconds: float = 0.0
    status: CaseStatus
    verdicts: list[UnitVerdict] = Field(default_factory=list)
    premises: list[PremiseResult] = Field(default_factory=list)
    record: RunRecord | None = None
    error: ErrorInfo | None = None
    judge: dict[str, str | bool | int | float | None] = Field(default_factory=dict)
    """Which judge graded it and its calibration agreement, when a judge was configured."""
    case_hashes: CaseHashes | None = None
    """Digests of the case as run (None in journals written before they were recorded)."""
    run_context: RunContext | None = None
    """How the run was made (None in journals written before it was recorded)."""
    models: list[ModelRole] = Field(default_factory=list)
    """How each role that has a model (proxy, judge, verifier) called it: model, timeout, attempts,
    temperature, seed, max_tokens, and whether answers were live, recorded or replayed."""
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """Token usage by role: ``agent`` (the builder under test, from run debug), ``proxy``, ``judge``,
    ``verifier`` — only roles that used any."""

    @property
    def verified(self) -> bool:
        """Some unit was judged (pass or fail) and nothing errored: the case-iteration tested something."""
        return self.error is None and any(v.status in ("pass", "fail") for v in self.verdicts)


def case_status(verdicts: list[UnitVerdict], error: ErrorInfo | None = None) -> CaseStatus:
    """A case fails when a unit fails, passes when a unit passed and none failed, else not judged.

    ``reviewed`` units never make a case pass: a case of nothing but review criteria is not judged.
    An error with no judged unit is ``errored``.
    """
    if any(v.status == "fail" for v in verdicts):
        return "fail"
    if any(v.status == "pass" for v in verdicts):
        return "pass"
    return "errored" if error is not None else "not_judged"
