"""The ``threadcase`` command: a thin shell over the Python API.

Each sub-command lives in its own module and is imported only when invoked, so ``threadcase --help``
stays fast and one broken command cannot break the others. Known errors print one line (never a
traceback) and map to the exit codes of DESIGN.md: 2 for usage, configuration and case-file errors,
3 when the harness or the instance failed so that nothing could be judged, 130 when interrupted.
Anything else is a bug of ours: one ``internal error`` line and exit 3 (``THREADCASE_DEBUG=1`` shows
the traceback).

Every line printed here, and every log line, passes through one :class:`~threadcase.redaction.Redactor`
(the command's ``ctx.obj``): it knows every secret of the environment, and a command adds the ones its
flags carry (``--password``, a URL's userinfo).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import logging
import os
import signal
import sys
import threading
from typing import Any

import click

from threadcase import __version__
from threadcase.errors import CaseSchemaError, ThreadcaseError, UsageError, printable
from threadcase.redaction import Redactor

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
    "cleanup": ("cleanup", "cleanup"),
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


def one_line(text: str, limit: int = 1000) -> str:
    """``text`` on one line (control characters escaped, a newline in a file name too), at most ``limit`` long."""
    return printable(text, limit)


class _RedactingFilter(logging.Filter):
    """Log records leave through the command's redactor (a record's message is rendered here, once)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = one_line(self.redactor.text(record.getMessage()))
        record.args = None
        return True


def _log_output(redactor: Redactor) -> logging.Handler:
    """A handler sending warnings and errors of every ``threadcase`` logger to stderr, redacted, one line each.

    (Without one, Python's last-resort handler printed them raw.) ``THREADCASE_DEBUG=1`` lowers its
    level to debug.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("threadcase: %(levelname)s: %(message)s"))
    handler.addFilter(_RedactingFilter(redactor))
    debug = os.environ.get("THREADCASE_DEBUG", "").strip() == "1"
    handler.setLevel(logging.DEBUG if debug else logging.WARNING)
    return handler


def _interrupted(exc: BaseException) -> bool:
    """A KeyboardInterrupt (or an exception group of nothing but interrupts and cancellations)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        leaves = list(exc.exceptions)
        return any(_interrupted(e) for e in leaves) and all(
            _interrupted(e) or type(e).__name__ == "CancelledError" for e in leaves
        )
    return False


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: runs the CLI and turns known errors into one line + exit code."""
    redactor = Redactor.from_environment(os.environ)
    main_thread = threading.current_thread() is threading.main_thread()
    term = signal.getsignal(signal.SIGTERM) if main_thread else None
    if main_thread:
        # A TERM is an interrupt like Ctrl-C from the first instruction on: exit 130 with one line, never a
        # silent death (a run installs its own counting receiver for its duration).
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    logger = logging.getLogger("threadcase")
    handler = _log_output(redactor)
    logger.addHandler(handler)
    if handler.level == logging.DEBUG:
        logger.setLevel(logging.DEBUG)
    try:
        return _main(argv, redactor)
    finally:
        logger.removeHandler(handler)
        if main_thread and term is not None:
            signal.signal(signal.SIGTERM, term)


def _main(argv: list[str] | None, redactor: Redactor) -> Any:
    def say(message: str) -> None:
        # An error that lists several problems gives one line each; within a line, control characters
        # are shown escaped, so nothing can split or rewrite a line.
        lines = redactor.text(message).split("\n")
        click.echo(f"threadcase: {one_line(lines[0])}", err=True)
        for line in lines[1:]:
            click.echo(one_line(line), err=True)

    try:
        return cli.main(args=argv, prog_name="threadcase", standalone_mode=False, obj=redactor)
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more can be said, and saying so would fail too.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except (click.exceptions.Abort, KeyboardInterrupt):
        with contextlib.suppress(Exception):
            say("interrupted")
        sys.exit(130)
    except click.ClickException as exc:
        shown = io.StringIO()
        exc.show(file=shown)
        click.echo(redactor.text(shown.getvalue()).rstrip("\n"), err=True)
        sys.exit(2)
    except CaseSchemaError as exc:
        for problem in exc.problems:
            click.echo(one_line(redactor.text(problem.render())), err=True)
        sys.exit(2)
    except UsageError as exc:
        say(str(exc))
        sys.exit(2)
    except ThreadcaseError as exc:
        say(f"{type(exc).__name__}: {exc}")
        sys.exit(3)
    except BaseExceptionGroup as group:
        if _interrupted(group):
            with contextlib.suppress(Exception):
                say("interrupted")
            sys.exit(130)
        _internal_error(group, say)
    except Exception as exc:
        _internal_error(exc, say)


def _internal_error(exc: BaseException, say: Any) -> None:
    # A bug of ours must still end in one line and a meaningful exit code, never a traceback
    # (which may also quote case data); THREADCASE_DEBUG=1 brings the traceback back.
    if os.environ.get("THREADCASE_DEBUG", "").strip() == "1":
        raise exc
    message = " ".join(str(exc).split())
    if len(message) > 300:
        message = message[:297] + "..."
    say(f"internal error: {type(exc).__name__}: {message} — please report it")
    sys.exit(3)
