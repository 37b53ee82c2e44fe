"""The comparison engine on hand-made results: Fisher's exact test, unit classes, changes, deltas, exit codes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import pytest

from tests.report.factory import result
from threadcase.harness.compare import compare_results, fisher_exact_one_sided
from threadcase.report.compare_view import compare_lines, render_compare_html
from threadcase.verdicts import CaseResult, UnitStatus
from threadcase.wire import TokenUsage


def runs(slug: str, outcomes: Sequence[UnitStatus | tuple[UnitStatus, ...]]) -> list[CaseResult]:
    """One result per iteration; each outcome is the status of unit #0 (or of units #0, #1, ...)."""
    return [
        result(slug, i, outcome if isinstance(outcome, tuple) else (outcome,)) for i, outcome in enumerate(outcomes)
    ]


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected"),
    [
        ((5, 5), (0, 5), Fraction(1, 252)),
        ((5, 5), (1, 5), Fraction(6, 252)),
        ((5, 5), (2, 5), Fraction(21, 252)),
        ((1, 1), (0, 1), Fraction(1, 2)),
        ((3, 3), (0, 3), Fraction(1, 20)),
        # 15 passes among 20; the candidate's 10 hold 5 or fewer: C(15,5)·C(5,5) / C(20,10)
        ((10, 10), (5, 10), Fraction(3003, 184756)),
    ],
)
def test_fisher_lower_tail_matches_the_hypergeometric_by_hand(
    baseline: tuple[int, int], candidate: tuple[int, int], expected: Fraction
) -> None:
    assert fisher_exact_one_sided(*baseline, *candidate, worse=True) == pytest.approx(float(expected), rel=1e-12)


def test_fisher_tails_mirror_each_other_and_never_exceed_one() -> None:
    for bn, cn in itertools.product(range(1, 5), repeat=2):
        for bp, cp in itertools.product(range(bn + 1), range(cn + 1)):
            worse = fisher_exact_one_sided(bp, bn, cp, cn, worse=True)
            assert 0.0 < worse <= 1.0
            # "the candidate passes this rarely" is "the baseline passes this often", seen from the other side
            assert worse == pytest.approx(fisher_exact_one_sided(cp, cn, bp, bn, worse=False))


def test_fisher_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="candidate"):
        fisher_exact_one_sided(1, 1, 3, 2, worse=True)


def test_a_drop_from_always_to_never_over_five_iterations_is_a_regression() -> None:
    comparison = compare_results(runs("a", ["pass"] * 5), runs("a", ["fail"] * 5))
    (unit,) = comparison.units()
    assert (unit.change, unit.regressed, unit.significant) == ("newly failing", True, True)
    assert unit.baseline.unit_class == "always-passes"
    assert unit.candidate.unit_class == "always-fails"
    assert unit.p_value == pytest.approx(1 / 252)
    assert comparison.exit_code == 1
    assert comparison.totals.regressed == 1


def test_one_flip_is_listed_but_never_called_a_regression() -> None:
    comparison = compare_results(runs("a", ["pass"]), runs("a", ["fail"]))
    (unit,) = comparison.units()
    assert unit.change == "newly failing"
    assert unit.p_value == pytest.approx(0.5)
    assert not unit.regressed
    assert comparison.exit_code == 0
    assert "newly failing" in "\n".join(compare_lines(comparison))


def test_alpha_one_makes_any_drop_a_regression_and_equal_rates_never() -> None:
    assert compare_results(runs("a", ["pass"]), runs("a", ["fail"]), alpha=1.0).exit_code == 1
    same = compare_results(runs("a", ["pass", "fail"]), runs("a", ["fail", "pass"]), alpha=1.0)
    assert same.exit_code == 0
    assert same.units()[0].change == "unchanged"


