"""Statistics across iterations: pass@k, pass^k, Wilson, flip rate, not-verified cases."""

from __future__ import annotations

import math

import pytest

from tests.report.factory import result
from threadcase.harness.stats import case_stats, flip_rate, pass_at_k, pass_hat_k, wilson_interval


def test_pass_at_k_matches_brute_force_over_subsets() -> None:
    from itertools import combinations

    outcomes = [True, False, True, False, False]
    n, c = len(outcomes), sum(outcomes)
    for k in range(1, n + 1):
        subsets = list(combinations(outcomes, k))
        expected = sum(any(s) for s in subsets) / len(subsets)
        assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_hat_k_and_edges() -> None:
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5625)
    assert pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(3, 3, 1) == 1.0
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(10, 8)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    low0, high0 = wilson_interval(5, 0)
    assert low0 == 0.0
    assert 0.4 < high0 < 0.5
    assert wilson_interval(3, 3)[1] == pytest.approx(1.0)


def test_flip_rate() -> None:
    assert flip_rate([True]) is None
    assert flip_rate([True, False, True]) == 1.0
    assert flip_rate([True, True, False, False]) == pytest.approx(1 / 3)


def test_case_stats_exclude_not_judged_and_mark_not_verified() -> None:
    results = [
        result("a", 0, ("pass", "not_judged")),
        result("a", 1, ("fail", "not_judged")),
        result("a", 2, ("not_judged", "not_judged")),
        result("b", 0, ("not_judged", "reviewed")),
    ]
    stats = {c.case_slug: c for c in case_stats(results)}
    unit0 = stats["a"].units[0]
    assert (unit0.iterations, unit0.evaluated, unit0.passes, unit0.not_judged) == (3, 2, 1, 1)
    assert unit0.pass_rate == 0.5
    assert unit0.pass_at_k == pytest.approx([0.5, 1.0])
    assert unit0.pass_hat_k == pytest.approx([0.5, 0.25])
    assert unit0.flip_rate == 1.0
    assert stats["a"].units[1].pass_rate is None
    assert stats["a"].status == "fail"
    assert stats["b"].verified is False
    assert stats["b"].status == "not_verified"
    assert stats["b"].units[1].reviewed == 1
    assert math.isclose(unit0.wilson_low or 0, wilson_interval(2, 1)[0])
