"""``report.html``: one self-contained page a person can open to see what happened and why.

The header says who played the user (scripted, or which model and prompt version). Per
case-iteration: the verdicts (reason, attribution), premises, proxy statistics, how the script was
played (turns delivered, notes followed, values given and where from) and the transcript — seeded
turns visibly marked, widgets with the answers given, tool calls folded in ``<details>``, token
numbers per turn. A few lines of inline JS filter by status. Every value from a
run passes through :func:`html.escape`; nothing is loaded from elsewhere.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from threadcase.models import ModelUsage
from threadcase.records import RunRecord, ScriptDelivery, Turn
from threadcase.report.console import format_proxy
from threadcase.report.summary import RunSummary, provenance_line
from threadcase.verdicts import CaseResult

__all__ = ["render_html"]

_STATUS_LABEL = {"pass": "PASS", "fail": "FAIL", "not_judged": "NOT JUDGED", "errored": "ERRORED", "reviewed": "REVIEW"}

_ORDER = {"fail": 0, "errored": 1, "not_judged": 2, "pass": 3}

_SHORT = 200
"""Longest text :func:`_e` memoises; longer ones (transcripts, JSON) rarely repeat."""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 24px}
header h1{margin:0 0 6px;font-size:20px}
header .meta{color:#c9ced8}
.counts span{margin-right:14px}
main{padding:16px 24px;max-width:1200px}
.filters button{margin:0 6px 12px 0;padding:4px 10px;border:1px solid #99a;border-radius:4px;
  background:#fff;cursor:pointer}
.filters button.on{background:#1d2330;color:#fff}
section.case{background:#fff;border:1px solid #d6d9e0;border-radius:6px;margin:0 0 14px;padding:10px 14px}
section.case>h2{font-size:16px;margin:4px 0}
.badge{display:inline-block;padding:1px 7px;border-radius:4px;font-size:12px;font-weight:600;color:#fff}
.b-pass{background:#1f8a4c}.b-fail{background:#c62828}.b-not_judged{background:#a66b00}
.b-errored{background:#6a4c93}.b-reviewed{background:#42618a}
table{border-collapse:collapse;width:100%;margin:6px 0}
td,th{border-top:1px solid #e3e5ea;padding:4px 6px;text-align:left;vertical-align:top}
th{font-size:12px;color:#555}
.turn{border-left:4px solid #c9ced8;margin:6px 0;padding:4px 10px;background:#fafbfc}
.turn.user{border-color:#3d6fd6}.turn.assistant{border-color:#1f8a4c}
.turn.seeded{background:repeating-linear-gradient(45deg,#f1f1f1,#f1f1f1 8px,#e9e9e9 8px,#e9e9e9 16px)}
.seedtag{font-size:11px;font-weight:700;color:#fff;background:#777;border-radius:3px;padding:0 5px}
.meta{font-size:12px;color:#666}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,Menlo,monospace}
.widget{border:1px dashed #99a;padding:4px 8px;margin:4px 0;background:#fff}
.error{color:#c62828}
"""

_JS = """
document.querySelectorAll('.filters button').forEach(function(b){
  b.addEventListener('click',function(){
    document.querySelectorAll('.filters button').forEach(function(x){x.classList.remove('on')});
    b.classList.add('on');
    var want=b.getAttribute('data-filter');
    document.querySelectorAll('section.case').forEach(function(s){
      s.style.display=(want==='all'||s.getAttribute('data-status')===want)?'':'none';
    });
  });
});
"""


@functools.lru_cache(maxsize=4096)
def _escape_short(text: str) -> str:
    return escape(text, quote=True)


def _e(value: object) -> str:
    text = value if type(value) is str else str(value)
    # Roles, statuses, unit names, labels and reasons repeat across every section of a run: a short
    # string is escaped once (the cache holds a pure function of its key, so it cannot go stale).
    return _escape_short(text) if len(text) <= _SHORT else escape(text, quote=True)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _badge(status: str) -> str:
    return f'<span class="badge b-{_e(status)}">{_e(_STATUS_LABEL.get(status, status))}</span>'


def _turn_tokens(record: RunRecord, turn: Turn) -> str:
    # The agent's turn carries the cost; a user turn may name the same run ids (the run it started).
    if turn.role != "assistant":
        return ""
    total_in = cached = out = steps = 0
    for run_id in turn.run_ids:
        for step in record.usage.get(run_id, ()):
            total_in += step.inputTokens
            cached += step.cachedInputTokens
            out += step.outputTokens
            steps += 1
    if not steps:
        return ""
    return (
        f'<div class="meta tokens">tokens: {total_in} in ({cached} cached), {out} out '
        f"over {steps} step{'s' if steps != 1 else ''}</div>"
    )


