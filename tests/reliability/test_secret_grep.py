"""The secret grep: a run with every kind of secret configured — instance password, URL userinfo, model
API key, model endpoint userinfo, ``EVAL_*`` tokens, LangSmith keys — against a model endpoint whose
error bodies echo the request's headers and key. No secret appears in any output: stdout, stderr, the
journal, summary.json, junit.xml, report.html.

Regression: a model error body echoing ``'authorization': 'Bearer sk-…'`` landed in the journal and
report.html (31 times in one run); a password in the ``--base-url`` userinfo was written to the
journal, summary.json and report.html.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench.reliability import echoing_model
from pydantic import SecretStr

from tests.reliability.instances import Trouble, troubled_demo
from tests.runner.test_run_demo import GOLDEN
from threadcase.demo_instance import DemoSettings
from threadcase.demo_instance.serve import serve_in_thread

THREADCASE = Path(sys.executable).parent / "threadcase"

SECRETS = {
    "instance password": "instance-pw-unshaped-66",
    "url userinfo password": "lane-url-pw-44",
    "model key": "model-key-unshaped-88",
    "model url password": "model-url-pw-99",
    "slack token": "slack-tok-not-shaped-77",
    "notion token": "notion-tok-not-shaped-33",
    "langsmith key": "ls-key-unshaped-55",
}


@pytest.mark.slow
def test_no_secret_reaches_any_output(tmp_path: Path) -> None:
    demo = DemoSettings(password=SecretStr(SECRETS["instance password"]))
    out = tmp_path / "out"
    # A gateway in front of the instance echoes the first credential request, headers and body (the
    # session cookie, the basic auth of the URL's userinfo, the EVAL token), in its error.
    gateway = Trouble(echo=[("POST", "/rest/credentials")])
    troubled = troubled_demo(tmp_path / "demo.sqlite", gateway, password=demo.password)
    with troubled as url, serve_in_thread(echoing_model()) as model_url:
        lane = url.replace("http://", f"http://lane:{SECRETS['url userinfo password']}@")
        model = model_url.replace("http://", f"http://modeluser:{SECRETS['model url password']}@") + "/v1"
        env = {
            **os.environ,
            "THREADCASE_EMAIL": demo.email,
            "THREADCASE_PASSWORD": SECRETS["instance password"],
            "OPENAI_API_KEY": SECRETS["model key"],
            "OPENAI_BASE_URL": model,
            "THREADCASE_JUDGE_MODEL": "judge-echo",
            "THREADCASE_PROXY_MODEL": "proxy-echo",
            "THREADCASE_DEBUG": "1",
            "EVAL_SLACK_ACCESS_TOKEN": SECRETS["slack token"],
            "EVAL_NOTION_TOKEN": SECRETS["notion token"],
            "LANGSMITH_API_KEY": SECRETS["langsmith key"],
        }
        proc = subprocess.run(
            [
                str(THREADCASE),
                "run",
                "--suite",
                str(GOLDEN),
                "--filter",
                "build-single-prompt-slack,credentials-engaged-two-existing",
                "--base-url",
                lane,
                "--skip-calibration",
                "--no-progress",
                "--output-dir",
                str(out),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode in (0, 1, 3), proc.stderr
    assert "Traceback" not in proc.stderr
    outputs = {"stdout": proc.stdout, "stderr": proc.stderr}
    for name in ("journal.jsonl", "summary.json", "junit.xml", "report.html"):
        outputs[name] = (out / name).read_text(encoding="utf-8")
    journal = outputs["journal.jsonl"]
    assert gateway.echoed == 1
    assert "rejected by the gateway" in journal, "the echoing error never reached the outputs: nothing tested"
    assert "[redacted]" in journal
    found = [
        f"{what} in {where}" for where, text in outputs.items() for what, value in SECRETS.items() if value in text
    ]
    assert found == []
    assert "lane:" not in outputs["summary.json"]  # URLs are stored without userinfo