def test_a_unit_that_became_flaky_shows_as_flaky_on_that_side() -> None:
    comparison = compare_results(runs("a", ["pass"] * 4), runs("a", ["pass", "fail", "pass", "pass"]))
    (unit,) = comparison.units()
    assert unit.candidate.unit_class == "flaky"
    assert unit.class_change == "always-passes -> flaky"
    assert comparison.totals.became_flaky == 1
    assert not unit.regressed  # 3/4 against 4/4 is well within chance
    assert "flaky" in "\n".join(compare_lines(comparison))


def test_a_significant_improvement_is_reported_but_does_not_fail() -> None:
    comparison = compare_results(runs("a", ["fail"] * 6), runs("a", ["pass"] * 6))
    (unit,) = comparison.units()
    assert (unit.change, unit.significant, unit.regressed) == ("newly passing", True, False)
    assert comparison.totals.improved == 1
    assert comparison.exit_code == 0


def test_not_judged_never_enters_a_rate_and_is_its_own_change() -> None:
    baseline = runs("a", [("pass", "pass")] * 3)
    candidate = runs("a", [("pass", "not_judged")] * 3)
    comparison = compare_results(baseline, candidate)
    by_unit = {u.unit: u for u in comparison.units()}
    lost = by_unit["check:mustContain#1"]
    assert lost.change == "newly not judged"
    assert lost.candidate.unit_class == "not-judged"
    assert lost.candidate.pass_rate is None
    assert not lost.regressed
    assert comparison.exit_code == 0


def test_units_and_cases_only_on_one_side_are_added_or_removed() -> None:
    comparison = compare_results(runs("old", ["pass"]) + runs("both", ["pass"]), runs("both", [("pass", "fail")]))
    changes = {(u.case_slug, u.unit): u.change for u in comparison.units()}
    assert changes[("old", "check:mustContain#0")] == "removed"
    assert changes[("both", "check:mustContain#1")] == "added"
    statuses = {c.case_slug: (c.baseline_status, c.candidate_status) for c in comparison.cases}
    assert statuses["old"] == ("pass", "absent")


def test_token_turn_and_second_deltas_are_means_per_iteration_and_none_without_data() -> None:
    baseline = runs("a", ["pass", "pass"])
    candidate = runs("a", ["pass", "pass"])
    for r in candidate:
        assert r.record is not None
        r.record.usage = {"run-1": [TokenUsage(inputTokens=1800, outputTokens=100, cachedInputTokens=0)]}
        r.seconds = 3.0
    no_tokens = runs("b", ["pass"])
    assert no_tokens[0].record is not None
    no_tokens[0].record.usage = {}
    comparison = compare_results(baseline + no_tokens, candidate + no_tokens)
    metrics = {c.case_slug: c.metrics for c in comparison.cases}
    assert metrics["a"]["input_tokens"].baseline == 1200
    assert metrics["a"]["input_tokens"].candidate == 1800
    assert metrics["a"]["input_tokens"].relative == pytest.approx(0.5)
    assert metrics["a"]["cached_tokens"].delta == -1000
    assert metrics["a"]["turns"].delta == 0
    assert metrics["a"]["seconds"].delta == pytest.approx(1.0)
    # No token data is no number, never a zero.
    assert metrics["b"]["input_tokens"].baseline is None
    assert metrics["b"]["input_tokens"].delta is None
    assert "1,200 → 1,800 (+50.0%)" in "\n".join(compare_lines(comparison))


def test_a_side_that_judged_nothing_has_nothing_to_compare() -> None:
    comparison = compare_results(runs("a", ["pass"]), runs("a", ["not_judged"]))
    assert comparison.exit_code == 3


def test_the_html_page_escapes_what_the_run_said() -> None:
    candidate = runs("a", ["fail"] * 5)
    candidate[-1].verdicts[0].reason = "<script>alert(1)</script>"
    page = render_compare_html(compare_results(runs("a", ["pass"] * 5), candidate))
    assert "<script>alert" not in page
    assert "&lt;script&gt;" in page
    assert "REGRESSED" in page
