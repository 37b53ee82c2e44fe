"""``threadcase dataset push``: a suite's cases as a LangSmith dataset, one example per case.

A thin shell over :func:`threadcase.report.langsmith.push_dataset`. The dataset is created or reused
by name; an example whose case file changed is updated (a new dataset version), an unchanged one is
left alone. Replay cases are refused, each named: they hold someone's real conversation. Exit codes:
0 pushed, 2 usage error (no key, bad suite, every selected case refused), 3 LangSmith failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from threadcase.case.loader import default_suite_path, load_suite, select_cases
from threadcase.cli.results import secrets_of
from threadcase.cli.run_options import selection_options
from threadcase.errors import ConfigError

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """LangSmith datasets of threadcase cases."""


@dataset.command()
@selection_options()
@click.option(
    "--name",
    envvar="THREADCASE_LANGSMITH_DATASET",
    show_envvar=True,
    help="The LangSmith dataset, created or reused. [default: threadcase-<suite directory>]",
)
def push(
    suite: Path | None,
    filter_: str | None,
    exclude: str | None,
    tier: str | None,
    tag: str | None,
    name: str | None,
) -> None:
    """Push the suite's cases as a LangSmith dataset (needs LANGSMITH_API_KEY); replay cases are refused."""
    from threadcase.report.langsmith import LangSmithTarget, default_dataset_name, push_dataset

    target = LangSmithTarget.from_env(os.environ, flag="dataset push")
    path = suite or default_suite_path()
    if not path.exists():
        raise ConfigError(f"suite {str(path)!r} does not exist; pass --suite DIR (or THREADCASE_SUITE)")
    cases = select_cases(load_suite([path]), filter=filter_, exclude=exclude, tier=tier, tag=tag)
    if not cases:
        raise ConfigError(f"no case in {str(path)!r} matches the selection")
    pushed = push_dataset(
        cases, dataset=name or default_dataset_name(path), target=target, secrets=secrets_of(os.environ)
    )
    for slug, why in pushed.skipped:
        click.echo(f"refused {slug}: {why}", err=True)
    click.echo(pushed.lines()[-1])
    # Nothing pushed because every selected case was refused is not a success.
    sys.exit(0 if pushed.example_ids else 2)
