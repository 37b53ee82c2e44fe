"""What ``threadcase control`` shows: the console matrix (cases × controls), ``control.json``, the HTML section.

:func:`control_and_report` is the one call behind the command: run the controls
(:func:`threadcase.harness.control.run_controls`), read them against the clean run
(:func:`threadcase.harness.control_matrix.control_report`), and write every report — the clean run's
journal and reports in the output directory (its ``report.html`` opens on the matrix), each control's
under ``controls/<name>/``, and ``control.json`` beside them. The text forms are pure functions of the
:class:`~threadcase.harness.control_matrix.ControlReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from threadcase.harness.control import CLEAN, FINAL_TURN, SEED_REMOVED, ControlOutcome, ControlSettings, run_controls
from threadcase.harness.control_matrix import CONTROL_JSON, CaseCell, CaseControls, ControlReport, control_report
from threadcase.report import write_reports
from threadcase.report.summary import build_summary, write_atomic
from threadcase.verdicts import CaseResult

__all__ = [
    "CONTROL_JSON",
    "control_and_report",
    "control_lines",
    "matrix_lines",
    "render_control_section",
    "short_names",
    "write_control_reports",
]

_VERDICT = {"proven": "proven", "vacuous": "VACUOUS", "allowed-vacuous": "vacuous (allowed)", "unproven": "UNPROVEN"}
_CLEAN_CELL = {"green": "pass", "red": "FAIL", "not_judged": "n/j", "errored": "ERR"}
_FIXED = {CLEAN: "clean", SEED_REMOVED: "seed", FINAL_TURN: "final"}


def short_names(controls: Sequence[str]) -> dict[str, str]:
    """A short column label per control: a misbehaviour's first word, with its next word's start if two share it."""
    firsts = [name.split("-")[0] for name in controls if name not in _FIXED]
    labels: dict[str, str] = {}
    for name in controls:
        if name in _FIXED:
            labels[name] = _FIXED[name]
            continue
        words = name.split("-")
        unique = firsts.count(words[0]) == 1 and words[0] not in _FIXED.values()
        labels[name] = words[0] if unique or len(words) == 1 else f"{words[0]}-{words[1][:4]}"
    if len(set(labels.values())) < len(labels):
        return {name: name for name in controls}  # rare clashes: the full names, always distinct
    return labels


def _cell_text(name: str, cell: CaseCell | None) -> str:
    if cell is None:
        return "–"
    if name == CLEAN:
        return _CLEAN_CELL.get(cell.status, cell.status)
    return {
        "red": f"RED {len(cell.red_units)}",
        "green": "·",
        "not_judged": "n/j",
        "needs_seed": "needs",
        "errored": "ERR",
        "not_run": "–",
        "history_needed": "hist",
        "same_without_history": "SAME",
    }[cell.status]


def _columns(report: ControlReport) -> list[str]:
    return [info.name for info in report.controls]


def matrix_lines(report: ControlReport) -> list[str]:
    """The matrix: one row per case, one column per control, the case's verdict last; and its legend."""
    columns = _columns(report)
    labels = short_names(columns)
    width = max([len("case"), *(len(c.slug) for c in report.cases)])
    widths = {name: max(5, len(labels[name])) for name in columns}
    header = f"{'case':<{width}}  " + "  ".join(f"{labels[n]:<{widths[n]}}" for n in columns) + "  verdict"
    lines = [header]
    for case in report.cases:
        cells = "  ".join(f"{_cell_text(n, case.cells.get(n)):<{widths[n]}}" for n in columns)
        lines.append(f"{case.slug:<{width}}  {cells}  {_VERDICT[case.verdict]}")
    named = [f"{labels[n]} = {n}" for n in columns if labels[n] != n]
    lines.append(
        "RED n: n units turned red · ·: judged, nothing turned red · n/j: not judged · needs: needs the seed · "
        "–: not run · final: hist = the final turn alone misses it, SAME = it catches the same without the history"
    )
    if named:
        lines.append("columns: " + ", ".join(named))
    return lines


def _tried(case: CaseControls, labels: dict[str, str], every: Sequence[str], misbehaviours: Sequence[str]) -> str:
    if list(case.tried) == list(every):
        return f"all {len(every)} controls"
    if misbehaviours and list(case.tried) == list(misbehaviours):
        return f"the {len(misbehaviours)} misbehaviours"
    return ", ".join(labels[n] for n in case.tried) or "none"


def control_lines(report: ControlReport, *, seconds: float | None = None) -> list[str]:
    """Everything the console shows after the run: the matrix, what is vacuous, flags, never-flipped units, verdict."""
    lines = matrix_lines(report)
    labels = short_names(_columns(report))
    every = [info.name for info in report.controls if info.name not in (CLEAN, FINAL_TURN)]
    misbehaviours = [info.name for info in report.controls if info.kind == "misbehaviour"]
    lines.append("")
    for case in report.cases:
        if case.verdict in ("vacuous", "allowed-vacuous", "unproven"):
            lines.append(f"{_VERDICT[case.verdict]}: {case.slug}: {case.reason}")
    for case in report.cases:
        for flag in case.flags:
            lines.append(f"flag: {case.slug}: {flag}")
    flipped_none = [c for c in report.cases if c.never_flipped]
    if flipped_none:
        lines.append("never turned red (passed clean, red under no control):")
        for case in flipped_none:
            lines.append(
                f"  {case.slug} (tried {_tried(case, labels, every, misbehaviours)}): {', '.join(case.never_flipped)}"
            )
    never_judged = sum(len(c.never_judged) for c in report.cases)
    if never_judged:
        first = next(
            (u.clean.reason for c in report.cases for u in c.units if u.unit in c.never_judged and u.clean.reason), ""
        )
        lines.append(f"units judged in no run: {never_judged}" + (f" (e.g. {first})" if first else ""))
    lines.extend(f"warning: {warning}" for warning in report.warnings)
    ran = [info for info in report.controls if info.name != CLEAN]
    iterations = sum(info.case_iterations for info in report.controls)
    took = f", {seconds:.1f} s" if seconds is not None else ""
    lines.append(
        f"{len(report.cases)} cases, clean + {len(ran)} controls ({', '.join(i.name for i in ran) or 'none'}), "
        f"{iterations} case-iterations{took}"
    )
    lines.append(_verdict_line(report))
    return lines


