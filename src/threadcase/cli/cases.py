"""``threadcase validate``, ``threadcase list`` and ``threadcase schema``: case files without running anything.

Thin shell over :mod:`threadcase.case.loader`. Problems are raised as
:class:`~threadcase.errors.CaseSchemaError`; the CLI entry point prints one line per problem
and exits with code 2.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from threadcase.case.loader import SUITE_ENV, LoadedCase, default_suite_path, load_suite, select_cases
from threadcase.case.notes import script_turn
from threadcase.case.schema import Case
from threadcase.errors import CaseSchemaError

__all__ = ["case_json_schema", "list_cases", "schema", "validate"]

_paths = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
_suite = click.option(
    "--suite",
    type=click.Path(path_type=Path),
    envvar=SUITE_ENV,
    show_envvar=True,
    help="Suite directory (or case file) when no PATH is given. [default: cases/golden, else the copy shipped "
    "with threadcase]",
)


def _targets(paths: tuple[Path, ...], suite: Path | None) -> list[Path]:
    if paths:
        return list(paths)
    # default_suite_path() is the single place that knows the default and the env twin.
    return [suite or default_suite_path()]


@click.command()
@_paths
@_suite
@click.option("--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print JSON.")
@click.option(
    "--notes",
    is_flag=True,
    envvar="THREADCASE_NOTES",
    show_envvar=True,
    help="Also print every director note and what the scripted user understands it to mean.",
)
def validate(paths: tuple[Path, ...], suite: Path | None, as_json: bool, notes: bool) -> None:
    """Validate case files: PATHs are files or directories of *.json (default: the suite).

    Prints one ``warning:`` line per director note the scripted user cannot follow (or that sits in
    the opening turn), then "N cases valid"; or one line per problem and exits with code 2.
    """
    if not as_json:
        cases = load_suite(_targets(paths, suite))
        for loaded in cases:
            if notes:
                for line in _note_lines(loaded):
                    click.echo(line)
            for warning in loaded.warnings:
                click.echo(f"warning: {warning.render()}")
        click.echo(f"{len(cases)} case{'' if len(cases) == 1 else 's'} valid")
        return
    try:
        cases = load_suite(_targets(paths, suite))
    except CaseSchemaError as exc:
        click.echo(json.dumps({"valid": False, "problems": [asdict(p) for p in exc.problems]}, indent=2))
        raise SystemExit(2) from None
    report: dict[str, Any] = {"valid": True, "cases": [c.slug for c in cases]}
    report["warnings"] = [asdict(w) for c in cases for w in c.warnings]
    if notes:
        report["notes"] = {c.slug: _note_rows(c) for c in cases}
    click.echo(json.dumps(report, indent=2))


def _note_rows(loaded: LoadedCase) -> list[dict[str, Any]]:
    """Every director note of a case and what the scripted user understands it to mean."""
    rows: list[dict[str, Any]] = []
    for index, turn in enumerate(loaded.case.conversation):
        if turn.role != "user":
            continue
        read = script_turn(index, "user", turn.text)
        for reading in read.readings:
            rows.append(
                {
                    "turn": index,
                    "note": reading.note,
                    "does": [d.describe() for d in reading.directives],
                    "not_understood": list(reading.not_understood),
                }
            )
    return rows


def _note_lines(loaded: LoadedCase) -> list[str]:
    lines: list[str] = []
    for row in _note_rows(loaded):
        head = f"{loaded.path}: conversation[{row['turn']}]: note {row['note']!r}"
        lines.extend(f"{head} -> {does}" for does in row["does"])
        lines.extend(f"{head} -> NOT UNDERSTOOD: {part}" for part in row["not_understood"])
    return lines


def _row(loaded: LoadedCase) -> dict[str, Any]:
    case = loaded.case
    return {
        "slug": loaded.slug,
        "mode": case.mode,
        "seed": case.seed_mode,
        "datasets": case.datasets,
        "units": case.unit_count,
        "path": str(loaded.path),
    }


@click.command("list")
@_paths
@_suite
@click.option(
    "--filter", "filter_", envvar="THREADCASE_FILTER", show_envvar=True, help="Slug substrings, comma-separated (any)."
)
@click.option(
    "--exclude", envvar="THREADCASE_EXCLUDE", show_envvar=True, help="Slug substrings to leave out, comma-separated."
)
@click.option("--tier", envvar="THREADCASE_TIER", show_envvar=True, help="Only cases whose datasets include this tier.")
@click.option(
    "--tag", envvar="THREADCASE_TAG", show_envvar=True, help="Only cases with this tag (comma-separated: any)."
)
@click.option("--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print JSON.")
def list_cases(
    paths: tuple[Path, ...],
    suite: Path | None,
    filter_: str | None,
    exclude: str | None,
    tier: str | None,
    tag: str | None,
    as_json: bool,
) -> None:
    """List the selected cases: slug, mode, seed mode, datasets, unit count."""
    cases = select_cases(load_suite(_targets(paths, suite)), filter=filter_, exclude=exclude, tier=tier, tag=tag)
    rows = [_row(c) for c in cases]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no cases selected", err=True)
        return
    table = [["slug", "mode", "seed", "datasets", "units"]] + [
        [r["slug"], r["mode"], r["seed"] or "-", ",".join(r["datasets"]), str(r["units"])] for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a case file (camelCase keys), for editors and linters."""
    document = Case.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "threadcase case",
        **{k: v for k, v in document.items() if k != "title"},
    }


@click.command()
def schema() -> None:
    """Print the JSON Schema of a case file (threadcase schema > case.schema.json)."""
    click.echo(json.dumps(case_json_schema(), indent=2, ensure_ascii=False))
