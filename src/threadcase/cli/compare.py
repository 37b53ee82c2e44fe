"""``threadcase compare BASELINE CANDIDATE``: what changed between two runs, and whether it is more than chance.

A thin shell over :func:`threadcase.report.compare_view.compare_runs`. Prints the changed units (with
pass counts, classes and the one-sided Fisher p-value) and the cases whose tokens or turns moved;
writes ``compare.json`` and ``compare.html`` (beside the candidate's journal, or in ``--output-dir``).
Exit codes: 0 no unit regressed significantly, 1 one did, 2 usage error, 3 a run judged nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from threadcase.cli.results import alpha_option
from threadcase.report.compare_view import compare_lines, compare_runs

__all__ = ["compare"]


@click.command()
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("candidate", type=click.Path(path_type=Path))
@alpha_option
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="THREADCASE_COMPARE_OUTPUT_DIR",
    show_envvar=True,
    help="Where compare.json and compare.html go. [default: beside the candidate's journal]",
)
@click.option(
    "--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print compare.json instead."
)
def compare(baseline: Path, candidate: Path, alpha: float, output_dir: Path | None, as_json: bool) -> None:
    """Compare two runs (each a journal.jsonl or a run directory), unit by unit and case by case."""
    comparison = compare_runs(baseline, candidate, alpha=alpha, output_dir=output_dir)
    if as_json:
        click.echo(comparison.model_dump_json(indent=2))
    else:
        for line in compare_lines(comparison):
            click.echo(line)
    sys.exit(comparison.exit_code)
