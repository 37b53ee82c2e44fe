"""The flags ``run``, ``control``, ``regrade`` and ``dataset push`` share, declared once: which cases
(``--suite``, ``--filter``, ``--exclude``, ``--tier``, ``--tag``), how they run on the instance lanes
(``--base-url`` ... ``--inactivity-seconds``) and the judge's calibration gate, each with its
``THREADCASE_*`` twin; and the one way a command turns its flags into validated settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

from threadcase.errors import ConfigError

__all__ = ["calibration_options", "csv_list", "lane_options", "selection_options", "settings_from_flags"]

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

SUITE_HELP = "Suite directory or case file. [default: ./cases/golden, else the golden suite shipped with threadcase]"

_FLAG_OF_FIELD = {"base_urls": "base-url"}
"""Settings fields whose flag is not their name with dashes."""


def csv_list(value: str | None) -> list[str]:
    """A comma-separated flag value as its non-blank parts."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def settings_from_flags(model: type[M], values: dict[str, object], *, loc_depth: int | None = None) -> M:
    """``model`` validated from the flags' values; the first problem as one ``--flag: message`` line.

    ``loc_depth`` keeps that many parts of the problem's location (a command whose settings nest another
    model names the outer field's flag)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][:loc_depth]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        flag = _FLAG_OF_FIELD.get(where, where.replace("_", "-"))
        raise ConfigError(f"--{flag}: {message}") from None


def _apply(command: F, options: list[Callable[[F], F]]) -> F:
    # click lists options in the order their decorators are written, the reverse of application.
    for option in reversed(options):
        command = option(command)
    return command


def selection_options() -> Callable[[F], F]:
    """``--suite``, ``--filter``, ``--exclude``, ``--tier``, ``--tag``."""
    options: list[Callable[[F], F]] = [
        click.option(
            "--suite", type=click.Path(path_type=Path), envvar="THREADCASE_SUITE", show_envvar=True, help=SUITE_HELP
        ),
        click.option(
            "--filter",
            "filter_",
            envvar="THREADCASE_FILTER",
            show_envvar=True,
            help="Comma-separated slug substrings (OR).",
        ),
        click.option(
            "--exclude", envvar="THREADCASE_EXCLUDE", show_envvar=True, help="Comma-separated slug substrings to skip."
        ),
        click.option(
            "--tier", envvar="THREADCASE_TIER", show_envvar=True, help="Only cases whose datasets contain TIER."
        ),
        click.option("--tag", envvar="THREADCASE_TAG", show_envvar=True, help="Only cases with this tag."),
    ]
    return lambda command: _apply(command, options)


def lane_options(*, base_url_help: str, iterations_help: str, concurrency_help: str) -> Callable[[F], F]:
    """``--base-url``, ``--email``, ``--password``, ``--iterations``, ``--concurrency``, ``--lane-cap``,
    ``--timeout-seconds``, ``--inactivity-seconds``; the three helps that differ by command are given."""
    options: list[Callable[[F], F]] = [
        click.option("--base-url", envvar="THREADCASE_BASE_URL", show_envvar=True, help=base_url_help),
        click.option("--email", envvar="THREADCASE_EMAIL", show_envvar=True, help="Login e-mail of the instance."),
        click.option(
            "--password", envvar="THREADCASE_PASSWORD", show_envvar=True, help="Login password (never printed)."
        ),
        click.option(
            "--iterations",
            type=int,
            default=1,
            show_default=True,
            envvar="THREADCASE_ITERATIONS",
            show_envvar=True,
            help=iterations_help,
        ),
        click.option(
            "--concurrency",
            type=int,
            default=8,
            show_default=True,
            envvar="THREADCASE_CONCURRENCY",
            show_envvar=True,
            help=concurrency_help,
        ),
        click.option(
            "--lane-cap",
            type=int,
            envvar="THREADCASE_LANE_CAP",
            show_envvar=True,
            help="Conversations (builds) at once per lane. [default: --concurrency]",
        ),
        click.option(
            "--timeout-seconds",
            type=float,
            default=900.0,
            show_default=True,
            envvar="THREADCASE_TIMEOUT_SECONDS",
            show_envvar=True,
            help="Budget of one user turn (complex cases ×1.5).",
        ),
        click.option(
            "--inactivity-seconds",
            type=float,
            envvar="THREADCASE_INACTIVITY_SECONDS",
            show_envvar=True,
            help="No event for this long cancels a run as stalled. [default: 240]",
        ),
    ]
    return lambda command: _apply(command, options)


def calibration_options(*, set_help: str) -> Callable[[F], F]:
    """``--calibration-set`` (its help given: where the default comes from differs), ``--calibration-threshold``,
    ``--skip-calibration``."""
    options: list[Callable[[F], F]] = [
        click.option(
            "--calibration-set",
            type=click.Path(path_type=Path),
            envvar="THREADCASE_CALIBRATION_SET",
            show_envvar=True,
            help=set_help,
        ),
        click.option(
            "--calibration-threshold",
            type=float,
            default=0.9,
            show_default=True,
            envvar="THREADCASE_CALIBRATION_THRESHOLD",
            show_envvar=True,
            help="Minimum judge agreement; below it judge verdicts are not judged.",
        ),
        click.option(
            "--skip-calibration",
            is_flag=True,
            envvar="THREADCASE_SKIP_CALIBRATION",
            show_envvar=True,
            help="Let an uncalibrated judge's verdicts count.",
        ),
    ]
    return lambda command: _apply(command, options)
