"""Fetch a thread's chain and tool runs from LangSmith, searching every workspace the key reaches.

Which tenant, which key:

- No ``seed.endpoint`` (or the home one): the home tenant, ``LANGSMITH_ENDPOINT`` (or
  ``LANGCHAIN_ENDPOINT``; default ``https://api.smith.langchain.com``) with ``LANGSMITH_API_KEY``
  (or ``LANGCHAIN_API_KEY``).
- Any other endpoint needs its own key, ``LANGSMITH_API_KEY_<HOST>``: the endpoint's host (and
  port), upper-cased, every other character ``_`` — ``https://eu.api.smith.langchain.com`` reads
  ``LANGSMITH_API_KEY_EU_API_SMITH_LANGCHAIN_COM``. The two public hosts also accept a short name:
  ``LANGSMITH_API_KEY_US`` (``api.smith.langchain.com``) and ``LANGSMITH_API_KEY_EU``. The home key
  is never sent to another tenant: a missing tenant key is a :class:`ConfigError`.

Where: ``GET {api}/api/v1/workspaces`` lists the workspaces the key can reach; each is searched with
a ``langsmith.Client(api_url=, api_key=, workspace_id=)`` for ``project`` (default ``instance-ai``)
and the filter ``and(eq(thread_id, "…"), or(eq(run_type, "chain"), eq(run_type, "tool")))`` —
only chain and tool runs, to spare rate limits. When the listing fails, the key's default workspace
is searched alone (with a warning). Not found anywhere: a :class:`ReplayError` naming every workspace
tried and the ~14-day trace retention.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
from pydantic import SecretStr
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from threadcase.errors import ConfigError, ReplayError
from threadcase.seeds.replay_rebuild import TraceRun, normalize_runs

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_PROJECT",
    "RETENTION_NOTE",
    "FetchedThread",
    "Tenant",
    "fetch_thread_runs",
    "fetch_thread_runs_sync",
    "resolve_tenant",
    "tenant_key_variable",
    "thread_filter",
]

DEFAULT_ENDPOINT = "https://api.smith.langchain.com"
DEFAULT_PROJECT = "instance-ai"
RETENTION_NOTE = (
    "LangSmith keeps traces for about 14 days on base tiers, so an older thread has aged out "
    "(replay it from a file made earlier with `threadcase replay export`)"
)
_SHORT_NAMES = {"api.smith.langchain.com": "US", "eu.api.smith.langchain.com": "EU"}
# Only what the rebuild reads; smaller pages, and nothing else of a real conversation is fetched.
_SELECT = [
    "id",
    "name",
    "run_type",
    "parent_run_id",
    "trace_id",
    "start_time",
    "end_time",
    "inputs",
    "outputs",
    "error",
    "extra",
]


@dataclass(frozen=True)
class Tenant:
    """One LangSmith tenant: API URL, the key to read it with, and where that key came from."""

    api_url: str
    api_key: SecretStr
    key_variable: str
    home: bool


def _normalize(url: str) -> str:
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    default_port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port is not None and parts.port != default_port else ""
    return f"{parts.scheme.lower()}://{host}{port}{parts.path.rstrip('/')}"


def tenant_key_variable(endpoint: str) -> str:
    """The environment variable holding the key of a non-home tenant (see the module docstring)."""
    parts = urlsplit(endpoint)
    netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port is not None else "")
    return "LANGSMITH_API_KEY_" + re.sub(r"[^A-Z0-9]", "_", netloc.upper())


def resolve_tenant(endpoint: str | None, environ: Mapping[str, str]) -> Tenant:
    """Pick the API URL and key for ``endpoint`` (None = home); raises :class:`ConfigError` when the
    needed key is not set — never falls back to the home key for another tenant."""
    home_url = environ.get("LANGSMITH_ENDPOINT") or environ.get("LANGCHAIN_ENDPOINT") or DEFAULT_ENDPOINT
    if endpoint is None or _normalize(endpoint) == _normalize(home_url):
        for variable in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
            if environ.get(variable):
                return Tenant(home_url.rstrip("/"), SecretStr(environ[variable]), variable, home=True)
        raise ConfigError(
            f"replay reads LangSmith at {home_url} but LANGSMITH_API_KEY is not set; set it, or replay "
            "from exported files with --replay-dir DIR (THREADCASE_REPLAY_DIR)"
        )
    derived = tenant_key_variable(endpoint)
    candidates = [derived]
    short = _SHORT_NAMES.get((urlsplit(endpoint).hostname or "").lower())
    if short:
        candidates.insert(0, f"LANGSMITH_API_KEY_{short}")
    for variable in candidates:
        if environ.get(variable):
            return Tenant(endpoint.rstrip("/"), SecretStr(environ[variable]), variable, home=False)
    raise ConfigError(
        f"seed.endpoint {endpoint!r} is not the home LangSmith endpoint ({home_url}); set "
        f"{' or '.join(candidates)} to a key of that tenant (the home LANGSMITH_API_KEY is never sent to "
        "another tenant)"
    )


def thread_filter(thread_id: str) -> str:
    """The LangSmith filter for a thread's chain and tool runs."""
    return f'and(eq(thread_id, {json.dumps(thread_id)}), or(eq(run_type, "chain"), eq(run_type, "tool")))'


@dataclass
class FetchedThread:
    """The runs of one thread and where they were found."""

    runs: list[TraceRun]
    api_url: str
    project: str
    workspace: str | None
    """``display name (id)`` of the workspace that held the thread; None for the key's default."""
    tried: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Transient(Exception):
    pass


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, _Transient | httpx.TransportError)


