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
from threadcase.errors import ConfigError

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """LangSmith datasets of threadcase cases."""


@dataset.command()
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
