"""Compare two runs: per case and unit, what changed, and whether a drop is more than chance.

:func:`compare_results` is the engine behind ``threadcase compare BASELINE CANDIDATE`` and
``threadcase run --baseline``. Per unit (``case`` × ``unit`` key) it puts the two runs' judged
passes and failures side by side, with the iterations behind each, and classes each side
``always-passes`` / ``always-fails`` / ``flaky`` / ``not-judged``, so a unit that became flaky shows
as such. A drop in pass rate is a **regression** only when Fisher's exact test (one-sided, on the
2×2 table of passes and failures) puts its p-value at or below ``alpha``: with one iteration a side,
a single flip has p = 0.5 and is listed as "newly failing", never as a regression.

Not-judged verdicts never enter a rate (a unit newly not judged is listed as such, never as a
failure). Per case it also sets the mean token numbers (input, output, cached), live user turns and
seconds of the two runs side by side, from the iterations that have them (no token data = no
number, never a zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.harness.provenance import context_differences
from threadcase.harness.stats import CaseStats, UnitStats, case_stats
from threadcase.verdicts import CaseResult, RunContext, UnitKind

__all__ = [
    "METRICS",
    "CaseChange",
    "Comparison",
    "MetricDelta",
    "RunRef",
    "Side",
    "UnitChange",
    "UnitClass",
    "compare_results",
    "fisher_exact_one_sided",
]

UnitClass = Literal["always-passes", "always-fails", "flaky", "not-judged", "absent"]
Change = Literal[
    "newly failing",
    "newly passing",
    "fails more",
    "fails less",
    "newly not judged",
    "newly judged",
    "added",
    "removed",
    "unchanged",
]
METRICS = ("input_tokens", "output_tokens", "cached_tokens", "turns", "seconds")
"""The per-case numbers compared, each a mean per case-iteration."""

EXIT_OK, EXIT_REGRESSED, EXIT_NOTHING_TO_COMPARE = 0, 1, 3


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def fisher_exact_one_sided(
    baseline_passes: int, baseline_judged: int, candidate_passes: int, candidate_judged: int, *, worse: bool
) -> float:
    """Fisher's exact test on the 2×2 table of passes and failures, one-sided.

    ``worse``: the p-value of the candidate passing this rarely or *more* rarely if both runs shared
    one pass probability (the hypergeometric lower tail of the candidate's passes, margins fixed);
    otherwise the upper tail (this often or more often). Exact rational arithmetic, so 0/5 against
    5/5 is exactly 1/252.
    """
    for name, passes, judged in (
        ("baseline", baseline_passes, baseline_judged),
        ("candidate", candidate_passes, candidate_judged),
    ):
        if not 0 <= passes <= judged:
            raise ValueError(f"{name}: need 0 <= passes <= judged, got {passes}/{judged}")
    total = baseline_judged + candidate_judged
    passes = baseline_passes + candidate_passes
    if total == 0 or candidate_judged == 0 or baseline_judged == 0:
        return 1.0
    low, high = max(0, candidate_judged - (total - passes)), min(candidate_judged, passes)
    outcomes = range(low, candidate_passes + 1) if worse else range(candidate_passes, high + 1)
    tail = sum(math.comb(passes, x) * math.comb(total - passes, candidate_judged - x) for x in outcomes)
    return float(Fraction(tail, math.comb(total, candidate_judged)))


class Side(_Model):
    """One unit in one run, across that run's iterations."""

    iterations: int = 0
    """Iterations that produced a verdict for the unit (any status); 0 = the unit is not in this run."""
    evaluated: int = 0
    """Iterations where it was judged (pass or fail)."""
    passes: int = 0
    failures: int = 0
    not_judged: int = 0
    pass_rate: float | None = None
    """``passes / evaluated``; None when never judged."""
    unit_class: UnitClass = "absent"

    @classmethod
    def of(cls, stats: UnitStats | None) -> Side:
        if stats is None:
            return cls()
        if stats.evaluated == 0:
            unit_class: UnitClass = "not-judged"
        elif stats.failures == 0:
            unit_class = "always-passes"
        elif stats.passes == 0:
            unit_class = "always-fails"
        else:
            unit_class = "flaky"
        return cls(
            iterations=stats.iterations,
            evaluated=stats.evaluated,
            passes=stats.passes,
            failures=stats.failures,
            not_judged=stats.not_judged,
            pass_rate=stats.pass_rate,
            unit_class=unit_class,
        )

    def counts(self) -> str:
        """``3/5`` (passes of judged), ``–/5`` when never judged, ``–`` when absent."""
        if self.iterations == 0:
            return "–"
        return f"{self.passes}/{self.evaluated}" if self.evaluated else f"–/{self.iterations}"


class UnitChange(_Model):
    """One unit of one case, baseline against candidate."""

    case_slug: str
    unit: str
    kind: UnitKind
    label: str
    baseline: Side
    candidate: Side
    change: Change
    p_value: float | None = None
    """One-sided Fisher p-value in the direction the pass rate moved; None unless both sides judged it."""
    significant: bool = False
    """The pass rate moved and ``p_value <= alpha``."""
    regressed: bool = False
    """Significantly worse: what makes ``compare`` exit 1."""
    reason: str = ""
    """The candidate's last reason for the unit (the baseline's when the candidate lacks it)."""

    @property
    def class_change(self) -> str | None:
        """``always-passes -> flaky`` when the unit's class differs between the runs."""
        a, b = self.baseline.unit_class, self.candidate.unit_class
        return None if a == b else f"{a} -> {b}"


class MetricDelta(_Model):
    """One per-case number (a mean per case-iteration) in both runs."""

    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = None
    """``candidate - baseline`` when both exist."""
    relative: float | None = None
    """``delta / baseline`` when both exist and the baseline is not 0."""


class CaseChange(_Model):
    """One case, baseline against candidate: its status, its numbers and its units."""

    case_slug: str
    baseline_status: str = "absent"
    """Across iterations (``pass``, ``fail``, ``not_verified``, ``errored``), or ``absent``."""
    candidate_status: str = "absent"
    baseline_iterations: int = 0
    candidate_iterations: int = 0
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    """Keyed by :data:`METRICS`."""
    units: list[UnitChange] = Field(default_factory=list)


class RunRef(_Model):
    """Which run a side of the comparison is."""

    path: str = ""
    run_id: str = ""
    suite: str = ""
    case_iterations: int = 0
    regrade_of: str | None = None
    merged_from: list[str] = Field(default_factory=list)


class CompareTotals(_Model):
    """Units by what happened to them."""

    units: int = 0
    regressed: int = 0
    """Significantly worse (exit 1)."""
    improved: int = 0
    """Significantly better."""
    newly_failing: int = 0
    newly_passing: int = 0
    fails_more: int = 0
    fails_less: int = 0
    newly_not_judged: int = 0
    newly_judged: int = 0
    became_flaky: int = 0
    added: int = 0
    removed: int = 0
    unchanged: int = 0


class Comparison(_Model):
    """What ``compare.json`` holds."""

    baseline: RunRef
    candidate: RunRef
    alpha: float
    """A drop in pass rate is a regression when its one-sided Fisher p-value is at most this."""
    setting_changes: list[str] = Field(default_factory=list)
    """What differs between the runs besides the agent (suite digest, selection, models, ...)."""
    cases: list[CaseChange] = Field(default_factory=list)
    totals: CompareTotals = Field(default_factory=CompareTotals)
    exit_code: int = EXIT_OK
    """0 no significant regression; 1 a unit regressed significantly; 3 a side judged nothing."""

    def units(self) -> list[UnitChange]:
        return [unit for case in self.cases for unit in case.units]

    def regressions(self) -> list[UnitChange]:
        return [unit for unit in self.units() if unit.regressed]


def _change(base: Side, cand: Side) -> Change:
    if base.iterations == 0:
        return "added"
    if cand.iterations == 0:
        return "removed"
    if base.evaluated and not cand.evaluated:
        return "newly not judged"
    if cand.evaluated and not base.evaluated:
        return "newly judged"
    if not base.evaluated:
        return "unchanged"
    if base.failures == 0 and cand.failures > 0:
        return "newly failing"
    if base.failures > 0 and cand.failures == 0:
        return "newly passing"
    base_rate, cand_rate = Fraction(base.passes, base.evaluated), Fraction(cand.passes, cand.evaluated)
    if cand_rate < base_rate:
        return "fails more"
    if cand_rate > base_rate:
        return "fails less"
    return "unchanged"


def _unit_change(slug: str, base: UnitStats | None, cand: UnitStats | None, alpha: float) -> UnitChange:
    either = cand or base
    assert either is not None
    b, c = Side.of(base), Side.of(cand)
    p_value: float | None = None
    significant = regressed = False
    if b.evaluated and c.evaluated:
        base_rate, cand_rate = Fraction(b.passes, b.evaluated), Fraction(c.passes, c.evaluated)
        worse = cand_rate < base_rate
        p_value = (
            1.0
            if cand_rate == base_rate
            else fisher_exact_one_sided(b.passes, b.evaluated, c.passes, c.evaluated, worse=worse)
        )
        significant = cand_rate != base_rate and p_value <= alpha
        regressed = significant and worse
    return UnitChange(
        case_slug=slug,
        unit=either.unit,
        kind=either.kind,
        label=either.label,
        baseline=b,
        candidate=c,
        change=_change(b, c),
        p_value=p_value,
        significant=significant,
        regressed=regressed,
        reason=either.last_reason,
    )


def _case_metrics(results: Sequence[CaseResult]) -> dict[str, float | None]:
    """Mean per case-iteration of each metric, over the iterations that have it."""
    samples: dict[str, list[float]] = {name: [] for name in METRICS}
    for result in results:
        samples["seconds"].append(result.seconds)
        record = result.record
        if record is None:
            continue
        samples["turns"].append(sum(1 for t in record.live_turns if t.role == "user"))
        steps = [step for steps in record.usage.values() for step in steps]
        if steps:
            samples["input_tokens"].append(sum(s.inputTokens for s in steps))
            samples["output_tokens"].append(sum(s.outputTokens for s in steps))
            samples["cached_tokens"].append(sum(s.cachedInputTokens for s in steps))
    return {name: (sum(values) / len(values) if values else None) for name, values in samples.items()}


def _delta(base: float | None, cand: float | None) -> MetricDelta:
    if base is None or cand is None:
        return MetricDelta(baseline=base, candidate=cand)
    delta = cand - base
    return MetricDelta(baseline=base, candidate=cand, delta=delta, relative=(delta / base) if base else None)


def _run_ref(path: str, results: Sequence[CaseResult]) -> RunRef:
    context = next((r.run_context for r in results if r.run_context is not None), None)
    return RunRef(
        path=path,
        run_id=",".join(dict.fromkeys(r.run_id for r in results)),
        suite=context.suite if context is not None else "",
        case_iterations=len(results),
        regrade_of=context.regrade_of if context is not None else None,
        merged_from=list(context.merged_from) if context is not None else [],
    )


def _context(results: Sequence[CaseResult]) -> RunContext | None:
    return next((r.run_context for r in results if r.run_context is not None), None)


def _totals(units: Sequence[UnitChange]) -> CompareTotals:
    counts = {
        "units": len(units),
        "regressed": sum(u.regressed for u in units),
        "improved": sum(u.significant and not u.regressed for u in units),
        "became_flaky": sum(u.candidate.unit_class == "flaky" and u.baseline.unit_class != "flaky" for u in units),
    }
    for change in ("newly failing", "newly passing", "fails more", "fails less", "newly not judged", "newly judged"):
        counts[change.replace(" ", "_")] = sum(u.change == change for u in units)
    for change in ("added", "removed", "unchanged"):
        counts[change] = sum(u.change == change for u in units)
    return CompareTotals(**counts)


def compare_results(
    baseline: Sequence[CaseResult],
    candidate: Sequence[CaseResult],
    *,
    alpha: float = 0.05,
    baseline_path: str = "",
    candidate_path: str = "",
) -> Comparison:
    """Compare two runs' results (see the module docstring); ``alpha`` is the significance level."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    base_stats = {c.case_slug: c for c in case_stats(baseline)}
    cand_stats = {c.case_slug: c for c in case_stats(candidate)}
    base_by_case: dict[str, list[CaseResult]] = {}
    cand_by_case: dict[str, list[CaseResult]] = {}
    for result in baseline:
        base_by_case.setdefault(result.case_slug, []).append(result)
    for result in candidate:
        cand_by_case.setdefault(result.case_slug, []).append(result)

    cases: list[CaseChange] = []
    for slug in dict.fromkeys([*base_stats, *cand_stats]):
        b, c = base_stats.get(slug), cand_stats.get(slug)
        cases.append(_case_change(slug, b, c, base_by_case.get(slug, []), cand_by_case.get(slug, []), alpha))
    units = [unit for case in cases for unit in case.units]
    totals = _totals(units)
    judged_nothing = not any(r.status in ("pass", "fail") for r in baseline) or not any(
        r.status in ("pass", "fail") for r in candidate
    )
    exit_code = EXIT_REGRESSED if totals.regressed else (EXIT_NOTHING_TO_COMPARE if judged_nothing else EXIT_OK)
    base_context, cand_context = _context(baseline), _context(candidate)
    setting_changes = (
        context_differences(base_context, cand_context) if base_context is not None and cand_context is not None else []
    )
    return Comparison(
        baseline=_run_ref(baseline_path, baseline),
        candidate=_run_ref(candidate_path, candidate),
        alpha=alpha,
        setting_changes=setting_changes,
        cases=cases,
        totals=totals,
        exit_code=exit_code,
    )


def _case_change(
    slug: str,
    base: CaseStats | None,
    cand: CaseStats | None,
    base_results: Sequence[CaseResult],
    cand_results: Sequence[CaseResult],
    alpha: float,
) -> CaseChange:
    base_units = {u.unit: u for u in base.units} if base is not None else {}
    cand_units = {u.unit: u for u in cand.units} if cand is not None else {}
    units = [
        _unit_change(slug, base_units.get(key), cand_units.get(key), alpha)
        for key in dict.fromkeys([*base_units, *cand_units])
    ]
    base_metrics, cand_metrics = _case_metrics(base_results), _case_metrics(cand_results)
    return CaseChange(
        case_slug=slug,
        baseline_status=base.status if base is not None else "absent",
        candidate_status=cand.status if cand is not None else "absent",
        baseline_iterations=base.iterations if base is not None else 0,
        candidate_iterations=cand.iterations if cand is not None else 0,
        metrics={name: _delta(base_metrics[name], cand_metrics[name]) for name in METRICS},
        units=units,
    )
