"""The ``threadcase`` command (and ``python -m threadcase``): interrupts are counted from the first instruction.

The console script starts here, not in :mod:`threadcase.cli`, so SIGINT and SIGTERM mean "interrupted"
(one line, exit 130) even while the CLI is still being imported: importing it first left a tenth of a
second in which Ctrl-C printed a traceback and TERM killed the process without a word.

It also ends here, with ``os._exit`` once the output is flushed: the interpreter's own shutdown resets
the signal handlers to their defaults, so a TERM arriving while it tore down the modules killed the
process (exit -15) after it had said "interrupted".
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

__all__ = ["run"]

EXIT_INTERRUPTED = 130


def run() -> None:
    """Install the interrupt handlers, run the CLI (:func:`threadcase.cli.main`), and exit with its code."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler)
    code = 0
    try:
        try:
            from threadcase.cli import main

            main()
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt:
            # Between two of main()'s own guards (it says so itself everywhere else).
            sys.stderr.write("threadcase: interrupted\n")
            code = EXIT_INTERRUPTED
    except KeyboardInterrupt:  # a second signal while the first was being answered
        code = EXIT_INTERRUPTED
    late: list[int] = []

    def remember(signum: int, frame: FrameType | None) -> None:
        late.append(signum)

    # The work is done: a signal now changes only the exit code, and nothing may cut the flush short.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, remember)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED if late else code)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{exc.code}\n")  # what sys.exit("message") would have printed
    return 1


if __name__ == "__main__":
    run()