def _render_turn(record: RunRecord, turn: Turn) -> str:
    classes = f"turn {turn.role}" + (" seeded" if turn.seeded else "")
    head = f"<b>{_e(turn.role)}</b> #{turn.index}"
    if turn.seeded:
        head += ' <span class="seedtag">SEEDED</span>'
    if turn.sent_by:
        head += f' <span class="meta">sent by {_e(turn.sent_by)}</span>'
    if turn.finish_status:
        head += f' <span class="meta">finish: {_e(turn.finish_status)}</span>'
    text = f'<div class="{classes}">{head}<pre>{_e(turn.text)}</pre>'
    if not (turn.widgets or turn.tool_calls or turn.errors):
        return f"{text}{_turn_tokens(record, turn)}</div>"
    parts = [text]
    for widget in turn.widgets:
        parts.append(
            f'<div class="widget"><b>widget</b> {_e(widget.input_type)} → <b>{_e(widget.outcome)}</b>'
            + (f' <span class="meta">answered by {_e(widget.answered_by)}</span>' if widget.answered_by else "")
            + f"<details><summary>request</summary><pre>{_e(_json(widget.request))}</pre></details>"
            + (
                f"<details><summary>answer</summary><pre>{_e(_json(widget.answer))}</pre></details>"
                if widget.answer is not None
                else ""
            )
            + "</div>"
        )
    for call in turn.tool_calls:
        status = f' <span class="error">error: {_e(call.error)}</span>' if call.error else ""
        parts.append(
            f'<details class="tool"><summary>tool call <code>{_e(call.tool_name)}</code>{status}</summary>'
            f"<pre>args: {_e(_json(call.args))}</pre><pre>result: {_e(_json(call.result))}</pre></details>"
        )
    for error in turn.errors:
        parts.append(f'<div class="error">{_e(error)}</div>')
    parts.append(_turn_tokens(record, turn))
    parts.append("</div>")
    return "".join(parts)


def _render_script(script: ScriptDelivery) -> str:
    """How the script was played: turns delivered, notes followed, values given, faults (folded unless
    something went wrong)."""
    trouble = bool(script.undelivered or script.unfired or script.not_understood or script.faults)
    rows = [f"<details class='script'{' open' if trouble else ''}><summary>script</summary><table class='script'>"]
    rows.append("<tr><th>turn</th><th>what</th><th>done</th><th>why not / where from</th></tr>")
    for turn in script.turns:
        says = turn.says or "(notes only)"
        done = "delivered" if turn.delivered else "NOT DELIVERED"
        rows.append(
            f"<tr><td>{turn.turn}</td><td>{_e(says)}</td><td>{done}"
            + (f" (message {turn.message})" if turn.message is not None else "")
            + f"</td><td>{_e(turn.why_not or '')}</td></tr>"
        )
    for directive in script.directives:
        done = "fired" if directive.fired else ("NEVER FIRED" if directive.required else "not needed")
        rows.append(
            f"<tr><td>{directive.turn}</td><td>note: {_e(directive.does)}</td><td>{done}"
            + (f" (message {directive.message})" if directive.message is not None else "")
            + f"</td><td>{_e(directive.why_not or '')}</td></tr>"
        )
    for value in script.values:
        given = "declined" if value.value is None else repr(value.value)
        rows.append(
            f"<tr><td></td><td>asked: {_e(value.asked)}</td><td>{_e(given)}</td><td>{_e(value.source)}</td></tr>"
        )
    rows.append("</table>")
    rows.extend(f'<p class="error">not understood: {_e(line)}</p>' for line in script.not_understood)
    rows.extend(f'<p class="error">user fault: {_e(line)}</p>' for line in script.faults)
    rows.append("</details>")
    return "".join(rows)