def _verdict_line(report: ControlReport) -> str:
    if report.interrupted:
        return "INTERRUPTED: partial results"
    if report.exit_code == 3:
        return "NOTHING JUDGED: the clean run judged no unit, so no control can be compared with it"
    problems = []
    if report.vacuous:
        problems.append(f"{len(report.vacuous)} case(s) no control turns red")
    if report.unproven:
        problems.append(f"{len(report.unproven)} case(s) the clean run did not pass")
    if problems:
        return "VACUOUS: " + "; ".join(problems)
    allowed = f" ({len(report.allowed_vacuous)} allowed to be vacuous)" if report.allowed_vacuous else ""
    return f"PROVEN: every case is turned red by at least one control{allowed}"


_CSS = (
    "<style>section.control{background:#fff;border:1px solid #d6d9e0;border-radius:6px;margin:0 0 14px;"
    "padding:10px 14px}section.control>h2{font-size:16px;margin:4px 0}.control table{width:auto}"
    ".control td.c{text-align:center;font:12px ui-monospace,Menlo,monospace}"
    ".control td.red{background:#fbe3e3;color:#a11}.control td.same{background:#fff1d6}"
    ".control td.hist{background:#e5f4ea}.control .v-vacuous,.control .v-unproven{color:#c62828;font-weight:600}"
    "</style>"
)


def _cell_title(cell: CaseCell | None) -> str:
    if cell is None:
        return ""
    parts = [", ".join(cell.red_units)] if cell.red_units else []
    if cell.note:
        parts.append(cell.note)
    return "; ".join(parts)


def render_control_section(report: ControlReport) -> str:
    """The HTML section: the matrix (a cell's title names its units or says why), verdicts, flags, never-red units."""
    columns = _columns(report)
    labels = short_names(columns)
    e = escape
    # Not a "case" section: the page's status filter must never hide the matrix.
    out = [f'{_CSS}<section class="control" id="controls"><h2>Controls: can each case fail?</h2>']
    out.append(f"<p class='meta'>{e(_verdict_line(report))}</p><table><tr><th>case</th>")
    out += [f"<th title='{e(n)}'>{e(labels[n])}</th>" for n in columns]
    out.append("<th>verdict</th></tr>")
    for case in report.cases:
        out.append(f"<tr><td>{e(case.slug)}</td>")
        for name in columns:
            cell = case.cells.get(name)
            css = {"red": "red", "same_without_history": "same", "history_needed": "hist"}.get(
                cell.status if cell is not None and name != CLEAN else "", ""
            )
            out.append(f"<td class='c {css}' title='{e(_cell_title(cell))}'>{e(_cell_text(name, cell))}</td>")
        out.append(f"<td class='v-{e(case.verdict)}' title='{e(case.reason)}'>{e(_VERDICT[case.verdict])}</td></tr>")
    out.append("</table><ul>")
    out += [f"<li>{e(info.name)}: {e(info.description)}</li>" for info in report.controls]
    out.append("</ul>")
    listed = [(c, f"{_VERDICT[c.verdict]}: {c.reason}") for c in report.cases if c.verdict != "proven"]
    listed += [(c, f"flag: {flag}") for c in report.cases for flag in c.flags]
    listed += [(c, f"never turned red: {', '.join(c.never_flipped)}") for c in report.cases if c.never_flipped]
    if listed:
        out.append("<table><tr><th>case</th><th>what</th></tr>")
        out += [f"<tr><td>{e(c.slug)}</td><td>{e(text)}</td></tr>" for c, text in listed]
        out.append("</table>")
    out += [f"<p class='meta'>warning: {e(w)}</p>" for w in report.warnings]
    out.append("</section>")
    return "".join(out)


def write_control_reports(outcome: ControlOutcome, report: ControlReport) -> None:
    """``control.json``, the clean run's reports (its page opens on the matrix), and each control's reports."""
    write_atomic(outcome.output_dir / CONTROL_JSON, report.model_dump_json(indent=2) + "\n")
    for name, run in outcome.runs.items():
        summary = build_summary(
            run.results,
            run_id=run.run_id or outcome.run_id,
            suite=str(outcome.suite),
            base_urls=outcome.base_urls,
            output_dir=str(run.output_dir),
            interrupted=outcome.interrupted,
            planned=run.planned,
        )
        write_reports(
            run.results, summary, run.output_dir, html_extra=render_control_section(report) if name == CLEAN else ""
        )


async def control_and_report(
    settings: ControlSettings,
    *,
    on_result: Callable[[str, CaseResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ControlReport:
    """Run the controls, read them against the clean run, write every report; returns ``control.json``'s report."""
    outcome = await run_controls(settings, on_result=on_result, on_start=on_start)
    report = control_report(outcome)
    write_control_reports(outcome, report)
    return report
