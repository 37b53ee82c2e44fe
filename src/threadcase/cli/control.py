"""``threadcase control``: prove each case can fail; a thin shell over ``report.control_view.control_and_report``.

Runs the selected cases clean and under every control (seed removed, each demo misbehaviour, the
final-turn reading of transcript rules), prints the matrix of cases × controls, and writes
``control.json`` beside the clean run's journal and reports (each control's under
``controls/<name>/``). Each flag has a ``THREADCASE_*`` environment twin. Exit codes: 0 every case
is turned red by a control (or allowed to be vacuous), 1 a case is vacuous or the clean run did not
pass it, 2 usage / configuration / case-file error, 3 the clean run judged nothing, 130 interrupted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import click
from pydantic import SecretStr
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from threadcase.cli.run import _Console
from threadcase.cli.run_options import csv_list, lane_options, selection_options, settings_from_flags
from threadcase.harness.control import ControlSettings
from threadcase.harness.runner import prepare_process
from threadcase.models import ModelSettings
from threadcase.report.control_view import CONTROL_JSON, control_and_report, control_lines
from threadcase.verdicts import CaseResult

__all__ = ["control"]


def _settings(**kwargs: object) -> ControlSettings:
    # The first part of a problem's location: ControlSettings nests the run's settings.
    return settings_from_flags(ControlSettings, kwargs, loc_depth=1)


@click.command()
@selection_options()
@click.option(
    "--controls",
    envvar="THREADCASE_CONTROLS",
    show_envvar=True,
    help="Comma-separated controls: seed-removed, final-turn, misbehaviour names. [default: every one available]",
)
@click.option(
    "--allow-vacuous",
    envvar="THREADCASE_ALLOW_VACUOUS",
    show_envvar=True,
    help="Comma-separated slugs of cases that are knowingly probes: listed, but not failing the command.",
)
@lane_options(
    base_url_help="Instance URL(s), comma-separated = lanes; misbehaviours need a demo. [default: the embedded demo]",
    iterations_help="Fresh runs per case and control (a unit is red under a control if it failed in any of them).",
    concurrency_help="Conversations at once, across lanes and controls.",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_OUTPUT_DIR",
    show_envvar=True,
    help="The clean run's journal and reports, control.json, controls/<name>/. "
    "[default: ./threadcase-results/<UTC timestamp>/]",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    envvar="THREADCASE_JSON",
    show_envvar=True,
    help="Print control.json instead of the matrix.",
)
def control(
    suite: Path | None,
    filter_: str | None,
    exclude: str | None,
    tier: str | None,
    tag: str | None,
    controls: str | None,
    allow_vacuous: str | None,
    base_url: str | None,
    email: str | None,
    password: str | None,
    iterations: int,
    concurrency: int,
    lane_cap: int | None,
    timeout_seconds: float,
    inactivity_seconds: float | None,
    output_dir: Path | None,
    as_json: bool,
) -> None:
    """Prove each case can fail: run it under controls (seed removed, each demo misbehaviour, final turn only)."""
    settings = _settings(
        suite=suite,
        filter=filter_,
        exclude=exclude,
        tier=tier,
        tag=tag,
        controls=csv_list(controls),
        allow_vacuous=csv_list(allow_vacuous),
        base_urls=csv_list(base_url),
        email=email,
        password=SecretStr(password) if password else None,
        iterations=iterations,
        concurrency=concurrency,
        lane_cap=lane_cap,
        timeout_seconds=timeout_seconds,
        inactivity_seconds=inactivity_seconds,
        output_dir=output_dir,
        models=ModelSettings.from_env(),
    )
    err: Console = _Console(stderr=True, highlight=False)
    # A bar on a terminal only (transient): the matrix at the end is the output.
    progress = Progress(
        TextColumn("[bold]threadcase control"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=as_json or not err.is_terminal,
    )
    task = progress.add_task("controls", total=None)

    def on_result(name: str, result: CaseResult) -> None:
        progress.advance(task)

    prepare_process()
    started = time.perf_counter()
    with progress:
        report = anyio.run(
            lambda: control_and_report(
                settings, on_result=on_result, on_start=lambda total: progress.update(task, total=total)
            )
        )
    out = _Console(highlight=False)
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        for line in control_lines(report, seconds=time.perf_counter() - started):
            out.print(line, highlight=False, soft_wrap=True, markup=False)
        out.print(f"reports: {report.output_dir} ({CONTROL_JSON}, report.html)", highlight=False, markup=False)
    sys.exit(report.exit_code)
