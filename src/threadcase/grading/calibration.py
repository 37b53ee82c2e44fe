"""Judge calibration: does the configured judge agree with people on hand-labelled items?

A calibration set is a JSONL file, one item per line: ``{id, transcript, expectation, human:
"pass"|"fail", note}`` — a rendered transcript, one expectation, the human verdict and why. The
judge grades each item exactly as it grades a run (same system prompt, same answer shape); the
result is the raw agreement and Cohen's kappa (agreement corrected for chance, which matters when
most items share one label). Below the threshold, a run's judge verdicts are not judged
("judge uncalibrated: agreement 0.82 < 0.90").

An item the judge could not grade counts as a disagreement: a judge that cannot answer is not
calibrated by staying silent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from threadcase._util.fanout import fan_out
from threadcase.errors import ConfigError
from threadcase.grading._call import grading_call
from threadcase.grading.judge import JudgeAnswer
from threadcase.grading.prompts import (
    JUDGE_EXPECTATIONS_FOOTER,
    JUDGE_PROMPT_VERSION,
    JUDGE_RESULT_SCHEMA,
    JUDGE_SYSTEM_PROMPT,
)
from threadcase.llm import RecordedAnswerMissing
from threadcase.models import ModelRole, ModelSettings, ModelUsage

__all__ = [
    "DEFAULT_SET",
    "DEFAULT_THRESHOLD",
    "CalibrationItem",
    "CalibrationResult",
    "ItemOutcome",
    "calibrate",
    "calibrate_file",
    "cohen_kappa",
    "load_calibration_set",
]

DEFAULT_THRESHOLD = 0.9
DEFAULT_SET = Path("cases/calibration/demo.jsonl")
"""The shipped set for the demo instance, relative to the repository root."""


class CalibrationItem(BaseModel):
    """One hand-labelled item of a calibration set."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    transcript: str = Field(min_length=1)
    """A rendered transcript (``render_transcript``'s output, or the same shape)."""
    expectation: str = Field(min_length=1)
    human: Literal["pass", "fail"]
    note: str = ""
    """Why the human labelled it so: what a reviewer checks a disagreement against."""


class ItemOutcome(BaseModel):
    """How the judge graded one calibration item, beside the human label."""

    model_config = ConfigDict(extra="forbid")

    id: str
    human: Literal["pass", "fail"]
    judge: Literal["pass", "fail"] | None
    """None: the judge returned nothing usable for this item."""
    reason: str = ""

    @property
    def agrees(self) -> bool:
        return self.judge == self.human


class CalibrationResult(BaseModel):
    """How well the judge agreed with the human labels, and whether that clears the threshold."""

    model_config = ConfigDict(extra="forbid")

    agreement: float
    kappa: float
    n: int
    threshold: float
    passed: bool
    judge_model: str | None = None
    prompt_version: str = JUDGE_PROMPT_VERSION
    set_path: str = ""
    unjudged: int = 0
    items: list[ItemOutcome] = Field(default_factory=list)
    judge: ModelRole | None = None
    """How the judge was called (timeout, attempts, temperature, seed, max_tokens)."""
    usage: ModelUsage = Field(default_factory=ModelUsage)
    """What grading the set cost."""

    @property
    def gate_reason(self) -> str:
        """The not-judged reason a failing calibration puts on every judge verdict of a run.

        Names the unjudged items when there were some: an agreement of 0.00 because the judge never
        answered is a different problem (endpoint, key, model name) from a judge that disagrees.
        """
        reason = f"judge uncalibrated: agreement {self.agreement:.2f} < {self.threshold:.2f}"
        if self.unjudged:
            reason += f" ({self.unjudged} of {self.n} items unjudged: the judge did not answer)"
        return reason


