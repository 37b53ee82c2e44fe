"""The ``[proxy: ...]`` segment is made once per distinct set of counters, and never from another set."""

from __future__ import annotations

from threadcase.user_proxy.stats import ProxyStats, format_proxy_stats


def test_the_segment_is_a_function_of_the_counters_alone() -> None:
    stats = ProxyStats()
    stats.decision("answer_questions", by_model=True)
    stats["auto-approve"] += 1
    first = format_proxy_stats(stats.as_dict())
    assert first == (
        "[proxy: decisions 1 (answer_questions 1; model 1), auto-approved 1, deterministic 0, repeats 0, "
        "fallbacks 0, dismissals 0, rejections 0, credential tests bypassed 0]"
    )
    # The same counters in another order, and again: the same segment.
    assert format_proxy_stats(dict(reversed(list(stats.as_dict().items())))) == first
    stats.decision("answer_questions", by_model=False)
    second = format_proxy_stats(stats.as_dict())
    assert "decisions 2 (answer_questions 2; model 1)" in second
    assert format_proxy_stats({"deterministic": 1}) != format_proxy_stats({"deterministic": 2})


def test_counters_that_only_compare_equal_are_not_mistaken_for_each_other() -> None:
    assert "deterministic 1," in format_proxy_stats({"deterministic": 1})
    assert "deterministic True," in format_proxy_stats({"deterministic": True})
    assert "deterministic 1.0," in format_proxy_stats({"deterministic": 1.0})  # type: ignore[dict-item]  # not a counter, still formatted


def test_repeats_count_the_users_repeats_and_every_caught_fault_is_shown_by_kind() -> None:
    """Regression: the model user re-sent a delivered turn five times while the segment said repeats 0."""
    stats = ProxyStats()
    for kind in ("resent-turn", "resent-turn", "repeat", "as-assistant"):
        stats.fault(kind)
    stats["reasked"] += 3
    stats["repeat"] += 1  # a widget the agent raised again: not the user repeating itself
    segment = format_proxy_stats(stats.as_dict())
    assert "repeats 3," in segment
    assert "faults caught 4 (as-assistant 1, repeat 1, resent-turn 2; re-asked 3)" in segment
    assert "widgets raised again 1" in segment
