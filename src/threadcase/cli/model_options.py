"""The model flags ``run`` and ``calibrate`` share: one per :data:`threadcase.models.SETTINGS` entry,
each with its ``THREADCASE_*`` twin (``--judge-model``, ``--model-timeout-seconds``,
``--judge-timeout-seconds``, ``--proxy-temperature``, ``--record-models DIR``, ...)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from threadcase.models import SETTINGS, ModelSettings

__all__ = ["model_options", "model_settings"]

F = TypeVar("F", bound=Callable[..., Any])


def _param(flag: str) -> str:
    return flag.replace("-", "_")


def model_options(*, roles: tuple[str, ...] = ("proxy", "judge", "verifier")) -> Callable[[F], F]:
    """Add the model flags of ``roles`` (and the every-role ones) to a click command."""

    def decorate(command: F) -> F:
        for setting in reversed(SETTINGS):
            if setting.role is not None and setting.role not in roles:
                continue
            if setting.field.endswith("_model") and setting.field.removesuffix("_model") not in roles:
                continue
            kind: Any = click.Path(path_type=Path) if setting.kind is Path else setting.kind
            command = click.option(
                f"--{setting.flag}",
                _param(setting.flag),
                type=kind,
                default=None,
                envvar=setting.env,
                show_envvar=True,
                help=setting.help,
            )(command)
        return command

    return decorate


def model_settings(values: dict[str, Any]) -> ModelSettings:
    """The run's model settings: ``OPENAI_*`` from the environment, the flags' values (their twins
    included) over everything else."""
    given = {s.path: values.get(_param(s.flag)) for s in SETTINGS if _param(s.flag) in values}
    return ModelSettings.from_env(**given)
