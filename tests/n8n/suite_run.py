"""``threadcase run`` on the n8n suite against a local n8n, started as a user would start it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio
import pytest

from tests.n8n.local import LocalN8n, installed, started_n8n
from tests.runner.test_n8n_suite_on_demo import SCRIPT, SUITE
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.standins.model_server import ScriptedModel, create_app
from threadcase.standins.script import load_script


@contextlib.contextmanager
def scripted_model() -> Iterator[tuple[ScriptedModel, str]]:
    """The suite's scripted model on loopback: (the model, its URL without ``/v1``)."""
    scripted = ScriptedModel(load_script(SCRIPT))
    with serve_in_thread(create_app(scripted)) as url:
        yield scripted, url


@contextlib.contextmanager
def agent_n8n(model_url: str, env: Mapping[str, str] | None = None) -> Iterator[LocalN8n]:
    """An n8n of its own whose agent (and mocked execution) uses the model at ``model_url``, with the
    sandbox stand-in; skipped when n8n is not installed, a failure when it is and does not start."""
    if not installed():
        pytest.skip("n8n is not installed: scripts/n8n-local install")
    with started_n8n(env, "--sandbox", "--model-url", f"{model_url}/v1") as n8n:
        yield n8n


async def run_suite(
    n8n: LocalN8n, model_url: str, out: Path, *args: str, exit_code: int = 0, seconds: float = 240
) -> tuple[str, str]:
    """Run the suite (``args``: e.g. ``--filter``) with the scripted model as verifier; (stdout, stderr).

    Fails the test unless the run exits with ``exit_code`` (0: every case green) without a traceback.
    """
    env = {
        **os.environ,
        "THREADCASE_BASE_URL": n8n.base_url,
        "THREADCASE_EMAIL": n8n.email,
        "THREADCASE_PASSWORD": n8n.password,
        "OPENAI_BASE_URL": f"{model_url}/v1",
        "OPENAI_API_KEY": "sk-threadcase-scripted",
    }
    for name in ("THREADCASE_PROXY_MODEL", "THREADCASE_JUDGE_MODEL"):
        env.pop(name, None)
    command = [
        sys.executable, "-c", "from threadcase.cli import main; main()", "run",
        "--suite", str(SUITE), "--verifier-model", "scripted", "--output-dir", str(out),
        "--timeout-seconds", "120", "--inactivity-seconds", "60", *args,
    ]  # fmt: skip
    with anyio.fail_after(seconds):
        done = await anyio.run_process(command, env=env, check=False)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == exit_code, f"exit {done.returncode}\n{stdout[-4000:]}\n{stderr[-3000:]}"
    assert "Traceback" not in stderr
    return stdout, stderr
