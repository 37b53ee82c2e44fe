"""``threadcase cleanup --journal J``: delete what a run left on its instances, as its journal says.

A thin shell over :func:`threadcase.harness.cleanup.cleanup_journal`. Exit codes: 0 nothing is left,
1 something could not be deleted (each named), 2 usage error, 3 no instance could be reached.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import click

from threadcase.cli.run import command_redactor
from threadcase.harness.cleanup import cleanup_journal
from threadcase.leftovers import Leftover, describe_leftovers

__all__ = ["cleanup"]


def _listing(leftovers: list[Leftover]) -> str:
    return describe_leftovers(leftovers, limit=len(leftovers))


@click.command()
@click.option(
    "--journal",
    "journal",
    required=True,
    type=click.Path(path_type=Path),
    help="The journal.jsonl of the run whose leftovers to delete.",
)
@click.option(
    "--base-url",
    envvar="THREADCASE_BASE_URL",
    show_envvar=True,
    help="The instance's URL, when it differs from the one the journal recorded (one instance only).",
)
@click.option("--email", envvar="THREADCASE_EMAIL", show_envvar=True, help="Login e-mail of the instance.")
@click.option("--password", envvar="THREADCASE_PASSWORD", show_envvar=True, help="Login password (never printed).")
@click.option("--dry-run", is_flag=True, help="List the leftovers; delete nothing.")
@click.option(
    "--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print the outcome as JSON."
)
def cleanup(
    journal: Path, base_url: str | None, email: str | None, password: str | None, dry_run: bool, as_json: bool
) -> None:
    """Delete the workflows, tables, agents, folders, credentials and threads a run left behind."""
    redactor = command_redactor()
    redactor.add(password)
    redactor.add_url(base_url)

    async def main() -> None:
        outcome = await cleanup_journal(
            journal, email=email, password=password, base_url=base_url, dry_run=dry_run, redactor=redactor
        )
        if as_json:
            payload = {
                "found": [x.model_dump() for x in outcome.found],
                "deleted": [x.model_dump() for x in outcome.deleted],
                "remaining": [x.model_dump() for x in outcome.remaining],
                "unreachable": outcome.unreachable,
            }
            click.echo(redactor.text(json.dumps(payload, indent=2)))
        elif not outcome.found:
            click.echo(f"{journal}: the run left nothing on the instance")
        elif dry_run:
            click.echo(redactor.text(f"left on the instance ({len(outcome.found)}): {_listing(outcome.found)}"))
        else:
            if outcome.deleted:
                click.echo(redactor.text(f"deleted {len(outcome.deleted)}: {_listing(outcome.deleted)}"))
            for leftover in outcome.remaining:
                click.echo(
                    redactor.text(f"still there: {leftover.kind} {leftover.id} on {leftover.lane}: {leftover.reason}"),
                    err=True,
                )
        if outcome.remaining and not dry_run:
            sys.exit(3 if outcome.unreachable and not outcome.deleted else 1)

    anyio.run(main)
