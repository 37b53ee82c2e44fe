"""A comparison of two runs as people read it: console lines, ``compare.json``, ``compare.html``.

:func:`compare_runs` is the call behind ``threadcase compare BASELINE CANDIDATE`` (and behind
``threadcase run --baseline``): read both journals, compare (:mod:`threadcase.harness.compare`), write
``compare.json`` and ``compare.html``. The text forms are pure functions of the
:class:`~threadcase.harness.compare.Comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from threadcase.harness.compare import METRICS, CaseChange, Comparison, MetricDelta, UnitChange, compare_results
from threadcase.harness.journal import journal_path, read_journal
from threadcase.report.summary import write_atomic

__all__ = [
    "COMPARE_HTML",
    "COMPARE_JSON",
    "compare_lines",
    "compare_runs",
    "format_metric",
    "render_compare_html",
    "unit_row",
    "verdict_line",
    "write_comparison",
]

COMPARE_JSON = "compare.json"
COMPARE_HTML = "compare.html"

_METRIC_LABELS = {
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "cached_tokens": "cached tokens",
    "turns": "turns",
    "seconds": "seconds",
}


def _number(value: float, metric: str) -> str:
    if metric == "seconds":
        return f"{value:.1f}"
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 100 else f"{value:,.1f}"


def format_metric(delta: MetricDelta, metric: str) -> str:
    """``1,200 → 1,450 (+20.8%)``; ``–`` for a side without the number (no token data is no zero)."""
    base = "–" if delta.baseline is None else _number(delta.baseline, metric)
    cand = "–" if delta.candidate is None else _number(delta.candidate, metric)
    if delta.delta is None:
        return f"{base} → {cand}"
    change = f"{delta.relative * 100:+.1f}%" if delta.relative is not None else f"{delta.delta:+g}"
    return f"{base} → {cand} ({change})"


def _p(unit: UnitChange) -> str:
    if unit.p_value is None:
        return "–"
    return f"{unit.p_value:.3f}" if unit.p_value >= 0.001 else f"{unit.p_value:.1e}"


def unit_row(unit: UnitChange) -> list[str]:
    """case, unit, baseline, candidate, change, p, flag: one row of the units table."""
    flag = "REGRESSED" if unit.regressed else ("improved" if unit.significant else "")
    return [
        unit.case_slug,
        unit.unit,
        f"{unit.baseline.counts()} {unit.baseline.unit_class}",
        f"{unit.candidate.counts()} {unit.candidate.unit_class}",
        unit.change,
        _p(unit),
        flag,
    ]


_UNIT_HEADERS = ["case", "unit", "baseline", "candidate", "change", "p", ""]


def _changed(unit: UnitChange) -> bool:
    return unit.change != "unchanged" or unit.class_change is not None


def _ordered(units: Sequence[UnitChange]) -> list[UnitChange]:
    # Regressions first, then other significant moves, then the rest of the changes, as they came.
    return sorted(units, key=lambda u: (not u.regressed, not u.significant))


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _metric_rows(cases: Sequence[CaseChange]) -> list[list[str]]:
    rows = []
    for case in cases:
        m = case.metrics
        # Seconds always wobble; a case is worth a line when its tokens or turns moved.
        moved = any(m[k].delta for k in ("input_tokens", "output_tokens", "cached_tokens", "turns") if k in m)
        if moved or case.baseline_status != case.candidate_status:
            rows.append(
                [
                    case.case_slug,
                    f"{case.baseline_status} → {case.candidate_status}",
                    *(format_metric(m[k], k) for k in METRICS if k in m),
                ]
            )
    return rows


def verdict_line(comparison: Comparison) -> str:
    """The comparison's verdict in one line (what decides the exit code)."""
    t = comparison.totals
    if comparison.exit_code == 1:
        return (
            f"REGRESSED: {t.regressed} unit(s) significantly worse "
            f"(one-sided Fisher exact test, alpha {comparison.alpha:g})"
        )
    if comparison.exit_code == 3:
        return "NOTHING TO COMPARE: a run judged no unit"
    return f"NO SIGNIFICANT REGRESSION (alpha {comparison.alpha:g})"


def _run_label(ref_path: str, run_id: str, iterations: int, extra: str) -> str:
    return f"{run_id or '?'} ({ref_path or 'results'}, {iterations} case-iterations{extra})"


