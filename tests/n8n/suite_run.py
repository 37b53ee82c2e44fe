"""``threadcase run`` on the n8n suite against a local n8n, started as a user would start it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from tests.n8n.local import LocalN8n
from tests.runner.test_n8n_suite_on_demo import SUITE


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
