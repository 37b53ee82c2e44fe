"""``threadcase run`` and ``threadcase report``: a thin shell over :func:`threadcase.report.run_and_report`.

Each flag is one keyword of :class:`~threadcase.harness.runner.RunSettings` (or of the result
options in :mod:`threadcase.cli.results`: baseline, Markdown, LangSmith; or of the model settings in
:mod:`threadcase.cli.model_options`) and has a ``THREADCASE_*`` environment twin. Exit codes: 0 every
case-iteration verified and every judged unit passed, 1 a unit failed, 2 usage / configuration /
case-file error, 3 no unit failed but some case-iteration was not verified (nothing judged, or an
error), 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import click
from pydantic import SecretStr
from rich.console import Console

from threadcase.cli.model_options import model_options, model_settings
from threadcase.cli.results import ResultOptions, finish, result_options, secrets_of
from threadcase.cli.run_options import (
    calibration_options,
    csv_list,
    lane_options,
    selection_options,
    settings_from_flags,
)
from threadcase.errors import ConfigError
from threadcase.harness.interrupts import Interrupts
from threadcase.harness.journal import JOURNAL_NAME, journal_path
from threadcase.harness.runner import RunSettings, prepare_process, run_redactor
from threadcase.redaction import Redactor
from threadcase.report import RunSummary, rebuild_reports, run_and_report
from threadcase.report.console import ConsoleReporter, run_header, summary_lines
from threadcase.user_proxy import user_player
from threadcase.verdicts import CaseResult

__all__ = ["report", "run"]


class _Console(Console):
    """A rich console that survives its reader going away (``threadcase run | head``).

    Rich's default raises ``SystemExit`` from inside whichever task was printing, which would tear
    the run down half way; here output stops and the run finishes, journal and reports included.
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, (sys.stderr if self.stderr else sys.stdout).fileno())


def _settings(**kwargs: object) -> RunSettings:
    return settings_from_flags(RunSettings, kwargs)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def command_redactor() -> Redactor:
    """The command's redactor (``main`` puts it in the click context; a bare invocation gets a fresh one)."""
    obj = click.get_current_context().obj
    return obj if isinstance(obj, Redactor) else Redactor.from_environment(os.environ)


def _emit_summary(summary: RunSummary, *, as_json: bool, console: Console, redactor: Redactor) -> None:
    if as_json:
        click.echo(redactor.text(summary.model_dump_json(indent=2)))
        return
    for line in summary_lines(summary):
        console.print(redactor.text(line), highlight=False, soft_wrap=True, markup=False)
    console.print(redactor.text(f"reports: {summary.output_dir}"), highlight=False, markup=False)


