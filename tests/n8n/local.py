"""A real n8n 2.41 for tests: the one already running, or one this session starts from the local install.

``scripts/n8n-local`` installs n8n outside the repository and runs it on loopback. Tests reach an
instance in this order:

1. ``THREADCASE_N8N_URL`` (with ``THREADCASE_N8N_EMAIL`` / ``THREADCASE_N8N_PASSWORD``): that instance;
2. the instance ``scripts/n8n-local start`` runs (what ``.ci/run`` starts before ``pytest -m n8n``);
3. otherwise, if n8n is installed, one started now from the install in a run directory of its own
   (``THREADCASE_N8N_RUN_DIR``), with the extra environment the caller asks for, and stopped after;
4. otherwise the tests are skipped, saying how to get an n8n.

:func:`started_n8n` starts a fresh instance with extra environment (a model URL, a sandbox, an observer
threshold) whatever else runs: the seam for tests that need n8n configured their way.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LocalN8n", "N8nUnavailable", "find_n8n", "installed", "started_n8n"]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "n8n-local"
DEFAULT_EMAIL = "owner@threadcase.dev"
DEFAULT_PASSWORD = "Threadcase-Demo-1"
START_SECONDS = 300
HOW_TO = (
    "no local n8n for the n8n contract tests: install one with `scripts/n8n-local install` "
    "(they start it themselves), or point THREADCASE_N8N_URL (+ THREADCASE_N8N_EMAIL / THREADCASE_N8N_PASSWORD) "
    "at a running n8n 2.41"
)


class N8nUnavailable(Exception):
    """No n8n can be reached or started here; the message says how to get one."""


@dataclass(frozen=True)
class LocalN8n:
    """A reachable n8n: where it is, how to log in, and whether this process started it."""

    base_url: str
    email: str
    password: str
    started_here: bool = False


def _home() -> Path:
    configured = os.environ.get("THREADCASE_N8N_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "threadcase" / "n8n-2.41.1"


def installed() -> bool:
    """``scripts/n8n-local install`` completed (its marker file exists)."""
    return (_home() / "installed.json").is_file()


def _ready(base_url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy
    try:
        with opener.open(base_url.rstrip("/") + "/healthz/readiness", timeout=3) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _exports(text: str) -> dict[str, str]:
    """``export KEY=VALUE`` lines (shell-quoted, as the script prints them) as a dict."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export ") :].partition("=")
            found[key] = shlex.split(value)[0] if value else ""
    return found


def _script(*args: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _running() -> LocalN8n | None:
    """The instance ``scripts/n8n-local start`` runs from the default run directory, if any."""
    if not installed():
        return None
    env = {k: v for k, v in os.environ.items() if k != "THREADCASE_N8N_RUN_DIR"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "env"], capture_output=True, text=True, timeout=30, env=env, check=False
    )
    if done.returncode != 0:
        return None
    values = _exports(done.stdout)
    url = values.get("THREADCASE_BASE_URL")
    if not url or not _ready(url):
        return None
    return LocalN8n(url, values.get("THREADCASE_EMAIL", DEFAULT_EMAIL), values.get("THREADCASE_PASSWORD", ""))


@contextlib.contextmanager
def started_n8n(extra_env: Mapping[str, str] | None = None, *start_args: str) -> Iterator[LocalN8n]:
    """Start a fresh n8n from the local install with ``extra_env`` (e.g. ``N8N_INSTANCE_AI_MODEL_URL``) and
    ``start_args`` (e.g. ``--sandbox``, ``--model-url URL``) in a run directory of its own; stop it (its own
    process group, by the id the script recorded, and the sandbox stand-in with it) on exit.

    ~11 s to start and ~0.9 GB of memory: share one per test session where possible.
    """
    if not installed():
        raise N8nUnavailable(HOW_TO)
    run_dir = Path(tempfile.mkdtemp(prefix="threadcase-n8n-run-"))
    env = {"THREADCASE_N8N_RUN_DIR": str(run_dir)}
    args = ["start", *start_args]
    for key, value in (extra_env or {}).items():
        args += ["--env", f"{key}={value}"]
    try:
        done = _script(*args, env=env, timeout=START_SECONDS + 60)
        if done.returncode != 0:
            raise N8nUnavailable(f"scripts/n8n-local start failed: {done.stderr.strip()[-1500:]}")
        values = _exports(done.stdout)
        yield LocalN8n(values["THREADCASE_BASE_URL"], values["THREADCASE_EMAIL"], values["THREADCASE_PASSWORD"], True)
    finally:
        _script("stop", env=env, timeout=90)
        with contextlib.suppress(OSError):
            state = json.loads((run_dir / "state.json").read_text())
            raise N8nUnavailable(f"n8n (pid {state.get('pid')}) was left running in {run_dir}")
        shutil.rmtree(run_dir, ignore_errors=True)


@contextlib.contextmanager
def find_n8n() -> Iterator[LocalN8n]:
    """The n8n the contract tests use (see the module docstring); raises :class:`N8nUnavailable`."""
    url = os.environ.get("THREADCASE_N8N_URL")
    if url:
        if not _ready(url):
            raise N8nUnavailable(f"THREADCASE_N8N_URL={url} does not answer GET /healthz/readiness")
        email = os.environ.get("THREADCASE_N8N_EMAIL", DEFAULT_EMAIL)
        yield LocalN8n(url.rstrip("/"), email, os.environ.get("THREADCASE_N8N_PASSWORD", DEFAULT_PASSWORD))
        return
    running = _running()
    if running is not None:
        yield running
        return
    with started_n8n() as fresh:
        yield fresh
