"""``threadcase fake-model``: the scripted OpenAI-compatible model (check an n8n set-up for free)."""

from __future__ import annotations

from pathlib import Path

import click

from threadcase.errors import ConfigError

__all__ = ["fake_model"]


@click.group("fake-model")
def fake_model() -> None:
    """A scripted OpenAI-compatible model that drives n8n's own agent from a script (no API key)."""


_SCRIPT = click.option(
    "--script",
    "script_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="THREADCASE_FAKE_MODEL_SCRIPT",
    help="The script: rules saying what to answer to which request (see the README).",
)


def _load(script_path: Path):  # type: ignore[no-untyped-def]
    from threadcase.standins.script import ScriptError, load_script

    try:
        return load_script(script_path)
    except ScriptError as exc:
        raise ConfigError(str(exc)) from None


@fake_model.command("check")
@_SCRIPT
def check(script_path: Path) -> None:
    """Validate a script and list its rules in the order they are tried."""
    script = _load(script_path)
    click.echo(f"{script_path}: {len(script.rules)} rules, models {', '.join(script.models)}")
    for rule in script.rules:
        reply = rule.reply
        kind = (
            "error"
            if reply.error
            else "json"
            if reply.json_ is not None
            else "+".join(
                [*(["text"] if reply.text is not None else []), *(f"call {c.name}" for c in reply.tool_calls)]
            )
        )
        click.echo(f"  {rule.id}: agent={rule.when.agent} after={rule.when.after or 'any'} -> {kind}")


@fake_model.command("serve")
@_SCRIPT
@click.option(
    "--host", default="127.0.0.1", show_default=True, envvar="THREADCASE_FAKE_MODEL_HOST", help="Interface to bind."
)
@click.option(
    "--port",
    default=8111,
    show_default=True,
    type=int,
    envvar="THREADCASE_FAKE_MODEL_PORT",
    help="Port (0 = any free).",
)
@click.option(
    "--api-key",
    default="",
    envvar="THREADCASE_FAKE_MODEL_API_KEY",
    help="Require this bearer key (n8n sends N8N_INSTANCE_AI_MODEL_API_KEY); never printed.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="THREADCASE_FAKE_MODEL_LOG",
    help="Append one JSON line per request: which agent asked, which rule answered, the usage reported.",
)
def serve(script_path: Path, host: str, port: int, api_key: str, log_path: Path | None) -> None:
    """Serve the scripted model until Ctrl-C.

    Point n8n at it with N8N_INSTANCE_AI_MODEL=custom/<model> and N8N_INSTANCE_AI_MODEL_URL=<the URL
    printed>. GET /threadcase/log lists what was asked and which rule answered.
    """
    from threadcase.standins.model_server import ScriptedModel, serve_forever
    from threadcase.standins.script import ScriptError

    script = _load(script_path)

    def ready(url: str) -> None:
        click.echo(f"threadcase scripted model at {url} ({len(script.rules)} rules from {script_path})")
        click.echo(f"  n8n: N8N_INSTANCE_AI_MODEL=custom/{script.models[0]} N8N_INSTANCE_AI_MODEL_URL={url}")
        click.echo(f"  log: {url.removesuffix('/v1')}/threadcase/log" + (f" and {log_path}" if log_path else ""))
        click.echo("  Ctrl-C to stop")

    try:
        serve_forever(ScriptedModel(script, api_key=api_key, log_path=log_path), host=host, port=port, ready=ready)
    except ScriptError as exc:
        raise ConfigError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("threadcase scripted model stopped")
