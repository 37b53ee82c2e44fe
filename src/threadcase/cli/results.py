"""What ``run``, ``report`` and ``regrade`` do with a finished run's results, shared by all three.

After the journal and the reports exist: compare with a baseline (``--baseline RUN``, ``--alpha``:
console table, ``compare.json``, ``compare.html``), print the Markdown summary (``--markdown``, also
written to ``summary.md``), and record a LangSmith experiment (``--langsmith-experiment NAME``,
``--langsmith-dataset``). Each flag has a ``THREADCASE_*`` twin. Everything that can be checked
before a long run (the baseline journal readable, the LangSmith key set) is checked by
:meth:`ResultOptions.preflight`, so a mistake costs no run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from threadcase.errors import ConfigError, ExportError
from threadcase.harness.compare import Comparison
from threadcase.harness.journal import read_journal
from threadcase.redaction import secret_values
from threadcase.report.compare_view import compare_lines, compare_runs
from threadcase.report.markdown import MARKDOWN_NAME, render_markdown
from threadcase.report.summary import RunSummary, write_atomic
from threadcase.verdicts import CaseResult

__all__ = ["ResultOptions", "alpha_option", "finish", "result_options", "secrets_of"]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_EXPORT_FAILED = 3


def alpha_option(function: F) -> F:
    """``--alpha``: the significance level of a comparison."""
    return click.option(
        "--alpha",
        type=click.FloatRange(0.0, 1.0, min_open=True),
        default=0.05,
        show_default=True,
        envvar="THREADCASE_ALPHA",
        show_envvar=True,
        help="A drop in a unit's pass rate is a regression when its one-sided Fisher p-value is at most this "
        "(1 = any drop).",
    )(function)


def result_options(function: F) -> F:
    """The flags of :class:`ResultOptions`, for ``run``, ``report`` and ``regrade``."""
    options = [
        click.option(
            "--baseline",
            type=click.Path(path_type=Path),
            envvar="THREADCASE_BASELINE",
            show_envvar=True,
            help="Compare with this run (journal or run directory): table, compare.json, compare.html.",
        ),
        alpha_option,
        click.option(
            "--markdown",
            is_flag=True,
            envvar="THREADCASE_MARKDOWN",
            show_envvar=True,
            help="Print a Markdown summary on stdout (PR comment, $GITHUB_STEP_SUMMARY); also summary.md.",
        ),
        click.option(
            "--langsmith-experiment",
            envvar="THREADCASE_LANGSMITH_EXPERIMENT",
            show_envvar=True,
            help="Record the run as this LangSmith experiment (needs LANGSMITH_API_KEY).",
        ),
        click.option(
            "--langsmith-dataset",
            envvar="THREADCASE_LANGSMITH_DATASET",
            show_envvar=True,
            help="The experiment's dataset, created or reused by name. [default: threadcase-<suite directory>]",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def secrets_of(environ: Mapping[str, str], extra: Iterable[str | None] = ()) -> list[str]:
    """Every value that must never reach LangSmith: every secret the environment configures (``EVAL_*``
    tokens, model and LangSmith keys, passwords, URL userinfo: :func:`~threadcase.redaction.secret_values`)
    and ``extra``."""
    return [value for value in [*secret_values(environ), *extra] if value]


@dataclasses.dataclass(frozen=True)
class ResultOptions:
    """The result flags of one command."""

    baseline: Path | None = None
    alpha: float = 0.05
    markdown: bool = False
    langsmith_experiment: str | None = None
    langsmith_dataset: str | None = None

    def preflight(self, environ: Mapping[str, str]) -> None:
        """Refuse what would fail after the run: an unreadable baseline, LangSmith without a key."""
        if self.baseline is not None:
            read_journal(self.baseline)  # a ConfigError names the path
        if self.langsmith_experiment is not None:
            from threadcase.report.langsmith import LangSmithTarget

            if not self.langsmith_experiment.strip():
                raise ConfigError("--langsmith-experiment: the experiment needs a name")
            LangSmithTarget.from_env(environ, flag="--langsmith-experiment")


def _record_experiment(
    options: ResultOptions, summary: RunSummary, results: list[CaseResult], secrets: Iterable[str], err: Console
) -> None:
    from threadcase.report.langsmith import LangSmithTarget, default_dataset_name, record_experiment

    assert options.langsmith_experiment is not None
    context = summary.context
    suite = (context.suite if context is not None else "") or summary.suite or "suite"
    target = LangSmithTarget.from_env(os.environ, flag="--langsmith-experiment")
    recorded = record_experiment(
        results,
        experiment=options.langsmith_experiment.strip(),
        dataset=options.langsmith_dataset or default_dataset_name(suite),
        target=target,
        secrets=secrets,
        metadata={
            "threadcase_run_id": summary.run_id,
            "suite": suite,
            "iterations": context.iterations if context is not None else None,
            "shard": context.shard if context is not None else None,
            "regrade_of": context.regrade_of if context is not None else None,
            "suite_hash": context.suite_hash if context is not None else None,
        },
    )
    for line in recorded.lines():
        err.print(line, highlight=False, soft_wrap=True, markup=False)


def finish(
    options: ResultOptions,
    summary: RunSummary,
    journal: Path,
    *,
    out: Console,
    err: Console,
    as_json: bool,
    print_summary: Callable[[], None],
    secrets: Iterable[str] = (),
) -> int:
    """Compare, print, write and record what ``options`` ask for; returns the command's exit code.

    ``journal`` is the run's (a file or run directory); what is written goes to the summary's output
    directory. The exit code is the run's, except that a significant regression makes a green run 1,
    and a failed LangSmith write makes a green run 3 (its error printed; journal and reports stand).
    """
    output_dir = Path(summary.output_dir)
    results: list[CaseResult] = read_journal(journal)
    comparison: Comparison | None = None
    if options.baseline is not None:
        comparison = compare_runs(options.baseline, journal, alpha=options.alpha, output_dir=output_dir)
    if options.markdown:
        text = render_markdown(summary, results, comparison=comparison)
        write_atomic(output_dir / MARKDOWN_NAME, text)
        click.echo(text, nl=False)
    elif as_json:
        print_summary()
    else:
        print_summary()
        if comparison is not None:
            out.print("", highlight=False)
            for line in compare_lines(comparison):
                out.print(line, highlight=False, soft_wrap=True, markup=False)
    code = summary.exit_code
    if comparison is not None and comparison.exit_code == 1 and code == 0:
        code = 1
    if options.langsmith_experiment is not None:
        try:
            _record_experiment(options, summary, results, secrets, err)
        except ExportError as exc:
            err.print(f"threadcase: ExportError: {exc}", highlight=False, soft_wrap=True, markup=False)
            code = code or EXIT_EXPORT_FAILED
    return code