def load_calibration_set(path: Path) -> list[CalibrationItem]:
    """Read and validate a calibration JSONL file; a bad line is a ``ConfigError`` naming file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the calibration set ({exc.strerror}); pass --set FILE") from exc
    items: list[CalibrationItem] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = CalibrationItem.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not a JSON object ({exc.msg})") from exc
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            raise ConfigError(
                f"{path}:{number}: {where}: {first['msg']} (got {first.get('input')!r}); an item is "
                '{"id", "transcript", "expectation", "human": "pass"|"fail", "note"}'
            ) from exc
        if item.id in seen:
            raise ConfigError(f"{path}:{number}: id: duplicate item id {item.id!r}; ids must be unique")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise ConfigError(f"{path}: the calibration set has no items")
    return items


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's kappa for two raters' pass/fail labels: (observed − chance) / (1 − chance)."""
    if not pairs:
        return 0.0
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    a_yes = sum(1 for a, _ in pairs if a) / n
    b_yes = sum(1 for _, b in pairs if b) / n
    chance = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    if chance >= 1.0:
        # Both raters gave one label to everything: agreement is total, and chance explains all of it.
        return 1.0 if observed == 1.0 else 0.0
    return (observed - chance) / (1 - chance)


async def _grade_item(item: CalibrationItem, models: ModelSettings, usage: ModelUsage) -> ItemOutcome:
    conversation = (
        f"## Conversation transcript\n{item.transcript}\n\n"
        f"## Expectations\n0. {item.expectation}\n\n{JUDGE_EXPECTATIONS_FOOTER}"
    )
    try:
        call = await grading_call(
            models,
            "judge",
            case=f"calibration item {item.id!r}",
            system=JUDGE_SYSTEM_PROMPT,
            user_parts=["## Workflows built\n(not shown for this item: judge from the transcript)", conversation],
            schema_name="expectation_verdicts",
            schema=JUDGE_RESULT_SCHEMA,
            parse=JudgeAnswer.model_validate,
        )
    except RecordedAnswerMissing as exc:
        # Unjudged, with the miss as the reason: a judge replayed without its answers is not calibrated.
        return ItemOutcome(id=item.id, human=item.human, judge=None, reason=str(exc))
    usage.add(call.usage)
    verdict = next((r for r in call.value.results if r.index == 0), None) if call.value else None
    if verdict is None:
        why = call.errors[-1] if call.errors else "no verdict returned"
        return ItemOutcome(id=item.id, human=item.human, judge=None, reason=why)
    return ItemOutcome(id=item.id, human=item.human, judge="pass" if verdict.passed else "fail", reason=verdict.reason)


async def calibrate(
    items: list[CalibrationItem],
    *,
    models: ModelSettings,
    threshold: float = DEFAULT_THRESHOLD,
    concurrency: int = 4,
    set_path: str = "",
) -> CalibrationResult:
    """Grade every item with the configured judge; agreement, kappa, and whether it clears ``threshold``."""
    if not models.judge_enabled:
        raise ConfigError("no judge model configured: set THREADCASE_JUDGE_MODEL (and OPENAI_API_KEY) to calibrate")
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold {threshold!r} is not between 0 and 1")
    usage = ModelUsage()
    outcomes = await fan_out(items, lambda item: _grade_item(item, models, usage), limit=concurrency)
    n = len(outcomes)
    agreement = sum(1 for o in outcomes if o.agrees) / n if n else 0.0
    # An unjudged item is scored as the opposite of the human label (a disagreement), never skipped.
    pairs = [(o.human == "pass", (o.judge == "pass") if o.judge else o.human != "pass") for o in outcomes]
    return CalibrationResult(
        agreement=agreement,
        kappa=cohen_kappa(pairs),
        n=n,
        threshold=threshold,
        passed=n > 0 and agreement >= threshold,
        judge_model=models.judge_model,
        judge=models.role("judge"),
        usage=usage,
        set_path=set_path,
        unjudged=sum(1 for o in outcomes if o.judge is None),
        items=outcomes,
    )


async def calibrate_file(
    path: Path, *, models: ModelSettings, threshold: float = DEFAULT_THRESHOLD, concurrency: int = 4
) -> CalibrationResult:
    """Load the set at ``path`` and :func:`calibrate` the judge on it (what a run's gate calls)."""
    if not models.judge_enabled:  # checked before reading so the one-line error names the real problem
        raise ConfigError("no judge model configured: set THREADCASE_JUDGE_MODEL (and OPENAI_API_KEY) to calibrate")
    items = load_calibration_set(path)
    return await calibrate(items, models=models, threshold=threshold, concurrency=concurrency, set_path=str(path))