@click.command()
@selection_options()
@lane_options(
    base_url_help="Instance URL(s), comma-separated = lanes. [default: start the embedded demo instance]",
    iterations_help="Fresh runs per case (feeds pass@k / pass^k).",
    concurrency_help="Conversations at once, across lanes (as many more cases may set up or clean up meanwhile).",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_OUTPUT_DIR",
    show_envvar=True,
    help="Journal and reports. [default: ./threadcase-results/<UTC timestamp>/]",
)
@click.option(
    "--keep-artifacts",
    is_flag=True,
    envvar="THREADCASE_KEEP_ARTIFACTS",
    show_envvar=True,
    help="Keep built workflows, tables, agents and threads.",
)
@click.option(
    "--demo-misbehave",
    envvar="THREADCASE_DEMO_MISBEHAVE",
    show_envvar=True,
    help="Misbehaviours of the embedded demo instance, comma-separated.",
)
@click.option(
    "--demo-faults",
    type=float,
    default=0.0,
    envvar="THREADCASE_DEMO_FAULTS",
    show_envvar=True,
    help="Fault rate of the embedded demo instance (0..1).",
)
@click.option(
    "--demo-latency-ms",
    type=int,
    default=0,
    envvar="THREADCASE_DEMO_LATENCY_MS",
    show_envvar=True,
    help="Per agent-step latency of the embedded demo instance.",
)
@click.option(
    "--demo-seed",
    type=int,
    default=0,
    envvar="THREADCASE_DEMO_SEED",
    show_envvar=True,
    help="Seed of the embedded demo instance's fault generator (reproducible runs).",
)
@click.option(
    "--replay-dir",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_REPLAY_DIR",
    show_envvar=True,
    help="Exported traces (<threadId>.json) instead of LangSmith.",
)
@calibration_options(
    set_help="Labelled items the judge must agree with first. "
    "[default: ./cases/calibration/demo.jsonl, else the shipped set]"
)
@model_options()
@click.option(
    "--shard",
    envvar="THREADCASE_SHARD",
    show_envvar=True,
    help="Run only part I of N of the selected cases (e.g. 2/4): deterministic, balanced, stable across runs.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    envvar="THREADCASE_JSON",
    show_envvar=True,
    help="Print the summary as JSON (no progress or per-case lines).",
)
@result_options
@click.option(
    "--progress/--no-progress",
    default=True,
    envvar="THREADCASE_PROGRESS",
    show_envvar=True,
    help="Progress bar on a terminal.",
)
def run(
    suite: Path | None,
    filter_: str | None,
    exclude: str | None,
    tier: str | None,
    tag: str | None,
    base_url: str | None,
    email: str | None,
    password: str | None,
    iterations: int,
    concurrency: int,
    lane_cap: int | None,
    timeout_seconds: float,
    inactivity_seconds: float | None,
    output_dir: Path | None,
    keep_artifacts: bool,
    demo_misbehave: str | None,
    demo_faults: float,
    demo_latency_ms: int,
    demo_seed: int,
    replay_dir: Path | None,
    calibration_set: Path | None,
    calibration_threshold: float,
    skip_calibration: bool,
    shard: str | None,
    as_json: bool,
    baseline: Path | None,
    alpha: float,
    markdown: bool,
    langsmith_experiment: str | None,
    langsmith_dataset: str | None,
    progress: bool,
    **models: Any,
) -> None:
    """Run a suite (default: the golden suite on the embedded demo instance) and grade every case.

    Models (``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``): ``--proxy-model`` plays the user, ``--judge-model``
    grades expectations, ``--verifier-model`` execution scenarios (default: the judge's); each role's
    timeout, attempts, temperature (default 0), seed and max_tokens have flags of their own.
    """
    settings = _settings(
        suite=suite,
        filter=filter_,
        exclude=exclude,
        tier=tier,
        tag=tag,
        base_urls=csv_list(base_url),
        email=email,
        password=SecretStr(password) if password else None,
        iterations=iterations,
        concurrency=concurrency,
        lane_cap=lane_cap,
        timeout_seconds=timeout_seconds,
        inactivity_seconds=inactivity_seconds,
        output_dir=output_dir,
        keep_artifacts=keep_artifacts,
        demo_misbehave=csv_list(demo_misbehave),
        demo_faults=demo_faults,
        demo_latency_ms=demo_latency_ms,
        demo_seed=demo_seed,
        replay_dir=replay_dir,
        calibration_set=calibration_set,
        calibration_threshold=calibration_threshold,
        skip_calibration=skip_calibration,
        shard=shard,
        models=model_settings(models),
        debug=os.environ.get("THREADCASE_DEBUG", "").strip() == "1",
    )
    options = ResultOptions(baseline, alpha, markdown, langsmith_experiment, langsmith_dataset)
    options.preflight(os.environ)
    redactor = command_redactor()
    redactor.update(run_redactor(settings))
    # With --json or --markdown, stdout carries only that; the per-case lines go to stderr.
    console = _Console(stderr=as_json or markdown, highlight=False)
    if not as_json:
        header = run_header(user_player(settings.models), settings.models.judge_model)
        console.print(header, highlight=False, soft_wrap=True, markup=False)
    # The planned total is known only once the suite is loaded: the run reports it via on_start.
    reporter = ConsoleReporter(
        console, total=0, iterations=iterations, progress=progress and not as_json, redactor=redactor
    )
    interrupts = Interrupts()

    def on_result(result: CaseResult) -> None:
        if not as_json:
            reporter.case_done(result)

    async def main() -> RunSummary:
        # Signals are counted from here to the end of the reports (see harness/interrupts.py).
        async with interrupts.watching():
            with reporter:
                return await run_and_report(
                    settings,
                    on_result=on_result,
                    on_start=reporter.set_total,
                    on_leftovers=reporter.leftovers_found,
                    interrupts=interrupts,
                    redactor=redactor,
                )

    prepare_process()
    summary = anyio.run(main)
    out = _Console(stderr=False, highlight=False)
    code = finish(
        options,
        summary,
        Path(summary.output_dir) / JOURNAL_NAME,
        out=out,
        err=_Console(stderr=True, highlight=False),
        as_json=as_json,
        print_summary=lambda: _emit_summary(summary, as_json=as_json, console=out, redactor=redactor),
        secrets=secrets_of(os.environ, [password, _secret(settings.models.api_key)]),
    )
    sys.exit(130 if interrupts.interrupted else code)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--merge",
    is_flag=True,
    envvar="THREADCASE_MERGE",
    show_envvar=True,
    help="Merge the runs (e.g. the shards of a CI matrix) into one run in --output-dir, statistics recomputed.",
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    envvar="THREADCASE_ALLOW_MIXED",
    show_envvar=True,
    help="With --merge: merge journals of different suites or settings anyway.",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_OUTPUT_DIR",
    show_envvar=True,
    help="Where to write the reports. [default: beside the journal; with --merge: threadcase-results/<UTC time>/]",
)
@click.option(
    "--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print the summary as JSON."
)
@result_options
def report(
    runs: tuple[Path, ...],
    merge: bool,
    allow_mixed: bool,
    output_dir: Path | None,
    as_json: bool,
    baseline: Path | None,
    alpha: float,
    markdown: bool,
    langsmith_experiment: str | None,
    langsmith_dataset: str | None,
) -> None:
    """Rebuild summary.json, junit.xml and report.html from a run (its journal.jsonl or its directory).

    With --merge, merge several runs into a new one instead.
    """
    options = ResultOptions(baseline, alpha, markdown, langsmith_experiment, langsmith_dataset)
    options.preflight(os.environ)
    redactor = command_redactor()
    if output_dir is not None and output_dir.exists() and not output_dir.is_dir():
        raise ConfigError(f"--output-dir {str(output_dir)!r} is a file, not a directory; name a directory")
    err = _Console(stderr=True, highlight=False)
    if merge:
        from threadcase.report.derived import merge_and_report

        summary, merged = merge_and_report(list(runs), output_dir=output_dir, allow_mixed=allow_mixed)
        for warning in merged.warnings:
            err.print(f"warning: {warning}", highlight=False, soft_wrap=True, markup=False)
        journal = Path(summary.output_dir) / JOURNAL_NAME
    else:
        if len(runs) != 1:
            raise ConfigError(f"report takes one run ({len(runs)} given); pass --merge to merge several")
        if allow_mixed:
            raise ConfigError("--allow-mixed applies only with --merge")
        journal = journal_path(runs[0])
        summary = rebuild_reports(journal, output_dir, redactor=redactor)
    out = _Console(highlight=False)
    sys.exit(
        finish(
            options,
            summary,
            journal,
            out=out,
            err=err,
            as_json=as_json,
            print_summary=lambda: _emit_summary(summary, as_json=as_json, console=out, redactor=redactor),
            secrets=secrets_of(os.environ),
        )
    )