def _render_case(result: CaseResult, anchor: str) -> str:
    record = result.record
    out = [
        f'<section class="case" id="{_e(anchor)}" data-status="{_e(result.status)}">',
        f"<h2>{_badge(result.status)} {_e(result.case_slug)} "
        f'<span class="meta">iteration {result.iteration} · {result.seconds:.1f} s'
        + (f" · lane {_e(result.lane)}" if result.lane else "")
        + (f" · {_e(result.case_file)}" if result.case_file else "")
        + "</span></h2>",
    ]
    if result.error is not None:
        out.append(
            f'<p class="error">errored: {_e(result.error.type)}: {_e(result.error.message)} '
            f"({_e(result.error.attribution)})</p>"
        )
    if result.verdicts:
        out.append(
            "<table class='verdicts'><tr><th>status</th><th>unit</th><th>what</th><th>reason</th>"
            "<th>attribution</th></tr>"
        )
        for v in result.verdicts:
            turn = f" (turn {v.turn_index})" if v.turn_index is not None else ""
            out.append(
                f'<tr class="verdict" data-status="{_e(v.status)}"><td>{_badge(v.status)}</td><td>{_e(v.unit)}</td>'
                f"<td>{_e(v.label)}</td><td>{_e(v.reason)}{_e(turn)}</td><td>{_e(v.attribution or '')}</td></tr>"
            )
        out.append("</table>")
    if result.premises:
        out.append("<table class='premises'><tr><th>premise</th><th>held</th><th>reason</th></tr>")
        for p in result.premises:
            out.append(f"<tr><td>{_e(p.name)}</td><td>{'yes' if p.held else 'NO'}</td><td>{_e(p.reason)}</td></tr>")
        out.append("</table>")
    if result.judge:
        out.append(f'<p class="meta">judge: {_e(", ".join(f"{k}={v}" for k, v in result.judge.items()))}</p>')
    if result.model_usage:
        out.append(_usage_table(result.model_usage))
    if record is not None:
        proxy = format_proxy(record.proxy_stats)
        nodes = sum(len(w.nodes) for w in record.artifacts.workflows)
        user = f" · user: {_e(record.user.describe())}" if record.user is not None else ""
        out.append(
            f'<p class="meta">thread {_e(record.thread_id)} · mode {_e(record.mode)} · ended by {_e(record.ended_by)}'
            f" · {nodes} nodes built · {record.follow_ups_sent} follow-ups{user}"
            + (f' · <span class="proxy">{_e(proxy)}</span>' if proxy else "")
            + "</p>"
        )
        if record.script is not None:
            out.append(_render_script(record.script))
        if not record.seed.restored:
            out.append(f'<p class="error">seed not restored: {_e(record.seed.error or "")}</p>')
        for warning in record.warnings:
            out.append(f'<p class="meta">warning: {_e(warning)}</p>')
        # Passing cases fold their transcript: the page opens on what needs a person's attention.
        opened = " open" if result.status != "pass" else ""
        out.append(f"<details{opened}><summary>transcript</summary>")
        out.extend(_render_turn(record, turn) for turn in record.turns)
        out.append("</details>")
        if record.artifacts.workflows:
            out.append("<details><summary>workflows built</summary>")
            for wf in record.artifacts.workflows:
                out.append(f"<pre>{_e(wf.name)} ({_e(wf.id)}): " + _e(", ".join(n.type for n in wf.nodes)) + "</pre>")
            out.append("</details>")
    out.append("</section>")
    return "".join(out)


