"""``threadcase fake-model check|serve``: output, exit codes, one-line errors, the key never printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from threadcase.cli import main

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "docs" / "examples" / "smoke.script.json"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_lists_the_rules_in_the_order_they_are_tried(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["fake-model", "check", "--script", str(SMOKE)], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"{SMOKE}: 5 rules, models scripted",
        "  ask-what-to-check: agent=orchestrator after=user -> text+call ask-user",
        "  build-after-the-answer: agent=orchestrator after=ask-user -> call build-workflow",
        "  report-the-build: agent=orchestrator after=build-workflow -> text",
        "  report-a-failed-build: agent=orchestrator after=build-workflow -> text",
        "  greet: agent=orchestrator after=user -> text",
    ]


def test_a_broken_script_is_one_line_per_problem_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rules": [{"id": "x", "when": {"after": 3}, "reply": {}}]}))
    for command in ("check", "serve"):
        code, out, err = run(["fake-model", command, "--script", str(bad)], capsys)
        assert (code, out) == (2, "")
        assert err.splitlines() == [
            f"threadcase: {bad}: rules[0].when.after: Input should be a valid string (got 3)",
            f"{bad}: rules[0].reply: a reply needs exactly one of text and/or toolCalls, json, error (got none)",
        ]


def test_serve_prints_where_n8n_should_point_and_answers(tmp_path: Path) -> None:
    env = {**os.environ, "THREADCASE_FAKE_MODEL_API_KEY": "sk-never-printed"}
    entry = "import sys; from threadcase.cli import main; sys.exit(main())"
    command = [sys.executable, "-c", entry, "fake-model", "serve", "--script", str(SMOKE), "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            lines = [process.stdout.readline() for _ in range(4)]
            url = lines[0].split(" at ", 1)[1].split(" ", 1)[0]
            assert url.startswith("http://127.0.0.1:")
            assert url.endswith("/v1")
            assert lines[1].strip() == f"n8n: N8N_INSTANCE_AI_MODEL=custom/scripted N8N_INSTANCE_AI_MODEL_URL={url}"
            headers = {"Authorization": "Bearer sk-never-printed"}
            assert httpx.get(f"{url}/models", headers=headers).json()["data"][0]["id"] == "scripted"
            assert httpx.get(f"{url}/models").status_code == 401
        finally:
            process.terminate()
            rest, _ = process.communicate(timeout=10)
    assert "sk-never-printed" not in "".join(lines) + rest
