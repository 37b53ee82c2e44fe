"""``threadcase demo serve``: run the embedded demo instance in the foreground."""

from __future__ import annotations

import os
from pathlib import Path

import click

from threadcase.errors import ConfigError

__all__ = ["demo"]


@click.group("demo")
def demo() -> None:
    """The embedded demo instance (an n8n-compatible system under test with a rule-based builder)."""


@demo.command("serve")
@click.option(
    "--host", default="127.0.0.1", show_default=True, envvar="THREADCASE_DEMO_HOST", help="Interface to bind."
)
@click.option(
    "--port", default=5678, show_default=True, type=int, envvar="THREADCASE_DEMO_PORT", help="Port (0 = any free)."
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="THREADCASE_DEMO_DB",
    help="SQLite file to keep state in (default: a temporary file removed at stop).",
)
@click.option(
    "--misbehave",
    default="",
    envvar="THREADCASE_DEMO_MISBEHAVE",
    help="Comma-separated misbehaviours for every thread: caves-under-pressure, reasks-answered, drops-change, "
    "rebuilds-instead-of-edit, ignores-declined, forgets-after-compaction, claims-done-without-credentials.",
)
@click.option(
    "--latency-ms",
    default=0,
    type=click.IntRange(min=0),
    envvar="THREADCASE_DEMO_LATENCY_MS",
    help="Sleep this long at every agent step (say / tool call / ask), standing in for model latency.",
)
@click.option(
    "--faults",
    default=0.0,
    type=click.FloatRange(0.0, 1.0),
    envvar="THREADCASE_DEMO_FAULTS",
    help="Fraction of requests answering 503 before doing anything, answering slowly, or (event streams) "
    "dropped mid-run; clients retry safely and resume with Last-Event-ID.",
)
@click.option("--seed", default=0, type=int, envvar="THREADCASE_DEMO_SEED", help="Seed of the fault generator.")
@click.option(
    "--trace-to",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="THREADCASE_DEMO_TRACE_TO",
    help="Append each chat turn as LangSmith-shaped runs (JSON lines) to this file, for replay.",
)
@click.option(
    "--trace-endpoint",
    envvar="THREADCASE_DEMO_TRACE_ENDPOINT",
    metavar="URL",
    help="Post each chat turn's runs (as --trace-to writes them) to this LangSmith-compatible API "
    "(e.g. https://api.smith.langchain.com), key from THREADCASE_DEMO_TRACE_API_KEY, project from "
    "THREADCASE_DEMO_TRACE_PROJECT (default instance-ai). "
    "Posted in the background: a slow or failing endpoint never slows or fails a chat turn (the first failure is "
    "logged once; queued runs get up to 5 s at stop). Replay reads them back with LANGSMITH_ENDPOINT=URL.",
)
def serve(
    host: str,
    port: int,
    db_path: Path | None,
    misbehave: str,
    latency_ms: int,
    faults: float,
    seed: int,
    trace_to: Path | None,
    trace_endpoint: str | None,
) -> None:
    """Serve the demo instance until Ctrl-C.

    Log in with THREADCASE_DEMO_EMAIL / THREADCASE_DEMO_PASSWORD (defaults owner@threadcase.dev /
    threadcase-demo). Endpoints: the n8n Instance AI subset in DESIGN.md (/rest/login, /healthz/readiness,
    /rest/instance-ai/..., /rest/workflows, /rest/credentials, /rest/projects/...). Per-thread
    misbehaviours: sourceContext.demoMisbehave on thread create, or the X-Demo-Misbehave header on chat.
    """
    from threadcase.demo_instance.server import serve_forever
    from threadcase.demo_instance.settings import DemoConfigError, DemoSettings

    try:
        settings = DemoSettings.from_env(
            os.environ,
            db_path=db_path,
            misbehave=misbehave or None,
            latency_ms=latency_ms,
            faults=faults,
            seed=seed,
            trace_to=trace_to,
            trace_endpoint=trace_endpoint,
        )
    except DemoConfigError as exc:
        # A bad value (e.g. an unknown misbehaviour): one line, exit code 2.
        raise ConfigError(str(exc)) from None
    password = (
        settings.password.get_secret_value() if settings.uses_default_password else "(from THREADCASE_DEMO_PASSWORD)"
    )

    def ready(url: str) -> None:
        click.echo(f"threadcase demo instance at {url}")
        click.echo(f"  login: {settings.email} / {password}")
        extras = []
        if settings.misbehave:
            extras.append(f"misbehave={','.join(sorted(settings.misbehave))}")
        if settings.latency_ms:
            extras.append(f"latency={settings.latency_ms}ms")
        if settings.faults:
            extras.append(f"faults={settings.faults} seed={settings.seed}")
        if settings.trace_to:
            extras.append(f"traces -> {settings.trace_to}")
        if settings.trace_endpoint:
            # The URL only: the key is never shown (its presence is, so a missing key is noticed).
            keyed = "key set" if settings.trace_api_key is not None else "no key"
            extras.append(f"traces -> {settings.trace_endpoint} project {settings.trace_project} ({keyed})")
        click.echo(f"  db: {settings.db_path or 'temporary'}" + (f"; {'; '.join(extras)}" if extras else ""))
        click.echo("  Ctrl-C to stop")

    try:
        serve_forever(settings, host=host, port=port, ready=ready)
    except DemoConfigError as exc:  # an unusable --db or trace path, found when the store opens
        raise ConfigError(str(exc)) from None
    except KeyboardInterrupt:
        # uvicorn already shut down cleanly; it re-raises the signal only so callers know why.
        click.echo("threadcase demo instance stopped")
