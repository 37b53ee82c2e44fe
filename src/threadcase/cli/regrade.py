"""``threadcase regrade RUN``: grade a run's stored conversations again, with today's cases and judge.

A thin shell over :func:`threadcase.report.derived.regrade_and_report`: no agent runs and no instance
is started; the new run (journal and reports, marked as a re-grade of RUN) goes to ``--output-dir``.
Cases whose seed, conversation, scenarios or run set-up changed since RUN are refused, each named on
stderr. The result flags (``--baseline``, ``--markdown``, ``--langsmith-experiment``) work as on
``run``. Exit codes as for ``run``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import click
from pydantic import ValidationError
from rich.console import Console

from threadcase.cli.results import ResultOptions, finish, result_options, secrets_of
from threadcase.cli.run_options import calibration_options
from threadcase.errors import ConfigError
from threadcase.harness.journal import JOURNAL_NAME
from threadcase.harness.regrade import RegradeSettings
from threadcase.models import ModelSettings
from threadcase.report.console import case_line, summary_lines
from threadcase.verdicts import CaseResult

__all__ = ["regrade"]


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--suite",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_SUITE",
    show_envvar=True,
    help="Where the cases are now. [default: the suite the run recorded, else ./cases/golden]",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    envvar="THREADCASE_OUTPUT_DIR",
    show_envvar=True,
    help="The new run's journal and reports. [default: ./threadcase-results/<UTC timestamp>/]",
)
@click.option(
    "--concurrency",
    type=int,
    default=8,
    show_default=True,
    envvar="THREADCASE_CONCURRENCY",
    show_envvar=True,
    help="Case-iterations graded at once.",
)
@calibration_options(
    set_help="Labelled items the judge must agree with first. [default: ./cases/calibration/demo.jsonl]"
)
@click.option(
    "--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print the summary as JSON."
)
@result_options
def regrade(
    run: Path,
    suite: Path | None,
    output_dir: Path | None,
    concurrency: int,
    calibration_set: Path | None,
    calibration_threshold: float,
    skip_calibration: bool,
    as_json: bool,
    baseline: Path | None,
    alpha: float,
    markdown: bool,
    langsmith_experiment: str | None,
    langsmith_dataset: str | None,
) -> None:
    """Re-grade RUN's stored transcripts with the current cases and judge, no agent and no instance."""
    from threadcase.report.derived import regrade_and_report

    try:
        settings = RegradeSettings(
            run=run,
            suite=suite,
            output_dir=output_dir,
            models=ModelSettings.from_env(),
            concurrency=concurrency,
            calibration_set=calibration_set,
            calibration_threshold=calibration_threshold,
            skip_calibration=skip_calibration,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]).replace("_", "-")
        raise ConfigError(f"--{where}: {first['msg'].removeprefix('Value error, ')}") from None
    options = ResultOptions(baseline, alpha, markdown, langsmith_experiment, langsmith_dataset)
    options.preflight(os.environ)
    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    quiet = as_json or markdown

    def on_result(result: CaseResult) -> None:
        if not quiet:
            out.print(case_line(result, iterations=2), highlight=False, soft_wrap=True, markup=False)

    summary, outcome = anyio.run(lambda: regrade_and_report(settings, on_result=on_result))
    for refused in outcome.refused:
        err.print(refused.line(), highlight=False, soft_wrap=True, markup=False)

    def print_summary() -> None:
        if as_json:
            click.echo(summary.model_dump_json(indent=2))
            return
        for line in summary_lines(summary):
            out.print(line, highlight=False, soft_wrap=True, markup=False)
        out.print(f"reports: {summary.output_dir}", highlight=False, markup=False)

    sys.exit(
        finish(
            options,
            summary,
            outcome.output_dir / JOURNAL_NAME,
            out=out,
            err=err,
            as_json=as_json,
            print_summary=print_summary,
            secrets=secrets_of(os.environ),
        )
    )
