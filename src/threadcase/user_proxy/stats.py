"""Per-run statistics of the simulated user, and their one-segment rendering ``[proxy: ...]``.

The counters are plain ``str -> int`` (that is what ``RunRecord.proxy_stats`` stores). Keys:

- ``decision:<action>`` — a decision by the proxy (model or script), by menu action;
- ``model:<action>`` — of those, decided by the model;
- ``deterministic`` and ``deterministic:<rule>`` — answered by a short-circuit rule, no decision;
- ``auto-approve`` — answered by single-prompt auto-approval;
- ``repeat`` — a repeated request id answered from the cache;
- ``fallback-no-decision`` / ``fallback-unencoded`` / ``fallback-leak`` — the model gave nothing,
  something that did not fit the widget, or a message quoting a director note; scripted behaviour
  was used instead;
- ``declined-held`` — the model answered a question the directions say to decline; sent as skipped;
- ``dismissal`` — a widget answered empty (no answers, a setup card applied with nothing);
- ``rejection`` — a plan or approval rejected;
- ``credential-created`` — a credential created mid-run for a card the user engaged;
- ``credential-test-bypassed`` — credentials on the thread's bypass list (seeded working ones plus
  those created mid-run as working);
- ``value-invented`` — the scripted user answered with a plainly placeholder value: nothing in the
  script stated one (shown only when it happened).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping

__all__ = ["ProxyStats", "format_proxy_stats"]


class ProxyStats(Counter[str]):
    """A counter with the few increments the proxy makes, named."""

    def decision(self, action: str, *, by_model: bool) -> None:
        self[f"decision:{action}"] += 1
        if by_model:
            self[f"model:{action}"] += 1

    def deterministic(self, rule: str) -> None:
        self["deterministic"] += 1
        self[f"deterministic:{rule}"] += 1

    def outcome(self, outcome: str) -> None:
        if outcome in ("dismissed", "skipped"):
            self["dismissal"] += 1
        elif outcome == "rejected":
            self["rejection"] += 1

    def as_dict(self) -> dict[str, int]:
        return {k: int(v) for k, v in sorted(self.items()) if v}


def format_proxy_stats(stats: Mapping[str, int]) -> str:
    """One segment for a build line, e.g.
    ``[proxy: decisions 3 (answer_questions 2, approve_or_reject 1; model 2), deterministic 1, repeats 0,
    fallbacks 0, dismissals 0, rejections 1, credential tests bypassed 1]``.
    """
    # The same few counters recur case after case (the report and the console format each result):
    # the segment is a pure function of the counters, so it is made once per distinct set. Only plain
    # ints are keyed (True == 1 and 1.0 == 1 would share a key but print differently).
    if all(type(v) is int for v in stats.values()):
        return _format_counted(frozenset(stats.items()))
    return _format(stats)


@functools.lru_cache(maxsize=512)
def _format_counted(counters: frozenset[tuple[str, int]]) -> str:
    return _format(dict(counters))


def _format(stats: Mapping[str, int]) -> str:
    decisions = {k.split(":", 1)[1]: v for k, v in stats.items() if k.startswith("decision:") and v}
    model = sum(v for k, v in stats.items() if k.startswith("model:"))
    fallbacks = sum(v for k, v in stats.items() if k.startswith("fallback-"))
    detail = ", ".join(f"{k} {v}" for k, v in sorted(decisions.items()))
    head = f"decisions {sum(decisions.values())}"
    if detail:
        head += f" ({detail}; model {model})"
    parts = [
        head,
        f"deterministic {stats.get('deterministic', 0)}",
        f"repeats {stats.get('repeat', 0)}",
        f"fallbacks {fallbacks}",
        f"dismissals {stats.get('dismissal', 0)}",
        f"rejections {stats.get('rejection', 0)}",
        f"credential tests bypassed {stats.get('credential-test-bypassed', 0)}",
    ]
    if stats.get("auto-approve"):
        parts.insert(1, f"auto-approved {stats['auto-approve']}")
    if stats.get("value-invented"):
        parts.append(f"invented values {stats['value-invented']}")
    return f"[proxy: {', '.join(parts)}]"
