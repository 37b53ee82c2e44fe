"""The verdict model: every graded unit is pass, fail or not judged, with a reason and an attribution.

A unit is one process or outcome expectation, one deterministic check, one execution scenario, or
one ``review`` criterion (never counted as passed). Only builder-attributed failures count against
the agent. :class:`CaseResult` is one line of the run journal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.records import RunRecord, utc_now

__all__ = [
    "Attribution",
    "CaseResult",
    "CaseStatus",
    "ErrorInfo",
    "PremiseResult",
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


class ErrorInfo(_Model):
    """A failure inside a case, recorded as a result (never a crash of the run)."""

    type: str
    message: str
    attribution: Attribution = "framework_issue"


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
