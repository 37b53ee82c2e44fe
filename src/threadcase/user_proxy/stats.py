"""Per-run statistics of the simulated user, and their one-segment rendering ``[proxy: ...]``.

The counters are plain ``str -> int`` (that is what ``RunRecord.proxy_stats`` stores). Keys:

- ``decision:<action>`` — a decision by the proxy (model or script), by menu action;
- ``model:<action>`` — of those, decided by the model;
- ``deterministic`` and ``deterministic:<rule>`` — answered by a short-circuit rule, no decision;
- ``auto-approve`` — answered by single-prompt auto-approval;
- ``repeat`` — a widget the agent raised again (same request id), answered from the cache;
- ``fault:<kind>`` — a decision of the model caught before it was sent (``user_proxy.faults``):
  ``resent-turn``, ``repeat``, ``quoted-note``, ``quoted-script``, ``as-assistant``, ``empty``; the
  segment's ``repeats`` counts the first two (the user repeating itself);
- ``reasked`` — a decision asked again after a fault, with the reason;
- ``fallback-no-decision`` / ``fallback-unencoded`` / ``fallback-fault`` — the model gave nothing,
  something that did not fit the widget, or a faulty decision twice; scripted behaviour was used instead;
- ``model-calls`` and ``tokens:input`` / ``tokens:cached`` / ``tokens:output`` — the proxy model's
  requests and their token usage (not shown in the segment; reports show the usage beside the agent's);
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

from threadcase.models import ModelUsage

__all__ = ["ProxyStats", "format_proxy_stats", "proxy_usage"]

_USAGE_KEYS = {
    "calls": "model-calls",
    "input_tokens": "tokens:input",
    "cached_input_tokens": "tokens:cached",
    "output_tokens": "tokens:output",
}


def proxy_usage(stats: Mapping[str, int]) -> ModelUsage:
    """The proxy model's token usage, read back from its counters (a run record's ``proxy_stats``)."""
    return ModelUsage(**{field: int(stats.get(key, 0)) for field, key in _USAGE_KEYS.items()})


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

    def fault(self, kind: str) -> None:
        self[f"fault:{kind}"] += 1

    def add_usage(self, usage: ModelUsage) -> None:
        """Add one call's token usage (its requests are counted by the caller, as ``model-calls``)."""
        self["tokens:input"] += usage.input_tokens
        self["tokens:cached"] += usage.cached_input_tokens
        self["tokens:output"] += usage.output_tokens

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
    faults = {k.split(":", 1)[1]: v for k, v in stats.items() if k.startswith("fault:") and v}
    repeats = stats.get("fault:resent-turn", 0) + stats.get("fault:repeat", 0)
    detail = ", ".join(f"{k} {v}" for k, v in sorted(decisions.items()))
    head = f"decisions {sum(decisions.values())}"
    if detail:
        head += f" ({detail}; model {model})"
    parts = [
        head,
        f"deterministic {stats.get('deterministic', 0)}",
        f"repeats {repeats}",
        f"fallbacks {fallbacks}",
        f"dismissals {stats.get('dismissal', 0)}",
        f"rejections {stats.get('rejection', 0)}",
        f"credential tests bypassed {stats.get('credential-test-bypassed', 0)}",
    ]
    if stats.get("auto-approve"):
        parts.insert(1, f"auto-approved {stats['auto-approve']}")
    if stats.get("value-invented"):
        parts.append(f"invented values {stats['value-invented']}")
    if faults:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
        parts.append(f"faults caught {sum(faults.values())} ({detail}; re-asked {stats.get('reasked', 0)})")
    if stats.get("repeat"):
        parts.append(f"widgets raised again {stats['repeat']}")
    return f"[proxy: {', '.join(parts)}]"
