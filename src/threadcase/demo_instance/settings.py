"""Settings of the embedded demo instance: one object, passed in, never read from globals.

Every field has a ``THREADCASE_DEMO_*`` environment twin (see :meth:`DemoSettings.from_env`), and each
flag of ``threadcase demo serve`` is one field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["DEFAULT_EMAIL", "DEFAULT_PASSWORD", "MISBEHAVIOURS", "DemoConfigError", "DemoSettings"]


class DemoConfigError(ValueError):
    """A demo setting (flag, environment variable, path) cannot be used; the message names it and the value.

    The demo stands alone (it imports nothing of threadcase but the wire shapes), so this is its own;
    threadcase's CLI and runner report it as a configuration error: one line, exit code 2.
    """


DEFAULT_EMAIL = "owner@threadcase.dev"
DEFAULT_PASSWORD = "threadcase-demo"  # a published demo default, printed at start

DEFAULT_MAX_BODY_BYTES = 16 * 2**20
"""The largest request body the demo instance reads: 16 MiB, n8n's own default (``N8N_PAYLOAD_SIZE_MAX``)."""

MISBEHAVIOURS: frozenset[str] = frozenset(
    {
        "caves-under-pressure",
        "reasks-answered",
        "drops-change",
        "rebuilds-instead-of-edit",
        "ignores-declined",
        "forgets-after-compaction",
        "claims-done-without-credentials",
        "asks-what-was-given",
        "drops-credential",
        "pads-replies",
    }
)
"""The deliberate defects the demo instance can switch on (per server or per thread)."""


class DemoSettings(BaseModel):
    """How one demo instance behaves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    email: str = DEFAULT_EMAIL
    """The owner account's login (``THREADCASE_DEMO_EMAIL``)."""
    password: SecretStr = SecretStr(DEFAULT_PASSWORD)
    """The owner account's password (``THREADCASE_DEMO_PASSWORD``)."""
    members: dict[str, SecretStr] = Field(default_factory=dict)
    """Extra non-owner accounts (email -> password): they may chat in their own threads but may not
    call the eval routes. Used to test ownership rules."""
    db_path: Path | None = None
    """SQLite file (``THREADCASE_DEMO_DB``); None = a temporary file removed at stop."""
    misbehave: frozenset[str] = frozenset()
    """Misbehaviours switched on for every thread (``THREADCASE_DEMO_MISBEHAVE=a,b``)."""
    latency_ms: int = Field(default=0, ge=0)
    """Every agent step (say / tool call / ask) sleeps this long, standing in for model latency."""
    faults: float = Field(default=0.0, ge=0.0, le=1.0)
    """Fraction of requests that answer 503 before doing anything, answer slowly, or (SSE) drop."""
    seed: int = 0
    """Seed of the fault generator, so a faulty run is reproducible."""
    fault_delay_seconds: float = Field(default=0.8, ge=0)
    """Upper bound of a slowed answer's delay (the lower bound is a quarter of it)."""
    trace_to: Path | None = None
    """Append each chat turn as LangSmith-shaped runs (JSON lines) to this file."""
    trace_project: str = "instance-ai"
    """``session_name`` of the traced runs (LangSmith project name; ``THREADCASE_DEMO_TRACE_PROJECT``)."""
    trace_endpoint: str | None = None
    """Also post each chat turn's runs to this LangSmith-compatible API (``THREADCASE_DEMO_TRACE_ENDPOINT``),
    e.g. ``https://api.smith.langchain.com``; in the background, never slowing or failing a turn."""
    trace_api_key: SecretStr | None = None
    """The endpoint's API key (``THREADCASE_DEMO_TRACE_API_KEY``; never a flag, never printed)."""
    trace_flush_seconds: float = Field(default=5.0, ge=0)
    """At stop, how long queued runs may take to reach the endpoint before they are given up."""
    heartbeat_seconds: float = Field(default=10.0, gt=0)
    """Interval of the SSE heartbeat comment lines."""
    memory_task_seconds: float = Field(default=0.05, ge=0)
    """How long a memory (observer) task stays ``running``; clients must wait for it."""
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)
    """Largest request body accepted (``THREADCASE_DEMO_MAX_BODY_BYTES``); a larger one is answered 413
    before it is read."""

    @field_validator("misbehave", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("misbehave")
    @classmethod
    def _known_names(cls, value: frozenset[str]) -> frozenset[str]:
        unknown = sorted(value - MISBEHAVIOURS)
        if unknown:
            raise ValueError(f"unknown misbehaviour {unknown[0]!r}; known: {', '.join(sorted(MISBEHAVIOURS))}")
        return value

    @field_validator("trace_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = value.strip().rstrip("/")
        if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
            raise ValueError("must be an http(s) URL such as https://api.smith.langchain.com")
        return url

    @property
    def uses_default_password(self) -> bool:
        """The owner password is the printed default (so it may be shown)."""
        return self.password.get_secret_value() == DEFAULT_PASSWORD

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> DemoSettings:
        """Settings from ``THREADCASE_DEMO_*`` variables; explicit ``overrides`` win (None = not given).

        Raises :class:`DemoConfigError` naming the variable and the bad value.
        """
        env = os.environ if environ is None else environ
        names = {
            "email": "THREADCASE_DEMO_EMAIL",
            "password": "THREADCASE_DEMO_PASSWORD",
            "db_path": "THREADCASE_DEMO_DB",
            "misbehave": "THREADCASE_DEMO_MISBEHAVE",
            "latency_ms": "THREADCASE_DEMO_LATENCY_MS",
            "faults": "THREADCASE_DEMO_FAULTS",
            "seed": "THREADCASE_DEMO_SEED",
            "trace_to": "THREADCASE_DEMO_TRACE_TO",
            "trace_project": "THREADCASE_DEMO_TRACE_PROJECT",
            "trace_endpoint": "THREADCASE_DEMO_TRACE_ENDPOINT",
            "trace_api_key": "THREADCASE_DEMO_TRACE_API_KEY",
            "max_body_bytes": "THREADCASE_DEMO_MAX_BODY_BYTES",
        }
        values: dict[str, object] = {}
        for field, var in names.items():
            if overrides.get(field) is not None:
                values[field] = overrides[field]
            elif env.get(var):
                values[field] = env[var]
        for field, value in overrides.items():
            if field not in names and value is not None:
                values[field] = value
        try:
            return cls.model_validate(values)
        except ValueError as exc:
            first = exc.errors()[0] if hasattr(exc, "errors") else None
            if first is not None:
                field = str(first["loc"][0]) if first["loc"] else "?"
                shown = "***" if field in ("password", "trace_api_key") else repr(first.get("input"))
                raise DemoConfigError(
                    f"demo setting {field} ({names.get(field, field)}) = {shown}: {first['msg']}"
                ) from None
            raise DemoConfigError(f"demo settings: {exc}") from None