def _usage_table(usage: Mapping[str, ModelUsage]) -> str:
    """Token usage by role, the builder's first: what the case cost, and who spent it."""
    rows = ["<table class='usage'><tr><th>tokens</th><th>in</th><th>cached</th><th>out</th><th>calls</th></tr>"]
    for role in sorted(usage, key=lambda r: (_ROLE_ORDER.get(r, 9), r)):
        used = usage[role]
        rows.append(
            f"<tr><td>{_e(role)}</td><td>{used.input_tokens}</td><td>{used.cached_input_tokens}</td>"
            f"<td>{used.output_tokens}</td><td>{used.calls}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


_ROLE_ORDER = {"agent": 0, "proxy": 1, "judge": 2, "verifier": 3}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _render_stats(summary: RunSummary) -> str:
    """Per-unit statistics across iterations; shown only when some case ran more than once."""
    if not any(case.iterations > 1 for case in summary.case_stats):
        return ""
    rows = [
        "<details class='stats'><summary>statistics across iterations</summary><table class='stats'>"
        "<tr><th>case</th><th>unit</th><th>judged</th><th>pass rate</th><th>95% interval</th>"
        "<th>pass@k</th><th>pass^k</th><th>flip rate</th></tr>"
    ]
    for case in summary.case_stats:
        for unit in case.units:
            if unit.kind == "review":
                continue
            interval = (
                f"{_pct(unit.wilson_low)}–{_pct(unit.wilson_high)}" if unit.wilson_low is not None else "not verified"
            )
            rows.append(
                f"<tr><td>{_e(case.case_slug)}</td><td>{_e(unit.unit)}</td><td>{unit.evaluated}/{unit.iterations}</td>"
                f"<td>{_pct(unit.pass_rate)}</td><td>{interval}</td>"
                f"<td>{_e(' '.join(_pct(x) for x in unit.pass_at_k))}</td>"
                f"<td>{_e(' '.join(_pct(x) for x in unit.pass_hat_k))}</td><td>{_pct(unit.flip_rate)}</td></tr>"
            )
    rows.append("</table></details>")
    return "".join(rows)


_UNSAFE_IN_ID = re.compile(r"[^A-Za-z0-9.-]")


def _key(result: CaseResult) -> tuple[str, int]:
    return (result.case_slug, result.iteration)


def render_case_section(result: CaseResult) -> str:
    """One case-iteration's section of the page; the runner renders each as its result arrives."""
    # Unique per (slug, iteration): every character outside [A-Za-z0-9.-] is spelled as _<hex>_ (so
    # "a b" and "a-b" differ), and the iteration follows the last "-".
    slug = _UNSAFE_IN_ID.sub(lambda m: f"_{ord(m.group()):x}_", result.case_slug)
    return _render_case(result, f"case-{slug}-{result.iteration}")


def _render_leftovers(summary: RunSummary) -> str:
    """What the run left on the instances, first thing under the header: it needs someone's hand."""
    if not summary.leftovers:
        return ""
    rows = "".join(
        f"<tr><td>{_e(x.lane)}</td><td>{_e(x.kind)}</td><td>{_e(x.id)}</td>"
        f"<td>{_e(x.case_slug)}#{x.iteration}</td><td>{_e(x.reason)}</td></tr>"
        for x in summary.leftovers
    )
    n = len(summary.leftovers)
    return (
        f'<section class="leftovers"><h2 class="error">{n} leftover{"" if n == 1 else "s"} on the instance</h2>'
        '<p class="meta">Created by this run and not deleted: <code>threadcase cleanup --journal JOURNAL</code> '
        "deletes them.</p><table><tr><th>instance</th><th>kind</th><th>id</th><th>case</th><th>why</th></tr>"
        f"{rows}</table></section>"
    )


def render_html(
    results: Sequence[CaseResult],
    summary: RunSummary,
    *,
    title: str = "threadcase report",
    prerendered: Mapping[tuple[str, int], str] | None = None,
    extra: str = "",
) -> str:
    """The whole report page (no external resources).

    ``extra``: ready HTML placed above the cases (``threadcase control`` puts its matrix there).

    ``prerendered`` maps (case slug, iteration) to that result's :func:`render_case_section`, made
    while the run went on: rendering a few hundred transcripts at the end was most of the time
    between the last case finishing and the run returning.
    """
    u = summary.units
    proxy = u.proxy_failures + u.proxy_not_judged
    counts = (
        f'<div class="counts"><span>{u.passed} passed</span><span>{u.failed} failed '
        f"({u.builder_failures} against the builder)</span>"
        f"<span>{u.not_judged} not judged</span>"
        + (f"<span>{proxy} because of the simulated user</span>" if proxy else "")
        + f"<span>{u.reviewed} reviewed</span>"
        f"<span>{u.errored} errored</span><span>exit {summary.exit_code}</span>"
        + ("<span>INTERRUPTED</span>" if summary.interrupted else "")
        + (f"<span>{len(summary.leftovers)} LEFTOVERS</span>" if summary.leftovers else "")
        + "</div>"
    )
    calibration = (
        f'<div class="meta calibration">{_e(summary.calibration.line())}</div>'
        if summary.calibration is not None
        else ""
    )
    provenance = provenance_line(summary.context)
    if provenance is not None:
        calibration += f'<div class="meta provenance">{_e(provenance)}</div>'
    calibration += "".join(f'<div class="meta model">model: {_e(role.line())}</div>' for role in summary.models)
    if summary.model_usage:
        calibration += _usage_table(summary.model_usage)
    calibration += "".join(
        f'<div class="meta not-verified">not verified: {group.count} × {_e(group.reason)} — '
        f"{_e(', '.join(group.cases))}</div>"
        for group in summary.not_verified
    )
    filters = [_render_leftovers(summary), '<div class="filters">']
    for key, label in (
        ("all", "all"),
        ("pass", "pass"),
        ("fail", "fail"),
        ("not_judged", "not judged"),
        ("errored", "errored"),
    ):
        on = ' class="on"' if key == "all" else ""
        n = len(results) if key == "all" else sum(r.status == key for r in results)
        filters.append(f'<button type="button" data-filter="{key}"{on}>{label} ({n})</button>')
    filters.append("</div>")
    # What needs a person's attention first: failures, then errors, then unjudged, then passes.
    ordered = sorted(results, key=lambda r: (_ORDER.get(r.status, 9), r.case_slug, r.iteration))
    rendered = prerendered or {}
    sections = [rendered.get(_key(r)) or render_case_section(r) for r in ordered]
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div class='meta'>run {_e(summary.run_id)} · {summary.cases} cases · "
        f"{summary.case_iterations} case-iterations · {summary.seconds:.1f} s</div>"
        f"<div class='meta user'>{_e(summary.simulated_user_line())}</div>{calibration}{counts}</header>"
        f"<main>{extra}{_render_stats(summary)}{''.join(filters)}{''.join(sections)}</main>"
        f"<script>{_JS}</script></body></html>\n"
    )