@retry(
    retry=retry_if_exception(_is_transient),
    stop=stop_after_attempt(3),
    wait=wait_exponential(multiplier=0.2, max=2),
    reraise=True,
)
def _list_workspaces(tenant: Tenant, timeout: float) -> list[dict[str, Any]]:
    base = tenant.api_url
    url = base + ("/workspaces" if base.endswith("/api/v1") else "/api/v1/workspaces")
    response = httpx.get(url, headers={"x-api-key": tenant.api_key.get_secret_value()}, timeout=timeout)
    if response.status_code in (429, 500, 502, 503, 504):
        raise _Transient(f"HTTP {response.status_code}")
    if response.status_code in (401, 403):
        raise ReplayError(
            f"LangSmith at {base} refused the key from {tenant.key_variable} (HTTP {response.status_code}); "
            "check that it is a valid key of that tenant"
        )
    response.raise_for_status()
    body = response.json()
    items = body.get("workspaces", body) if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise ValueError(f"unexpected workspace listing {type(body).__name__}")
    return [w for w in items if isinstance(w, dict) and w.get("id")]


@contextlib.contextmanager
def _quiet_deprecation() -> Iterator[None]:
    # ``list_runs`` is deprecated in favour of ``runs.query`` (a different, newer backend API); the
    # SDK's own switch silences the warning for this call only (tests run with -W error).
    try:
        from langsmith._internal._beta_decorator import suppress_deprecation_warning
    except ImportError:  # an SDK without the switch has no deprecation either
        yield
        return
    with suppress_deprecation_warning():
        yield


def _search_workspace(
    tenant: Tenant, workspace_id: str | None, project: str, thread_id: str, timeout: float
) -> list[dict[str, Any]] | str:
    """The thread's raw runs in one workspace, or the reason it is not there."""
    import langsmith
    from langsmith import utils as ls_utils

    client = langsmith.Client(
        api_url=tenant.api_url,
        api_key=tenant.api_key.get_secret_value(),
        workspace_id=workspace_id,
        auto_batch_tracing=False,
        timeout_ms=int(timeout * 1000),
    )
    try:
        with _quiet_deprecation():
            iterator = client.list_runs(project_name=project, filter=thread_filter(thread_id), select=_SELECT)
        runs = [_run_dict(run) for run in iterator]
    except ls_utils.LangSmithNotFoundError:
        return f"no project {project!r}"
    except ls_utils.LangSmithAuthError as exc:
        return f"key refused ({_one_line(exc)})"
    except Exception as exc:
        # One unreadable workspace must not hide the thread in the next one; the reason is reported.
        return f"error: {_one_line(exc)}"
    finally:
        client.close(timeout=0)
    return runs if runs else "thread not found"


def _run_dict(run: Any) -> dict[str, Any]:
    return {
        "id": run.id,
        "name": run.name,
        "run_type": run.run_type,
        "parent_run_id": run.parent_run_id,
        "trace_id": run.trace_id,
        "start_time": run.start_time,
        "end_time": run.end_time,
        "inputs": run.inputs,
        "outputs": run.outputs,
        "error": run.error,
        "extra": run.extra,
    }


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200]


def fetch_thread_runs_sync(
    thread_id: str, *, tenant: Tenant, project: str | None = None, timeout: float = 60.0
) -> FetchedThread:
    """Blocking form of :func:`fetch_thread_runs` (the SDK is synchronous)."""
    project = project or DEFAULT_PROJECT
    warnings: list[str] = []
    try:
        listed = _list_workspaces(tenant, timeout)
        targets: list[tuple[str | None, str]] = [
            (str(w["id"]), f"{w.get('display_name') or w.get('name') or '?'} ({w['id']})") for w in listed
        ]
    except ReplayError:
        raise
    except Exception as exc:
        warnings.append(f"could not list the key's workspaces ({_one_line(exc)}); searched its default workspace only")
        targets = [(None, "default workspace")]
    if not targets:
        targets = [(None, "default workspace")]
    tried: list[str] = []
    for workspace_id, label in targets:
        found = _search_workspace(tenant, workspace_id, project, thread_id, timeout)
        if isinstance(found, str):
            tried.append(f"{label}: {found}")
            continue
        tried.append(f"{label}: found")
        return FetchedThread(
            runs=normalize_runs(found),
            api_url=tenant.api_url,
            project=project,
            workspace=label if workspace_id is not None else None,
            tried=tried,
            warnings=warnings,
        )
    raise ReplayError(
        f"thread {thread_id!r} not found in LangSmith project {project!r} at {tenant.api_url}; "
        f"workspaces tried: {'; '.join(tried)}. {RETENTION_NOTE}"
    )


async def fetch_thread_runs(
    thread_id: str,
    *,
    project: str | None = None,
    endpoint: str | None = None,
    environ: Mapping[str, str],
    time_limit: float = 120.0,
) -> FetchedThread:
    """Find the thread in the tenant's workspaces and return its redacted chain and tool runs.

    Raises :class:`ConfigError` when the tenant's key is not set and :class:`ReplayError` when the
    thread is nowhere (or LangSmith refused the key). Runs off the event loop, bounded by ``time_limit``
    seconds.
    """
    tenant = resolve_tenant(endpoint, environ)
    with anyio.fail_after(time_limit):
        return await anyio.to_thread.run_sync(
            lambda: fetch_thread_runs_sync(thread_id, tenant=tenant, project=project, timeout=time_limit / 2),
            abandon_on_cancel=True,
        )
