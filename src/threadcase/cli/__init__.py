"""The ``threadcase`` command: a thin shell over the Python API.

Each sub-command lives in its own module and is imported only when invoked, so ``threadcase --help``
stays fast and one broken command cannot break the others. Known errors print one line (never a
traceback) and map to the exit codes of DESIGN.md: 2 for usage, configuration and case-file errors,
3 when the harness or the instance failed so that nothing could be judged. Anything else is a bug of
ours: one ``internal error`` line and exit 3 (``THREADCASE_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from threadcase import __version__
from threadcase.errors import CaseSchemaError, ThreadcaseError, UsageError

__all__ = ["cli", "main"]

# command name -> "module:attribute" (relative to this package)
_COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("cases", "validate"),
    "list": ("cases", "list_cases"),
    "schema": ("cases", "schema"),
    "demo": ("demo", "demo"),
    "fake-model": ("fake_model", "fake_model"),
    "run": ("run", "run"),
    "report": ("run", "report"),
    "calibrate": ("calibrate", "calibrate"),
    "replay": ("replay", "replay"),
    "compare": ("compare", "compare"),
    "regrade": ("regrade", "regrade"),
    "dataset": ("dataset", "dataset"),
    "control": ("control", "control"),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        # Only commands whose module is present: an optional part may be missing from a build.
        return sorted(
            name for name, (module, _) in _COMMANDS.items() if importlib.util.find_spec(f"{__name__}.{module}")
        )

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None or cmd_name not in self.list_commands(ctx):
            return None
        module = importlib.import_module(f"{__name__}.{target[0]}")
        command = getattr(module, target[1])
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="threadcase")
def cli() -> None:
    """Evaluate conversational builder agents against an n8n-compatible instance."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: runs the CLI and turns known errors into one line + exit code."""
    try:
        return cli.main(args=argv, prog_name="threadcase", standalone_mode=False)
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more can be said, and saying so would fail too.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("threadcase: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except CaseSchemaError as exc:
        for problem in exc.problems:
            click.echo(problem.render(), err=True)
        sys.exit(2)
    except UsageError as exc:
        click.echo(f"threadcase: {exc}", err=True)
        sys.exit(2)
    except ThreadcaseError as exc:
        click.echo(f"threadcase: {type(exc).__name__}: {exc}", err=True)
        sys.exit(3)
    except Exception as exc:
        # A bug of ours must still end in one line and a meaningful exit code, never a traceback
        # (which may also quote case data); THREADCASE_DEBUG=1 brings the traceback back.
        if os.environ.get("THREADCASE_DEBUG", "").strip() == "1":
            raise
        message = " ".join(str(exc).split())
        if len(message) > 300:
            message = message[:297] + "..."
        click.echo(f"threadcase: internal error: {type(exc).__name__}: {message} — please report it", err=True)
        sys.exit(3)