def compare_lines(comparison: Comparison) -> list[str]:
    """The console form: what was compared, changed units, moved numbers, totals, verdict."""
    b, c = comparison.baseline, comparison.candidate
    lines = [
        "baseline:  "
        + _run_label(b.path, b.run_id, b.case_iterations, f", re-grade of {b.regrade_of}" if b.regrade_of else ""),
        "candidate: "
        + _run_label(c.path, c.run_id, c.case_iterations, f", re-grade of {c.regrade_of}" if c.regrade_of else ""),
    ]
    lines.extend(f"setting changed: {change}" for change in comparison.setting_changes)
    changed = _ordered([u for u in comparison.units() if _changed(u)])
    if changed:
        lines.append("")
        lines.extend(_table(_UNIT_HEADERS, [unit_row(u) for u in changed]))
    metric_rows = _metric_rows(comparison.cases)
    if metric_rows:
        lines.append("")
        lines.extend(_table(["case", "status", *(_METRIC_LABELS[k] for k in METRICS)], metric_rows))
    t = comparison.totals
    lines.append("")
    lines.append(
        f"units: {t.regressed} regressed, {t.improved} improved significantly; {t.newly_failing} newly failing, "
        f"{t.newly_passing} newly passing, {t.fails_more} failing more, {t.fails_less} failing less, "
        f"{t.became_flaky} became flaky, {t.newly_not_judged} newly not judged, {t.newly_judged} newly judged, "
        f"{t.added} added, {t.removed} removed, {t.unchanged} unchanged"
    )
    lines.append(verdict_line(comparison))
    return lines


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0 0 6px;font-size:20px}
main{padding:16px 24px;max-width:1300px}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d6d9e0}
td,th{border-top:1px solid #e3e5ea;padding:4px 6px;text-align:left;vertical-align:top}th{font-size:12px;color:#555}
tr.regressed td{background:#fde8e8}tr.improved td{background:#e6f4ea}.meta{color:#c9ced8;font-size:13px}
.verdict{font-weight:700}.bad{color:#c62828}.good{color:#1f8a4c}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _html_units(units: Sequence[UnitChange]) -> str:
    rows = []
    for unit in units:
        cls = "regressed" if unit.regressed else ("improved" if unit.significant else "")
        cells = "".join(f"<td>{_e(cell)}</td>" for cell in unit_row(unit))
        rows.append(f'<tr class="{cls}">{cells}<td>{_e(unit.reason)}</td></tr>')
    head = "".join(f"<th>{_e(h)}</th>" for h in [*_UNIT_HEADERS, "reason"])
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def render_compare_html(comparison: Comparison) -> str:
    """``compare.html``: one self-contained page (every value escaped, nothing loaded from elsewhere)."""
    b, c = comparison.baseline, comparison.candidate
    verdict_class = "bad" if comparison.exit_code == 1 else "good"
    changed = _ordered([u for u in comparison.units() if _changed(u)])
    unchanged = [u for u in comparison.units() if not _changed(u)]
    settings = "".join(f"<li>{_e(s)}</li>" for s in comparison.setting_changes)
    metric_head = "".join(f"<th>{_e(_METRIC_LABELS[k])}</th>" for k in METRICS)
    metric_rows = "".join(
        f"<tr><td>{_e(case.case_slug)}</td><td>{_e(case.baseline_status)} → {_e(case.candidate_status)}</td>"
        f"<td>{case.baseline_iterations} → {case.candidate_iterations}</td>"
        + "".join(f"<td>{_e(format_metric(case.metrics[k], k))}</td>" for k in METRICS if k in case.metrics)
        + "</tr>"
        for case in comparison.cases
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>threadcase compare</title>"
        f"<style>{_CSS}</style></head><body><header><h1>threadcase compare</h1>"
        f"<div class='meta'>baseline {_e(b.run_id)} ({_e(b.path)}, {b.case_iterations} case-iterations) → "
        f"candidate {_e(c.run_id)} ({_e(c.path)}, {c.case_iterations} case-iterations)</div></header><main>"
        f"<p class='verdict {verdict_class}'>{_e(verdict_line(comparison))}</p>"
        + (f"<h2>Settings that differ</h2><ul>{settings}</ul>" if settings else "")
        + f"<h2>Units that changed ({len(changed)})</h2>"
        + (_html_units(changed) if changed else "<p>none</p>")
        + "<h2>Per case: status, iterations, tokens, turns, seconds (means per case-iteration)</h2>"
        + f"<table><tr><th>case</th><th>status</th><th>iterations</th>{metric_head}</tr>{metric_rows}</table>"
        + f"<details><summary>Units that did not change ({len(unchanged)})</summary>"
        + (_html_units(unchanged) if unchanged else "")
        + "</details></main></body></html>\n"
    )


def write_comparison(comparison: Comparison, output_dir: Path) -> list[Path]:
    """Write ``compare.json`` and ``compare.html`` atomically into ``output_dir``; returns their paths."""
    written = []
    for name, text in (
        (COMPARE_JSON, comparison.model_dump_json(indent=2) + "\n"),
        (COMPARE_HTML, render_compare_html(comparison)),
    ):
        path = output_dir / name
        write_atomic(path, text)
        written.append(path)
    return written


def compare_runs(baseline: Path, candidate: Path, *, alpha: float = 0.05, output_dir: Path | None = None) -> Comparison:
    """Compare two runs (each a journal or a run directory) and write the comparison files.

    ``output_dir`` None = beside the candidate's journal.
    """
    base_journal, cand_journal = journal_path(baseline), journal_path(candidate)
    comparison = compare_results(
        read_journal(base_journal),
        read_journal(cand_journal),
        alpha=alpha,
        baseline_path=str(base_journal.parent),
        candidate_path=str(cand_journal.parent),
    )
    write_comparison(comparison, output_dir if output_dir is not None else cand_journal.parent)
    return comparison
