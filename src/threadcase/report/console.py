"""Terminal output: a progress bar while running, one line per case-iteration, and the summary.

The line and summary texts are pure functions (tested without a terminal); :class:`ConsoleReporter`
only decides where they go. Per-case lines print above the live progress bar, so a long run reads as
a log and still shows how far it got.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Mapping
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from threadcase.leftovers import LeftoverReport, describe_leftovers
from threadcase.records import UserPlayer
from threadcase.redaction import Redactor
from threadcase.report.summary import RunSummary, provenance_line
from threadcase.verdicts import CaseResult

__all__ = [
    "ConsoleReporter",
    "build_line",
    "case_line",
    "format_proxy",
    "leftover_lines",
    "run_header",
    "summary_lines",
]

_LABELS = {"pass": "PASS", "fail": "FAIL", "not_judged": "NOT JUDGED", "errored": "NOT JUDGED"}
_STYLES = {"pass": "green", "fail": "red", "not_judged": "yellow", "errored": "yellow"}


@functools.cache
def _load_proxy_formatter() -> Callable[[Mapping[str, int]], str] | None:
    # The proxy owns the wording of its statistics; look it up lazily so reports work from a bare
    # journal even in a build without the proxy package. Looked up once: whether the package is there
    # does not change while a process runs, and every report section and console line asks.
    try:
        module = importlib.import_module("threadcase.user_proxy.stats")
    except ImportError:
        return None
    formatter = getattr(module, "format_proxy_stats", None)
    return formatter if callable(formatter) else None


def format_proxy(stats: Mapping[str, int]) -> str:
    """The ``[proxy: ...]`` segment of a build line (empty when the proxy recorded nothing)."""
    if not stats:
        return ""
    formatter = _load_proxy_formatter()
    if formatter is not None:
        return str(formatter(stats))
    return "[proxy: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())) + "]"


def _reason(result: CaseResult) -> str:
    if result.status == "fail":
        failed = [v for v in result.verdicts if v.status == "fail"]
        first = failed[0]
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        return f"{first.unit}: {first.reason}{more}"
    if result.status == "pass":
        judged = [v for v in result.verdicts if v.status in ("pass", "fail")]
        passed = sum(v.status == "pass" for v in judged)
        unjudged_count = sum(v.status == "not_judged" for v in result.verdicts)
        extra = f", {unjudged_count} not judged" if unjudged_count else ""
        return f"{passed}/{len(judged)} judged units passed{extra}"
    if result.error is not None:
        return f"errored: {result.error.type}: {result.error.message} ({result.error.attribution})"
    unjudged = [v for v in result.verdicts if v.status == "not_judged"]
    if unjudged:
        # A failed premise or an instance fault explains the case; "no judge model" only one kind of unit.
        premise = [v for v in unjudged if "premise failed" in v.reason]
        framework = [v for v in unjudged if v.attribution == "framework_issue" and v.kind not in ("process", "outcome")]
        return (premise or framework or unjudged)[0].reason
    return "no unit was judged"


def case_line(result: CaseResult, *, iterations: int = 1) -> str:
    """``PASS``/``FAIL``/``NOT JUDGED``, the case (and iteration when several), and why."""
    name = f"{result.case_slug}#{result.iteration}" if iterations > 1 else result.case_slug
    return f"{_LABELS[result.status]:<10} {name}  {_reason(result)}"


def build_line(result: CaseResult) -> str:
    """Node count, live turns, seconds and the proxy segment of one case-iteration."""
    record = result.record
    if record is None:
        return f"  build: no record, {result.seconds:.1f} s"
    nodes = sum(len(w.nodes) for w in record.artifacts.workflows)
    turns = sum(1 for t in record.live_turns if t.role == "user")
    parts = [f"  build: {nodes} node{'s' if nodes != 1 else ''}, {turns} turn{'s' if turns != 1 else ''}"]
    parts.append(f"{result.seconds:.1f} s")
    line = ", ".join(parts)
    if record.ended_by not in ("done", "script-exhausted", "single-prompt"):
        line += f", ended by {record.ended_by}"
    proxy = format_proxy(record.proxy_stats)
    return f"{line} {proxy}" if proxy else line


def run_header(user: UserPlayer, judge_model: str | None) -> str:
    """The line a run opens with: who plays the user and who judges."""
    judge = judge_model or "none (process and outcome expectations not judged)"
    return f"threadcase run — simulated user: {user.describe()}; judge: {judge}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def summary_lines(summary: RunSummary) -> list[str]:
    """The closing summary: unit counts apart, case statuses, the verdict in one word."""
    u = summary.units
    lines = [
        f"{summary.cases} cases, {summary.case_iterations} case-iterations"
        + (f" of {summary.planned_case_iterations} planned" if summary.planned_case_iterations is not None else "")
        + f", {summary.seconds:.1f} s",
        f"units: {u.passed} passed, {u.failed} failed ({u.builder_failures} against the builder"
        + (f", {u.proxy_failures} the simulated user's" if u.proxy_failures else "")
        + f"), {u.not_judged} not judged"
        + (f" ({u.proxy_not_judged} because of the simulated user)" if u.proxy_not_judged else "")
        + f", {u.reviewed} reviewed; {u.errored} case-iterations errored",
        summary.simulated_user_line(),
    ]
    statuses = summary.case_statuses
    lines.append(
        "cases: "
        + ", ".join(
            f"{statuses.get(key, 0)} {label}"
            for key, label in (
                ("pass", "passed"),
                ("fail", "failed"),
                ("not_verified", "not verified"),
                ("errored", "errored"),
            )
        )
    )
    for case in summary.case_stats:
        if case.iterations < 2:
            continue
        for unit in case.units:
            # Across iterations, the units worth a line are those that did not pass every time.
            if unit.evaluated and unit.passes < unit.evaluated:
                low, high = _pct(unit.wilson_low), _pct(unit.wilson_high)
                lines.append(
                    f"unstable: {case.case_slug} {unit.unit}: passed {unit.passes}/{unit.evaluated} "
                    f"(95% {low}–{high}), flip rate {_pct(unit.flip_rate)}"
                )
    if summary.calibration is not None:
        lines.append(summary.calibration.line())
    provenance = provenance_line(summary.context)
    if provenance is not None:
        lines.append(provenance)
    lines.extend(f"model: {role.line()}" for role in summary.models)
    if summary.model_usage:
        lines.append(
            "tokens: " + "; ".join(f"{role} {used.line()}" for role, used in sorted(summary.model_usage.items()))
        )
    for group in summary.not_verified:
        shown = ", ".join(group.cases[:5]) + (f" (+{len(group.cases) - 5} more)" if len(group.cases) > 5 else "")
        lines.append(f"not verified: {group.count} × {group.reason} — {shown}")
    left = summary.leftovers
    if left:
        lines.append(
            f"left on the instance: {describe_leftovers(left, limit=len(left))} "
            "(`threadcase cleanup --journal JOURNAL` deletes them)"
        )
    lines.append(_verdict(summary))
    return lines


def _verdict(summary: RunSummary) -> str:
    if summary.interrupted:
        return "INTERRUPTED: partial results"
    left = summary.leftovers
    if summary.exit_code == 0 and left:
        # Never plain GREEN: the instance is not as the run found it.
        plural = "" if len(left) == 1 else "s"
        return f"GREEN, with {len(left)} leftover{plural} on the instance: {describe_leftovers(left, limit=5)}"
    if summary.exit_code == 0:
        return "GREEN: every case-iteration verified, every judged unit passed"
    unverified = summary.units.not_verified
    errored = summary.units.errored
    total = summary.case_iterations
    gap = (
        f"{unverified} of {total} case-iterations not verified" + (f" ({errored} errored)" if errored else "")
        if unverified
        else ""
    )
    if summary.exit_code == 1:
        return "RED: a unit failed" + (f"; {gap}" if gap else "")
    if not total:
        return "NOT GREEN: no case-iteration ran"
    return f"NOT GREEN: {gap}; no judged unit failed"


def leftover_lines(report: LeftoverReport) -> list[str]:
    """``LEFTOVER   case#0  workflow wf-1 on http://host: delete failed: ...``, one line per resource."""
    return [
        f"{'LEFTOVER':<10} {leftover.case_slug}#{leftover.iteration}  {leftover.kind} {leftover.id} "
        f"on {leftover.lane or 'the instance'}: {leftover.reason}"
        for leftover in report.resources
    ]


