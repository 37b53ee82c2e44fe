"""A compact Markdown summary of a run, for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

``threadcase report RUN --markdown`` and ``threadcase run --markdown`` print it (and write it to
``summary.md``): the verdict and totals, the failures with their reasons (one row per failing unit,
with the iterations it failed in), the not-judged units counted by reason, and, when a baseline was
given, the comparison: regressions and other changed units, and the cases whose tokens or turns moved.
Bounded in size (a GitHub comment holds 65,536 characters); every cell is escaped for a table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from threadcase.harness.compare import METRICS, Comparison, UnitChange
from threadcase.report.compare_view import format_metric, unit_row, verdict_line
from threadcase.report.summary import RunSummary
from threadcase.verdicts import CaseResult

__all__ = ["MARKDOWN_NAME", "render_markdown"]

MARKDOWN_NAME = "summary.md"
MAX_ROWS = 40
"""Rows per table; the rest are counted in one line."""
MAX_CHARS = 60_000
CELL_CAP = 240


def _cell(value: object) -> str:
    text = " ".join(str(value).split())
    if len(text) > CELL_CAP:
        text = text[: CELL_CAP - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[:MAX_ROWS])
    if len(rows) > MAX_ROWS:
        lines.append(f"\n…and {len(rows) - MAX_ROWS} more (see the HTML report)")
    return lines


def _headline(summary: RunSummary) -> str:
    if summary.interrupted:
        return "INTERRUPTED: partial results"
    return {
        0: "GREEN: every judged unit passed",
        1: "RED: a unit failed",
    }.get(summary.exit_code, "NOT GREEN: nothing could be judged")


def _failures(results: Sequence[CaseResult]) -> list[list[object]]:
    """One row per failing (case, unit): iterations it failed in, attribution, the last reason."""
    failed: dict[tuple[str, str], list[tuple[int, str, str]]] = {}
    judged: Counter[tuple[str, str]] = Counter()
    for result in results:
        for verdict in result.verdicts:
            key = (result.case_slug, verdict.unit)
            if verdict.status in ("pass", "fail"):
                judged[key] += 1
            if verdict.status == "fail":
                failed.setdefault(key, []).append(
                    (result.iteration, verdict.attribution or "builder_issue", verdict.reason)
                )
    rows: list[list[object]] = []
    for (slug, unit), fails in failed.items():
        _, attribution, reason = max(fails)
        rows.append([slug, unit, f"{len(fails)}/{judged[(slug, unit)]}", attribution, reason])
    return rows


def _not_judged(results: Sequence[CaseResult]) -> list[list[object]]:
    reasons: Counter[str] = Counter()
    for result in results:
        for verdict in result.verdicts:
            if verdict.status == "not_judged":
                reasons[verdict.reason] += 1
        if result.error is not None and not result.verdicts:
            reasons[f"errored: {result.error.type}: {result.error.message}"] += 1
    return [[reason, count] for reason, count in reasons.most_common()]


def _comparison(comparison: Comparison) -> list[str]:
    b = comparison.baseline
    lines = [
        "",
        f"### Compared with baseline `{_cell(b.run_id)}`",
        "",
        f"**{_cell(verdict_line(comparison))}**",
    ]
    if comparison.setting_changes:
        lines.append("")
        lines.extend(f"- setting changed: {_cell(s)}" for s in comparison.setting_changes)
    changed: list[UnitChange] = sorted(
        (u for u in comparison.units() if u.change != "unchanged" or u.class_change is not None),
        key=lambda u: (not u.regressed, not u.significant),
    )
    if changed:
        lines.append("")
        lines.extend(
            _table(["case", "unit", "baseline", "candidate", "change", "p", ""], [unit_row(u) for u in changed])
        )
    moved = [
        case
        for case in comparison.cases
        if any(case.metrics[k].delta for k in ("input_tokens", "output_tokens", "cached_tokens", "turns"))
    ]
    if moved:
        lines += ["", "<details><summary>Tokens and turns that moved (means per case-iteration)</summary>", ""]
        lines.extend(
            _table(
                ["case", *METRICS],
                [[case.case_slug, *(format_metric(case.metrics[k], k) for k in METRICS)] for case in moved],
            )
        )
        lines += ["", "</details>"]
    return lines


def render_markdown(summary: RunSummary, results: Sequence[CaseResult], *, comparison: Comparison | None = None) -> str:
    """The run's Markdown summary (see the module docstring)."""
    u = summary.units
    lines = [f"## threadcase: {_headline(summary)}", ""]
    context = summary.context
    if context is not None and context.regrade_of:
        lines += [f"Re-grade of run `{_cell(context.regrade_of)}` (same conversations, current cases and judge).", ""]
    if context is not None and context.merged_from:
        lines += [
            f"Merged from {len(context.merged_from)} runs: " + ", ".join(f"`{_cell(r)}`" for r in context.merged_from),
            "",
        ]
    statuses = summary.case_statuses
    lines += [
        f"**{summary.cases} cases**, {summary.case_iterations} case-iterations, {summary.seconds:.1f} s · "
        f"cases: {statuses.get('pass', 0)} passed, {statuses.get('fail', 0)} failed, "
        f"{statuses.get('not_verified', 0)} not verified, {statuses.get('errored', 0)} errored",
        "",
        f"units: **{u.passed} passed**, **{u.failed} failed** ({u.builder_failures} against the builder"
        + (f", {u.proxy_failures} the simulated user's" if u.proxy_failures else "")
        + f"), {u.not_judged} not judged"
        + (f" ({u.proxy_not_judged} because of the simulated user)" if u.proxy_not_judged else "")
        + f", {u.reviewed} reviewed · {u.errored} case-iterations errored",
        "",
        _cell(summary.simulated_user_line()),
    ]
    failures = _failures(results)
    if failures:
        lines += ["", f"### Failures ({len(failures)} unit(s))", ""]
        lines.extend(_table(["case", "unit", "failed", "attribution", "reason"], failures))
    not_judged = _not_judged(results)
    if not_judged:
        lines += ["", f"### Not judged ({u.not_judged} unit verdict(s), by reason)", ""]
        lines.extend(_table(["reason", "count"], not_judged))
    if comparison is not None:
        lines.extend(_comparison(comparison))
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + "\n\n…(truncated; see the HTML report)\n"
    return text
