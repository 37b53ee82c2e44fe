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
from pydantic import SecretStr, ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from threadcase.cli.run import _FLAG_OF_FIELD, _Console, _csv
from threadcase.errors import ConfigError
from threadcase.harness.control import ControlSettings
from threadcase.harness.runner import prepare_process
from threadcase.models import ModelSettings
from threadcase.report.control_view import CONTROL_JSON, control_and_report, control_lines
from threadcase.verdicts import CaseResult

__all__ = ["control"]


def _settings(**kwargs: object) -> ControlSettings:
    try:
        return ControlSettings.model_validate(kwargs)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][:1]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        flag = _FLAG_OF_FIELD.get(where, where.replace("_", "-"))
        raise ConfigError(f"--{flag}: {message}") from None


@click.command()
@click.option(
    "--suite",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_SUITE",
    show_envvar=True,
    help="Suite directory or case file. [default: ./cases/golden, else the golden suite shipped with threadcase]",
)
@click.option(
    "--filter", "filter_", envvar="THREADCASE_FILTER", show_envvar=True, help="Comma-separated slug substrings (OR)."
)
@click.option(
    "--exclude", envvar="THREADCASE_EXCLUDE", show_envvar=True, help="Comma-separated slug substrings to skip."
)
@click.option("--tier", envvar="THREADCASE_TIER", show_envvar=True, help="Only cases whose datasets contain TIER.")
@click.option("--tag", envvar="THREADCASE_TAG", show_envvar=True, help="Only cases with this tag.")
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
@click.option(
    "--base-url",
    envvar="THREADCASE_BASE_URL",
    show_envvar=True,
    help="Instance URL(s), comma-separated = lanes; misbehaviours need a demo. [default: the embedded demo]",
)
@click.option("--email", envvar="THREADCASE_EMAIL", show_envvar=True, help="Login e-mail of the instance.")
@click.option("--password", envvar="THREADCASE_PASSWORD", show_envvar=True, help="Login password (never printed).")
@click.option(
    "--iterations",
    type=int,
    default=1,
    show_default=True,
    envvar="THREADCASE_ITERATIONS",
    show_envvar=True,
    help="Fresh runs per case and control (a unit is red under a control if it failed in any of them).",
)
@click.option(
    "--concurrency",
    type=int,
    default=8,
    show_default=True,
    envvar="THREADCASE_CONCURRENCY",
    show_envvar=True,
    help="Conversations at once, across lanes and controls.",
)
@click.option(
    "--lane-cap",
    type=int,
    envvar="THREADCASE_LANE_CAP",
    show_envvar=True,
    help="Conversations (builds) at once per lane. [default: --concurrency]",
)
@click.option(
    "--timeout-seconds",
    type=float,
    default=900.0,
    show_default=True,
    envvar="THREADCASE_TIMEOUT_SECONDS",
    show_envvar=True,
    help="Budget of one user turn (complex cases ×1.5).",
)
@click.option(
    "--inactivity-seconds",
    type=float,
    envvar="THREADCASE_INACTIVITY_SECONDS",
    show_envvar=True,
    help="No event for this long cancels a run as stalled. [default: 240]",
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
        controls=_csv(controls),
        allow_vacuous=_csv(allow_vacuous),
        base_urls=_csv(base_url),
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
