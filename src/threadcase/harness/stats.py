"""Statistics across iterations: per unit pass rate, pass@k, pass^k, Wilson interval, flip rate.

Only judged verdicts (``pass`` / ``fail``) are evaluated; ``not_judged`` and ``reviewed`` are counted
apart and never enter a rate, so a unit that was never judged has no rate at all (``None``), which
reports show as "not verified" instead of a misleading 0 % or 100 %.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from threadcase.verdicts import CaseResult, UnitKind, UnitVerdict

__all__ = [
    "CaseStats",
    "UnitStats",
    "case_stats",
    "flip_rate",
    "pass_at_k",
    "pass_hat_k",
    "wilson_interval",
]

_Z95 = 1.959963984540054


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` draws (without replacement) from ``n`` runs passed.

    ``1 - C(n-c, k) / C(n, k)``: the unbiased estimator of the Codex paper.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that ``k`` independent runs all pass, estimated as ``(c/n)^k``."""
    if not 0 <= c <= n or n == 0 or k < 1:
        raise ValueError(f"pass^k needs 0 <= c <= n, n >= 1 and k >= 1, got n={n} c={c} k={k}")
    return (c / n) ** k


def wilson_interval(n: int, c: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval for ``c`` passes out of ``n`` (95 % by default).

    Unlike the normal approximation it stays inside [0, 1] and is honest for small ``n`` and for
    rates of 0 or 1, which is exactly where eval suites live.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = c / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def flip_rate(outcomes: Sequence[bool]) -> float | None:
    """The share of consecutive judged iterations whose verdict differs; None below two."""
    if len(outcomes) < 2:
        return None
    flips = sum(1 for a, b in itertools.pairwise(outcomes) if a != b)
    return flips / (len(outcomes) - 1)


class UnitStats(_Model):
    """One unit of one case, across all its iterations."""

    unit: str
    kind: UnitKind
    label: str
    iterations: int
    """How many iterations produced a verdict for this unit (any status)."""
    evaluated: int
    """Iterations where the unit was judged (pass or fail); not judged and reviewed are excluded."""
    passes: int
    failures: int
    not_judged: int
    reviewed: int
    pass_rate: float | None
    """``passes / evaluated``; None when the unit was never judged."""
    pass_at_k: list[float] = Field(default_factory=list)
    """Index ``k-1`` holds pass@k for k = 1..evaluated."""
    pass_hat_k: list[float] = Field(default_factory=list)
    """Index ``k-1`` holds pass^k for k = 1..evaluated."""
    wilson_low: float | None = None
    wilson_high: float | None = None
    flip_rate: float | None = None
    """Share of consecutive judged iterations whose verdict flipped; None below two judged."""
    last_reason: str = ""

    @property
    def verified(self) -> bool:
        return self.evaluated > 0


def unit_stats(verdicts: Sequence[tuple[int, UnitVerdict]]) -> UnitStats:
    """Statistics of one unit from ``(iteration, verdict)`` pairs (any order)."""
    ordered = sorted(verdicts, key=lambda pair: pair[0])
    first = ordered[0][1]
    judged = [v.status == "pass" for _, v in ordered if v.status in ("pass", "fail")]
    n = len(judged)
    c = sum(judged)
    low, high = wilson_interval(n, c) if n else (None, None)
    return UnitStats(
        unit=first.unit,
        kind=first.kind,
        label=first.label,
        iterations=len(ordered),
        evaluated=n,
        passes=c,
        failures=n - c,
        not_judged=sum(1 for _, v in ordered if v.status == "not_judged"),
        reviewed=sum(1 for _, v in ordered if v.status == "reviewed"),
        pass_rate=c / n if n else None,
        pass_at_k=[pass_at_k(n, c, k) for k in range(1, n + 1)],
        pass_hat_k=[pass_hat_k(n, c, k) for k in range(1, n + 1)],
        wilson_low=low,
        wilson_high=high,
        flip_rate=flip_rate(judged),
        last_reason=ordered[-1][1].reason,
    )


class CaseStats(_Model):
    """One case across its iterations."""

    case_slug: str
    case_file: str = ""
    iterations: int
    statuses: dict[str, int] = Field(default_factory=dict)
    """Case-iteration status -> count (``pass``, ``fail``, ``not_judged``, ``errored``)."""
    units: list[UnitStats] = Field(default_factory=list)
    verified: bool
    """False ("not verified") when no unit was judged in any iteration."""
    status: str
    """``pass`` / ``fail`` / ``not_verified`` / ``errored`` across all iterations."""


def case_stats(results: Iterable[CaseResult]) -> list[CaseStats]:
    """Group case-iterations by case (first-seen order) and compute unit statistics."""
    by_case: dict[str, list[CaseResult]] = {}
    for result in results:
        by_case.setdefault(result.case_slug, []).append(result)
    out: list[CaseStats] = []
    for slug, runs in by_case.items():
        per_unit: dict[str, list[tuple[int, UnitVerdict]]] = {}
        for run in runs:
            for verdict in run.verdicts:
                per_unit.setdefault(verdict.unit, []).append((run.iteration, verdict))
        units = [unit_stats(pairs) for pairs in per_unit.values()]
        statuses: dict[str, int] = {}
        for run in runs:
            statuses[run.status] = statuses.get(run.status, 0) + 1
        verified = any(u.verified for u in units)
        if any(u.failures for u in units):
            status = "fail"
        elif verified:
            status = "pass"
        elif statuses.get("errored", 0) == len(runs):
            status = "errored"
        else:
            status = "not_verified"
        out.append(
            CaseStats(
                case_slug=slug,
                case_file=runs[0].case_file,
                iterations=len(runs),
                statuses=statuses,
                units=units,
                verified=verified,
                status=status,
            )
        )
    return out