class ConsoleReporter:
    """Progress bar plus per-case lines; a context manager around the run.

    Every line passes through ``redactor`` (the run's) before it is printed.
    """

    def __init__(
        self,
        console: Console,
        *,
        total: int,
        iterations: int = 1,
        progress: bool = True,
        redactor: Redactor | None = None,
    ) -> None:
        self.redactor = redactor or Redactor.from_environment(os.environ)
        self.console = console
        self.total = total
        self.iterations = iterations
        self.counts = {"pass": 0, "fail": 0, "not_judged": 0, "errored": 0}
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if progress and console.is_terminal:
            self._progress = Progress(
                TextColumn("[bold]threadcase"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )

    def _description(self) -> str:
        c = self.counts
        return f"{c['pass']} pass · {c['fail']} fail · {c['not_judged'] + c['errored']} not judged"

    def __enter__(self) -> ConsoleReporter:
        if self._progress is not None:
            self._progress.start()
            self._task = self._progress.add_task(self._description(), total=self.total)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def set_total(self, total: int) -> None:
        """The planned number of case-iterations, once the suite is loaded."""
        self.total = total
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total)

    def case_done(self, result: CaseResult) -> None:
        """Print the case's lines and advance the bar."""
        self.counts[result.status] += 1
        style = _STYLES[result.status]
        line = escape(self.redactor.text(case_line(result, iterations=self.iterations)))
        self.console.print(f"[{style}]{line}[/{style}]", highlight=False, soft_wrap=True)
        build = escape(self.redactor.text(build_line(result)))
        self.console.print(build, style="dim", highlight=False, soft_wrap=True)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, description=self._description())

    def leftovers_found(self, report: LeftoverReport) -> None:
        """Print what a case-iteration's cleanup left on the instance."""
        for line in leftover_lines(report):
            self.console.print(f"[yellow]{escape(self.redactor.text(line))}[/yellow]", highlight=False, soft_wrap=True)

    def print_summary(self, summary: RunSummary) -> None:
        for line in summary_lines(summary):
            self.console.print(escape(self.redactor.text(line)), highlight=False, soft_wrap=True)
