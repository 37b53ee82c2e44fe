"""``threadcase run`` against the real n8n 2.41 with no model configured, as a user would start it.

The golden suite's seeded cases: every seed restores, nothing is left behind (threads, workflows,
tables, folders, agents, credentials, projects all back to their counts), and since n8n refuses every
chat for want of a model, every case is not judged with n8n's own reason, attributed to the framework,
exit 3 — never a failure against the builder.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.n8n.conftest import inventory
from tests.n8n.local import LocalN8n
from threadcase.case import schema
from threadcase.case.loader import load_suite
from threadcase.instance import InstanceClient

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"
SEEDED = sorted(loaded.slug for loaded in load_suite([GOLDEN]) if isinstance(loaded.case.seed, schema.InlineSeed))
NO_MODEL = "no model configured"


async def test_threadcase_run_on_n8n_without_a_model_judges_nothing_and_leaves_nothing(
    n8n: LocalN8n, client: InstanceClient, no_model: None, tmp_path: Path
) -> None:
    before = await inventory(client)
    out = tmp_path / "results"
    env = {
        **os.environ,
        "THREADCASE_BASE_URL": n8n.base_url,
        "THREADCASE_EMAIL": n8n.email,
        "THREADCASE_PASSWORD": n8n.password,  # through the environment: never on a command line
    }
    for name in ("THREADCASE_PROXY_MODEL", "THREADCASE_JUDGE_MODEL", "OPENAI_API_KEY"):
        env.pop(name, None)
    command = [
        sys.executable,
        "-c",
        "from threadcase.cli import main; main()",
        "run",
        "--suite",
        str(GOLDEN),
        "--filter",
        ",".join(SEEDED),
        "--output-dir",
        str(out),
        "--timeout-seconds",
        "120",
        "--inactivity-seconds",
        "60",
    ]
    with anyio.fail_after(240):
        done = await anyio.run_process(command, env=env, check=False)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 3, f"exit {done.returncode}\n{stdout[-3000:]}\n{stderr[-3000:]}"
    assert "Traceback" not in stderr
    assert n8n.password not in stdout + stderr

    results = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines() if line.strip()]
    assert sorted(r["case_slug"] for r in results) == SEEDED
    for result in results:
        slug = result["case_slug"]
        assert result["error"] is None, (slug, result["error"])
        record = result["record"]
        assert record["seed"]["restored"], (slug, record["seed"]["error"])
        assert NO_MODEL in (record["model_failure"] or ""), slug
        assert [t["role"] for t in record["turns"] if not t["seeded"]] == ["user"], slug  # nothing more was sent
        assert result["verdicts"], slug
        for verdict in result["verdicts"]:
            assert (verdict["status"], verdict["attribution"]) == ("not_judged", "framework_issue"), (slug, verdict)
            assert NO_MODEL in verdict["reason"], (slug, verdict["reason"])
    assert await inventory(client) == before
